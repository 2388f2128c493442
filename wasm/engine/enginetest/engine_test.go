//go:build !js

package enginetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/pipeline"
)

const fixture = "../../../core/bert/testdata/bert-tiny-random"

func TestEngineInNodeMatchesNative(t *testing.T) {
	node, wasm, wasmExec := buildEngine(t)
	text := "no [MASK] happiness [MASK] sound"
	out, err := exec.Command(node, "run_engine.mjs", wasmExec, wasm, fixture, text).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 12 {
		t.Fatalf("want 12 lines from the engine, got:\n%s", out)
	}

	f, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pipeline.FillMask(f.Model, f.Tokenizer, text, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	var got pipeline.FillMaskResult
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("%v: %s", err, lines[0])
	}
	if len(got.Masks) != len(want.Masks) {
		t.Fatalf("wasm found %d masks, native %d", len(got.Masks), len(want.Masks))
	}
	for i := range want.Masks {
		g, w := got.Masks[i], want.Masks[i]
		if g.Position != w.Position || len(g.Predictions) != len(w.Predictions) {
			t.Fatalf("mask %d: wasm %+v, native %+v", i, g, w)
		}
		for j := range w.Predictions {
			gp, wp := g.Predictions[j], w.Predictions[j]
			// The browser runs the pure-Go kernels, natively FMA assembly: float32 rounding differs.
			if gp.ID != wp.ID || gp.Token != wp.Token || abs(gp.Score-wp.Score) > 1e-5 {
				t.Errorf("mask %d prediction %d: wasm %+v, native %+v", i, j, gp, wp)
			}
		}
	}
	var tok struct {
		IDs []int `json:"input_ids"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &tok); err != nil || len(tok.IDs) == 0 {
		t.Errorf("tokenize answer %q: %v", lines[1], err)
	}
	if !strings.Contains(lines[2], `"error"`) || !strings.Contains(lines[2], "[MASK]") {
		t.Errorf("fillMask without a mask should answer an error naming [MASK], got %s", lines[2])
	}

	// The walk through layer 1 for token 2: the same numbers as natively, up to float32 rounding.
	var steps pipeline.StepsResult
	if err := json.Unmarshal([]byte(lines[3]), &steps); err != nil {
		t.Fatalf("steps: %v: %.200s", err, lines[3])
	}
	wantSteps, err := pipeline.Steps(f.Model, f.Tokenizer, text, nil, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps.Steps) != len(wantSteps.Steps) {
		t.Fatalf("steps: wasm %d steps, native %d", len(steps.Steps), len(wantSteps.Steps))
	}
	for i, ws := range wantSteps.Steps {
		gs := steps.Steps[i]
		if gs.ID != ws.ID || len(gs.Vectors) != len(ws.Vectors) {
			t.Fatalf("step %d: wasm %s with %d vectors, native %s with %d", i, gs.ID, len(gs.Vectors), ws.ID, len(ws.Vectors))
		}
		for k, wv := range ws.Vectors {
			gv := gs.Vectors[k]
			for j := range wv.Values {
				if d := float64(gv.Values[j] - wv.Values[j]); abs(d) > 1e-4*(1+abs(float64(wv.Values[j]))) {
					t.Fatalf("step %s, %s[%d]: wasm %g, native %g", ws.ID, wv.Name, j, gv.Values[j], wv.Values[j])
				}
			}
		}
	}

	// Masking draws the same positions with the same seed.
	var masked engine.MaskLabResult
	if err := json.Unmarshal([]byte(lines[4]), &masked); err != nil {
		t.Fatalf("maskLab: %v: %s", err, lines[4])
	}
	wantLab, err := lab.MaskLab(f.Tokenizer, text, f.Model.Config.MaxPositionEmbeddings, 42, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(masked.Shown, " ") != strings.Join(wantLab.Shown, " ") || strings.Join(masked.Kinds, ",") != strings.Join(wantLab.Kinds, ",") {
		t.Errorf("maskLab: wasm %v %v, native %v %v", masked.Shown, masked.Kinds, wantLab.Shown, wantLab.Kinds)
	}
	var nsp struct {
		Pairs []engine.NSPPair `json:"pairs"`
	}
	if err := json.Unmarshal([]byte(lines[5]), &nsp); err != nil || len(nsp.Pairs) != 4 {
		t.Fatalf("nspPairs: %v: %.300s", err, lines[5])
	}
	wantNSP, err := lab.NSPPairs(f.Tokenizer, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range wantNSP {
		if g := nsp.Pairs[i]; strings.Join(g.Tokens, " ") != strings.Join(w.Tokens, " ") || g.IsNext != w.IsNext {
			t.Errorf("nsp pair %d: wasm %v, native %v", i, g, w)
		}
	}

	// A bad argument to load comes back as an error naming it, and the engine still answers
	// with the model it had: the same predictions as before.
	if !strings.Contains(lines[6], `"error":"load: config must be a string or a Uint8Array, not a number"`) {
		t.Errorf("load({config: 5}) should answer an error naming config, got %s", lines[6])
	}
	if lines[7] != lines[0] {
		t.Errorf("fillMask after the panic: %.200s, before it: %.200s", lines[7], lines[0])
	}

	// The explanation answers are the native engine's, up to float32 rounding.
	eng, err := engine.New("tiny", f.Model, f.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	wantIG, err := eng.Attributions(explain.Request{Text: text, Method: explain.MethodIG, Steps: 8})
	if err != nil {
		t.Fatal(err)
	}
	var ig explain.Report
	if err := json.Unmarshal([]byte(lines[8]), &ig); err != nil || ig.Attribution == nil {
		t.Fatalf("explain attributions: %v: %.300s", err, lines[8])
	}
	if ig.Target.Index != wantIG.Target.Index || ig.Attribution.Steps != 8 || len(ig.Attribution.Scores) != len(wantIG.Attribution.Scores) {
		t.Fatalf("explain attributions: wasm %+v for %+v, native %+v for %+v", ig.Attribution, ig.Target, wantIG.Attribution, wantIG.Target)
	}
	for i, w := range wantIG.Attribution.Scores {
		if abs(ig.Attribution.Scores[i]-w) > 1e-4+1e-3*abs(w) {
			t.Errorf("attribution %d: wasm %g, native %g", i, ig.Attribution.Scores[i], w)
		}
	}
	wantN, err := eng.Neuron(engine.NeuronRequest{Text: text, Layer: 1, Head: 2, Query: 3})
	if err != nil {
		t.Fatal(err)
	}
	var n explain.Neuron
	if err := json.Unmarshal([]byte(lines[9]), &n); err != nil || len(n.Probs) != len(wantN.Probs) {
		t.Fatalf("explain neuron: %v: %.300s", err, lines[9])
	}
	for j, w := range wantN.Probs {
		if abs(n.Probs[j]-w) > 1e-5 {
			t.Errorf("neuron row %d: wasm %g, native %g", j, n.Probs[j], w)
		}
	}
	if !strings.Contains(lines[10], `"error":"explain: kind \"lime\"`) {
		t.Errorf("an unknown kind: %s", lines[10])
	}
	if !strings.Contains(lines[11], `"error":"explain lens:`) {
		t.Errorf("a request that is not JSON: %s", lines[11])
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// buildEngine builds the page's module (wasm/app, whose engine role starts in Node, where
// there is no document) for GOOS=js into the test's temporary folder and returns the paths of
// node, that wasm and Go's wasm_exec.js.
func buildEngine(t *testing.T) (node, wasm, wasmExec string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed to run the WebAssembly engine (apt-get install -y nodejs)")
	}
	wasm = filepath.Join(t.TempDir(), "app.wasm")
	build := exec.Command("go", "build", "-o", wasm, "../../app")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the engine: %v\n%s", err, out)
	}
	return node, wasm, filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js")
}

