package lab

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/train"
)

// TestFinetuneRunAndExport runs a short training-lab run for each task, checks that the body
// it started from is untouched, and that the exported folder predicts as the trained model.
func TestFinetuneRunAndExport(t *testing.T) {
	for _, task := range []string{engine.TaskSentiment, engine.TaskPOS} {
		t.Run(task, func(t *testing.T) {
			f := loadFixture(t)
			before := slices.Clone(f.Model.Params()[0].T.Data)
			ft, err := NewFinetune(f.Model, f.Tokenizer, engine.FinetuneRequest{Task: task, Epochs: 2, LR: 1e-3, BatchSize: 8, Seed: 1, MaxLen: 48, MaxTrain: 16})
			if err != nil {
				t.Fatal(err)
			}
			if ft.Info().TotalSteps != 4 || ft.Info().StepsPerEpoch != 2 || len(ft.Info().Labels) < 2 {
				t.Fatalf("info %+v", ft.Info())
			}
			var steps, evals, done int
			for i := 0; !ft.Done(); i++ {
				if i > 20 {
					t.Fatal("the run does not end")
				}
				evs, err := ft.Advance(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					switch ev.Kind {
					case train.EventStep:
						steps++
						if math.IsNaN(ev.Loss) || ev.Loss <= 0 {
							t.Errorf("step %d: loss %v", ev.Step, ev.Loss)
						}
					case train.EventEval:
						evals++
						if _, ok := ev.Metrics[ft.Info().MainMetric]; !ok {
							t.Errorf("eval without %s: %v", ft.Info().MainMetric, ev.Metrics)
						}
					case train.EventDone:
						done++
					}
				}
			}
			if steps != 4 || evals != 2 || done != 1 {
				t.Fatalf("%d steps, %d evaluations, %d ends; want 4, 2, 1", steps, evals, done)
			}
			if !slices.Equal(before, f.Model.Params()[0].T.Data) {
				t.Fatal("training changed the model it started from")
			}
			text := "the film is a refreshingly serious look at young women ."
			want, err := PredictTask(ft.Tuner.Model, ft.Tok, text, ft.MaxLen)
			if err != nil {
				t.Fatal(err)
			}
			if task == engine.TaskSentiment && (len(want.Probs) != len(ft.Info().Labels) || want.Label == "") {
				t.Fatalf("prediction %+v", want)
			}
			if task == engine.TaskPOS && (len(want.Tags) != len(want.Words) || len(want.Words) != 11) {
				t.Fatalf("prediction %+v", want)
			}

			// The archive unpacks into an HF folder that loads as the same model.
			b, err := TaskFolderZip(ft.Tuner.Model, ft.Tok, "bertlab-"+task)
			if err != nil {
				t.Fatal(err)
			}
			z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for _, zf := range z.File {
				r, err := zf.Open()
				if err != nil {
					t.Fatal(err)
				}
				data, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(zf.Name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, zf.Name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tf, err := hf.LoadTaskFolder(filepath.Join(dir, "bertlab-"+task), ft.Tuner.Model.Task, hf.TaskLoadOptions{RequireHead: true})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tf.Model.Labels, ft.Info().Labels) {
				t.Fatalf("id2label %v, want %v", tf.Model.Labels, ft.Info().Labels)
			}
			got, err := PredictTask(tf.Model, tf.Tokenizer, text, ft.MaxLen)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Probs, want.Probs) || !slices.Equal(got.Tags, want.Tags) || !slices.Equal(got.TagP, want.TagP) {
				t.Fatalf("the exported folder predicts %+v, the trained model %+v", got, want)
			}
		})
	}
}

// TestFinetuneStop ends a run after its first step: the run is done and Advance does nothing.
func TestFinetuneStop(t *testing.T) {
	f := loadFixture(t)
	ft, err := NewFinetune(f.Model, f.Tokenizer, engine.FinetuneRequest{Task: engine.TaskSentiment, Epochs: 1, LR: 1e-3, BatchSize: 4, Seed: 2, MaxLen: 32, MaxTrain: 12})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ft.Advance(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := ft.Stop()
	if !ft.Done() || ev.Kind != train.EventDone || ev.Step != 1 || ev.TotalSteps != 3 {
		t.Fatalf("after Stop: done %v, event %+v", ft.Done(), ev)
	}
	if evs, err := ft.Advance(context.Background()); err != nil || len(evs) != 0 {
		t.Fatalf("Advance after Stop: %v %v", evs, err)
	}
	for _, bad := range []engine.FinetuneRequest{{Task: "qa", Epochs: 1, LR: 1e-3, BatchSize: 4}, {Task: engine.TaskPOS, Epochs: 0, LR: 1e-3, BatchSize: 4}, {Task: engine.TaskPOS, Epochs: 1, LR: 2, BatchSize: 4}} {
		if _, err := NewFinetune(f.Model, f.Tokenizer, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestCopyWithHeadEqualsFolderRoundTrip: the task model copyWithHead makes is, weight for
// weight and bit for bit, the one a folder of body loaded with the task's head gives (what it
// did before, through safetensors in memory), for each task; and it shares no memory with body.
func TestCopyWithHeadEqualsFolderRoundTrip(t *testing.T) {
	f := loadFixture(t)
	body := f.Model
	var ts []hf.Tensor
	for _, p := range body.Params() {
		ts = append(ts, hf.Tensor{Name: p.Name, Shape: p.T.Shape, Data: p.T.Data})
	}
	var buf bytes.Buffer
	if err := hf.Encode(&buf, ts, hf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		task   bert.Task
		labels []string
	}{{bert.SequenceClassification, []string{"neg", "pos"}}, {bert.TokenClassification, []string{"ADJ", "NOUN", "VERB"}}, {bert.QuestionAnswering, nil}} {
		want, _, err := hf.LoadTaskModelReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), hf.WeightsFile, body.Config, tc.task,
			hf.TaskLoadOptions{Labels: tc.labels, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		got, err := copyWithHead(body, tc.task, tc.labels, 7)
		if err != nil {
			t.Fatal(err)
		}
		wp, gp := want.Params(), got.Params()
		if len(wp) != len(gp) || !slices.Equal(want.Labels, got.Labels) {
			t.Fatalf("%s: %d parameters, labels %q; want %d, %q", tc.task, len(gp), got.Labels, len(wp), want.Labels)
		}
		for i := range wp {
			if wp[i].Name != gp[i].Name || !slices.Equal(wp[i].T.Shape, gp[i].T.Shape) {
				t.Fatalf("%s: parameter %d is %s %v, want %s %v", tc.task, i, gp[i].Name, gp[i].T.Shape, wp[i].Name, wp[i].T.Shape)
			}
			for j, v := range wp[i].T.Data {
				if math.Float32bits(gp[i].T.Data[j]) != math.Float32bits(v) {
					t.Fatalf("%s: %s[%d] = %v, want %v", tc.task, gp[i].Name, j, gp[i].T.Data[j], v)
				}
			}
		}
		// No memory shared with body: writing the copy leaves body as it was.
		old := body.Params()[0].T.Data[0]
		got.Bert.Params()[0].T.Data[0] = old + 1
		if body.Params()[0].T.Data[0] != old {
			t.Fatalf("%s: the copy shares its weights with body", tc.task)
		}
	}
}
