//go:build !js

package enginetest

import (
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/train"
)

// TestTrainingInNodeMatchesNative runs a short training-lab run in the engine wasm under Node
// and the same run natively: the same steps, losses and prediction.
func TestTrainingInNodeMatchesNative(t *testing.T) {
	node, wasm, wasmExec := buildEngine(t)
	req := engine.FinetuneRequest{Task: engine.TaskPOS, Epochs: 2, LR: 1e-3, BatchSize: 8, Seed: 1, MaxLen: 48, MaxTrain: 16}
	rb, _ := json.Marshal(req)
	text := "The cat sat on the mat ."
	out, err := exec.Command(node, "run_train.mjs", wasmExec, wasm, fixture, string(rb), text).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")

	f, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := lab.NewFinetune(f.Model, f.Tokenizer, req)
	if err != nil {
		t.Fatal(err)
	}
	var info engine.FinetuneInfo
	if err := json.Unmarshal([]byte(lines[0]), &info); err != nil || info.TotalSteps != ft.Info().TotalSteps {
		t.Fatalf("info %s (%v), want %d steps", lines[0], err, ft.Info().TotalSteps)
	}
	i := 1
	for !ft.Done() {
		want, err := ft.Advance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(lines) {
			t.Fatalf("the engine stopped early:\n%s", out)
		}
		var got struct {
			Events []train.Event `json:"events"`
			Done   bool          `json:"done"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("%v: %s", err, lines[i])
		}
		i++
		if len(got.Events) != len(want) || got.Done != ft.Done() {
			t.Fatalf("step %d: engine %s, native %+v", i-1, lines[i-1], want)
		}
		for k := range want {
			g, w := got.Events[k], want[k]
			if g.Kind != w.Kind || g.Step != w.Step || math.Abs(g.Loss-w.Loss) > 1e-4*max(1, math.Abs(w.Loss)) {
				t.Errorf("event: engine %+v, native %+v", g, w)
			}
			for name, v := range w.Metrics {
				if math.Abs(g.Metrics[name]-v) > 1e-6 {
					t.Errorf("%s: engine %v, native %v", name, g.Metrics[name], v)
				}
			}
		}
	}
	var got engine.TaskPrediction
	if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
		t.Fatalf("%v: %s", err, lines[i])
	}
	want, err := lab.PredictTask(ft.Tuner.Model, ft.Tok, text, ft.MaxLen)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Tags, " ") != strings.Join(want.Tags, " ") || len(got.TagP) != len(want.TagP) {
		t.Fatalf("prediction: engine %+v, native %+v", got, want)
	}
	for k := range want.TagP {
		if math.Abs(got.TagP[k]-want.TagP[k]) > 1e-4 {
			t.Errorf("word %d: engine p=%v, native %v", k, got.TagP[k], want.TagP[k])
		}
	}
	var ex struct {
		Name  string `json:"name"`
		Error string `json:"error"`
		Bytes int    `json:"bytes"`
	}
	if err := json.Unmarshal([]byte(lines[i+1]), &ex); err != nil || ex.Name != "bertlab-pos.zip" || ex.Bytes < 1000 || ex.Error != "" {
		t.Fatalf("export: %s (%v)", lines[i+1], err)
	}
}