// TestEngineInNodeShards hands the engine the fixture saved in shards (the index and the
// shards, as the page's worker hands a sharded model folder) and checks that every answer is
// the same as from the one-file folder.
func TestEngineInNodeShards(t *testing.T) {
	node, wasm, wasmExec := buildEngine(t)
	f, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	total := 4 * f.Model.NumParams() // bytes of F32 weights
	if err := hf.SaveFolder(dir, f.Model, f.Tokenizer, hf.SaveOptions{MaxShardSize: total / 3}); err != nil {
		t.Fatal(err)
	}
	if files, err := hf.WeightsFiles(os.DirFS(dir), dir); err != nil || len(files) < 3 {
		t.Fatalf("the sharded folder's weights are %v (%v), want the index and at least 2 shards", files, err)
	}
	text := "no [MASK] happiness [MASK] sound"
	run := func(folder string) string {
		out, err := exec.Command(node, "run_engine.mjs", wasmExec, wasm, folder, text).CombinedOutput()
		if err != nil {
			t.Fatalf("node, %s: %v\n%s", folder, err, out)
		}
		return string(out)
	}
	one, sharded := run(fixture), run(dir)
	if sharded != one {
		t.Errorf("the sharded folder's answers differ from the one file's:\n%s\nwant\n%s", sharded, one)
	}
}
