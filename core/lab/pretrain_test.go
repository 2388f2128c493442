package lab

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/train"
)

// mlmText is the fixed small corpus of the tests: the first 60 sentences of the sample, as a
// user would paste them (two documents).
func mlmText(t *testing.T) string {
	t.Helper()
	s, err := SampleSentences()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(s[:30], "\n") + "\n\n" + strings.Join(s[30:60], "\n")
}

// runAll advances f to its end and returns its step losses and evaluations.
func runAll(t *testing.T, f engine.Run) (losses []float64, evals []train.Event, done int) {
	t.Helper()
	for i := 0; !f.Done(); i++ {
		if i > 10*f.Info().TotalSteps+10 {
			t.Fatal("the run does not end")
		}
		evs, err := f.Advance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			switch ev.Kind {
			case train.EventStep:
				losses = append(losses, ev.Loss)
			case train.EventEval:
				evals = append(evals, ev)
			case train.EventDone:
				done++
			}
		}
	}
	return losses, evals, done
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// TestPretrainRunAndExport pre-trains a tiny MLM from scratch on a fixed small text: with a
// fixed seed the run is deterministic, its loss falls below that of a uniform guess, it is
// evaluated before the first step, every EvalEvery steps and at the end, and the exported
// BertForMaskedLM folder loads with hf.LoadFolder and fills masks exactly as the
// model in memory.
func TestPretrainRunAndExport(t *testing.T) {
	req := engine.FinetuneRequest{Task: engine.TaskMLM, Steps: 40, LR: 5e-3, BatchSize: 8, Seed: 1, VocabSize: 300, Text: mlmText(t)}
	f, err := NewPretrain(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	mi := f.Info().MLM
	if mi == nil || f.Info().TotalSteps != 40 || mi.Layers != 2 || mi.Hidden != 64 || mi.Heads != 2 || mi.Vocab != engine.VocabCorpus ||
		mi.Corpus != "text" || mi.Documents != 2 || mi.Sentences != 60 || mi.VocabSize != f.Tok.Vocab().Len() || len(mi.Tokens) != mi.VocabSize {
		t.Fatalf("info %+v, mlm %+v", f.Info(), mi)
	}
	if mi.VocabSize < 200 || mi.VocabSize > 300 || mi.Tokens[0] != "[PAD]" || mi.Tokens[4] != "[MASK]" {
		t.Errorf("corpus vocabulary of %d tokens, first %q", mi.VocabSize, mi.Tokens[:5])
	}
	if f.Pre.Model.Pooler != nil || f.Pre.Model.NSP != nil || f.Pre.Model.MLM == nil || f.Pre.Model.NumParams() != mi.Parameters {
		t.Errorf("want a BertForMaskedLM of %d parameters: heads %v", mi.Parameters, f.Pre.Model.HeadNames())
	}
	if !mi.HeldOut || f.Info().Test == 0 || f.Info().Train == 0 || mi.EvalEvery != 4 {
		t.Errorf("held out %v: %d training, %d evaluation instances, evaluated every %d steps", mi.HeldOut, f.Info().Train, f.Info().Test, mi.EvalEvery)
	}

	losses, evals, done := runAll(t, f)
	if len(losses) != 40 || done != 1 || len(evals) != 11 {
		t.Fatalf("%d steps, %d evaluations, %d ends; want 40, 11, 1", len(losses), len(evals), done)
	}
	for i, ev := range evals {
		if ev.Step != 4*i {
			t.Errorf("evaluation %d after step %d, want %d", i, ev.Step, 4*i)
		}
		if _, ok := ev.Metrics["mlm_accuracy"]; !ok {
			t.Errorf("evaluation %d: %v", i, ev.Metrics)
		}
	}
	first, last := mean(losses[:5]), mean(losses[len(losses)-5:])
	uniform := math.Log(float64(mi.VocabSize))
	t.Logf("loss: first 5 steps %.4f, last 5 %.4f (ln V = %.4f); held-out accuracy %.3f -> %.3f",
		first, last, uniform, evals[0].Metrics["mlm_accuracy"], evals[len(evals)-1].Metrics["mlm_accuracy"])
	if !(last < first) || !(last < uniform) {
		t.Errorf("the loss did not fall: first 5 steps %.4f, last 5 %.4f, ln V %.4f", first, last, uniform)
	}
	if l0, l1 := evals[0].Metrics["mlm_loss"], evals[len(evals)-1].Metrics["mlm_loss"]; !(l1 < l0) || !(l0 > uniform-0.2) {
		t.Errorf("held-out loss %.4f before training, %.4f after (ln V %.4f)", l0, l1, uniform)
	}

	// The same seed gives the same run.
	g, err := NewPretrain(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		evs, err := g.Advance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && evs[0].Loss != losses[i-1] {
			t.Errorf("step %d: loss %v, the first run %v", i, evs[0].Loss, losses[i-1])
		}
	}

	// Try it, and the export.
	text := "she went to [MASK] and found it quite as [MASK] when she awoke."
	want, err := f.Predict(text)
	if err != nil {
		t.Fatal(err)
	}
	if want.Task != engine.TaskMLM || want.Fill == nil || len(want.Fill.Masks) != 2 || len(want.Fill.Masks[0].Predictions) != 5 {
		t.Fatalf("prediction %+v", want)
	}
	name, b, err := f.Export()
	if err != nil {
		t.Fatal(err)
	}
	if name != "bertlab-mlm.zip" {
		t.Errorf("archive %q", name)
	}
	dir := unzipTo(t, b)
	folder := filepath.Join(dir, "bertlab-mlm")
	var cfg struct {
		Arch []string `json:"architectures"`
	}
	cj, err := os.ReadFile(filepath.Join(folder, hf.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cj, &cfg); err != nil || len(cfg.Arch) != 1 || cfg.Arch[0] != "BertForMaskedLM" {
		t.Errorf("config.json architectures %v (%v)", cfg.Arch, err)
	}
	sf, err := hf.Open(filepath.Join(folder, hf.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	names := sf.Names()
	sf.Close()
	for _, n := range names {
		if !strings.HasPrefix(n, "bert.") && !strings.HasPrefix(n, "cls.predictions.") || strings.Contains(n, "pooler") {
			t.Errorf("tensor %q: a BertForMaskedLM has bert.* and cls.predictions.* only", n)
		}
	}
	for _, n := range []string{"bert.embeddings.word_embeddings.weight", "cls.predictions.bias", "cls.predictions.transform.dense.weight", "bert.encoder.layer.1.output.LayerNorm.weight"} {
		if !strings.Contains(strings.Join(names, " "), n) {
			t.Errorf("the weights lack %s", n)
		}
	}
	loaded, err := hf.LoadFolder(folder)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Tokenizer == nil || loaded.Tokenizer.Vocab().Len() != mi.VocabSize {
		t.Fatalf("the folder's tokenizer: %v", loaded.Tokenizer)
	}
	got, err := pipeline.FillMask(loaded.Model, loaded.Tokenizer, text, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range want.Fill.Masks {
		for j, p := range m.Predictions {
			q := got.Masks[i].Predictions[j]
			if q.ID != p.ID || q.Token != p.Token || math.Abs(q.Score-p.Score) > 1e-6 {
				t.Errorf("mask %d, prediction %d: from the folder %+v, in memory %+v", i, j, q, p)
			}
		}
	}
	t.Logf("predictions for the first mask: %+v", want.Fill.Masks[0].Predictions)
}

func unzipTo(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, zf := range zr.File {
		r, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, filepath.FromSlash(zf.Name))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPretrainSampleAndModelVocab starts runs on the sample corpus: with a vocabulary of its
// own, and with the loaded model's (which must then exist); Stop ends a run where it is.
func TestPretrainSampleAndModelVocab(t *testing.T) {
	fx := loadFixture(t)
	f, err := NewPretrain(fx.Tokenizer, engine.FinetuneRequest{Task: engine.TaskMLM, Epochs: 1, LR: 1e-3, BatchSize: 16, Seed: 2, Vocab: engine.VocabModel, Hidden: 32, Heads: 4, Layers: 1})
	if err != nil {
		t.Fatal(err)
	}
	mi := f.Info().MLM
	if mi.Corpus != "sample" || mi.Vocab != engine.VocabModel || mi.VocabSize != fx.Tokenizer.Vocab().Len() || f.Tok != fx.Tokenizer ||
		f.Info().TotalSteps != f.Info().StepsPerEpoch || f.Info().Train < 50 || mi.Layers != 1 || mi.Heads != 4 {
		t.Fatalf("info %+v, mlm %+v", f.Info(), mi)
	}
	for range 2 { // the evaluation before the first step, then a step
		if _, err := f.Advance(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ev := f.Stop()
	if !f.Done() || ev.Kind != train.EventDone || ev.Step != 1 || ev.Metrics["mlm_accuracy"] < 0 {
		t.Errorf("stop: done %v, event %+v", f.Done(), ev)
	}
	if _, err := NewPretrain(nil, engine.FinetuneRequest{Task: engine.TaskMLM, Epochs: 1, LR: 1e-3, BatchSize: 16, Vocab: engine.VocabModel}); err == nil {
		t.Error("the model's vocabulary without a model: no error")
	}

	g, err := NewPretrain(nil, engine.FinetuneRequest{Task: engine.TaskMLM, Steps: 3, LR: 1e-3, BatchSize: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g.Info().MLM.Corpus != "sample" || g.Info().MLM.VocabSize != MLMDefaultVocab {
		t.Errorf("the sample corpus with its own vocabulary: %+v", g.Info().MLM)
	}
}

// TestPretrainBadRequests: settings out of range are errors that say what is wrong.
func TestPretrainBadRequests(t *testing.T) {
	ok := engine.FinetuneRequest{Task: engine.TaskMLM, Steps: 10, LR: 1e-3, BatchSize: 8, Text: "a b c\nd e f"}
	for _, c := range []struct {
		name string
		edit func(*engine.FinetuneRequest)
		want string
	}{
		{"too many steps", func(r *engine.FinetuneRequest) { r.Steps = MLMMaxSteps + 1 }, "steps"},
		{"no steps nor epochs", func(r *engine.FinetuneRequest) { r.Steps = 0 }, "epochs"},
		{"batch", func(r *engine.FinetuneRequest) { r.BatchSize = 0 }, "batch size"},
		{"learning rate", func(r *engine.FinetuneRequest) { r.LR = 2 }, "learning rate"},
		{"heads", func(r *engine.FinetuneRequest) { r.Hidden, r.Heads = 64, 3 }, "heads"},
		{"hidden", func(r *engine.FinetuneRequest) { r.Hidden = 4096 }, "hidden size"},
		{"layers", func(r *engine.FinetuneRequest) { r.Layers = 40 }, "layers"},
		{"vocabulary", func(r *engine.FinetuneRequest) { r.Vocab = "mine" }, "unknown vocabulary"},
		{"vocabulary size", func(r *engine.FinetuneRequest) { r.VocabSize = 5 }, "vocabulary size"},
		{"blank text", func(r *engine.FinetuneRequest) { r.Text = " \n\n " }, ""},
		{"text too long", func(r *engine.FinetuneRequest) { r.Text = strings.Repeat("a", MLMMaxText+1) }, "bytes"},
	} {
		r := ok
		c.edit(&r)
		_, err := NewPretrain(nil, r)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v (blank text trains on the sample)", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one about %q", c.name, err, c.want)
		}
	}
	if _, err := NewPretrain(nil, ok); err != nil {
		t.Errorf("a two-line text: %v", err)
	}
}
