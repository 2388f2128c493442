package train

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// toyPretrainer is a small model on the toy corpus: batches of 8 sequences of at most 32 tokens.
func toyPretrainer(t testing.TB, dc DataConfig, c PretrainConfig) *Pretrainer {
	t.Helper()
	tok, docs := toyCorpus(t)
	data, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPretrainer(testModel(t, tok.Vocab().Len(), 1), tok, data, c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPretrainLossFalls trains a small model from random init on a small repetitive corpus: the
// masked-LM loss of the last five steps must average under 55% of that of the first five
// (which start near ln V), within 60 steps. The run is deterministic: a second one starts with
// the same losses.
func TestPretrainLossFalls(t *testing.T) {
	const steps = 60
	c := DefaultPretrain(steps)
	c.BatchSize, c.LR, c.Warmup, c.Seed = 8, 5e-3, 4, 1
	p := toyPretrainer(t, DefaultData(32, 1), c)
	var evs []Event
	if err := p.Run(context.Background(), func(e Event) {
		if e.Kind == EventStep {
			evs = append(evs, e)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(evs) != steps {
		t.Fatalf("%d step events, want %d", len(evs), steps)
	}
	mean := func(es []Event) (mlm, nsp float64) {
		for _, e := range es {
			mlm += e.MLMLoss / float64(len(es))
			nsp += e.NSPLoss / float64(len(es))
		}
		return
	}
	first, nspFirst := mean(evs[:5])
	last, nspLast := mean(evs[steps-5:])
	t.Logf("MLM loss %.3f -> %.3f, NSP loss %.3f -> %.3f, %.0f tokens/s", first, last, nspFirst, nspLast, evs[steps-1].TokensPerSec)
	if !(last < 0.55*first) {
		t.Errorf("MLM loss fell from %.3f to %.3f: want under 55%%", first, last)
	}
	for i, e := range evs {
		if e.Step != i+1 || e.TotalSteps != steps || e.Loss != e.MLMLoss+e.NSPLoss {
			t.Errorf("event %d: %+v", i, e)
		}
		if want := c.LR * LinearSchedule(i, c.Warmup, steps); e.LR != want {
			t.Errorf("step %d: learning rate %g, want %g", e.Step, e.LR, want)
		}
	}
	again := toyPretrainer(t, DefaultData(32, 1), c)
	for i := range 5 {
		e, err := again.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if e.Loss != evs[i].Loss {
			t.Fatalf("step %d: loss %v, then %v with the same seeds", i+1, evs[i].Loss, e.Loss)
		}
	}
}

// TestResumeIsBitExact trains N steps straight, and N/2 steps, a checkpoint, a new trainer
// built from the files alone, N/2 more: losses and weights must be equal bit for bit. Dropout,
// gradient accumulation, dynamic masks and an epoch boundary are all on the way.
func TestResumeIsBitExact(t *testing.T) {
	const steps = 6
	dc := DefaultData(32, 3)
	dc.Dynamic = true
	c := DefaultPretrain(steps)
	c.BatchSize, c.GradAccum, c.LR, c.Warmup, c.Seed, c.SaveEvery = 16, 2, 1e-3, 2, 9, 3

	straight := toyPretrainer(t, dc, c)
	if 2*straight.Data.Len() > steps*c.BatchSize {
		t.Fatalf("%d examples an epoch: the run would not cross an epoch", straight.Data.Len())
	}
	var want []float64
	for range steps {
		ev, err := straight.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ev.Loss)
	}

	c.OutDir = t.TempDir()
	first := toyPretrainer(t, dc, c)
	c1 := c
	c1.Steps = steps // same schedule, stopped half way
	for range steps / 2 {
		if _, err := first.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := first.SaveCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	if latest, _ := LatestCheckpoint(c.OutDir); latest != dir {
		t.Fatalf("latest checkpoint %q, want %q", latest, dir)
	}
	// The recipe the model card reads from the checkpoint.
	if f, err := hf.Open(filepath.Join(dir, OptimizerFile)); err != nil {
		t.Fatal(err)
	} else {
		md := f.Metadata()
		f.Close()
		for k, v := range map[string]string{"mask_prob": "0.15", "whole_word": "false", "peak_lr": "0.001", "warmup_steps": "2", "start_step": "0", "dynamic_masking": "true"} {
			if md[k] != v {
				t.Errorf("checkpoint metadata %s = %q, want %q", k, md[k], v)
			}
		}
	}
	tok, docs := toyCorpus(t)
	data, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := ResumePretrainer(dir, data, c)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.State != first.State || resumed.Optimizer.Step != steps/2 || len(resumed.History) != steps/2 {
		t.Fatalf("resumed state %+v (optimizer step %d, %d events), want %+v", resumed.State, resumed.Optimizer.Step, len(resumed.History), first.State)
	}
	var got []float64
	for _, e := range resumed.History {
		if e.Kind != EventStep {
			t.Errorf("history entry of kind %v reloaded", e.Kind)
		}
		got = append(got, e.Loss)
	}
	if err := resumed.Run(context.Background(), func(e Event) {
		if e.Kind == EventStep {
			got = append(got, e.Loss)
		}
	}); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: loss %v resumed, %v straight", i+1, got[i], want[i])
		}
	}
	sp, rp := straight.Model.Params(), resumed.Model.Params()
	for i := range sp {
		for j, v := range sp[i].T.Data {
			if math.Float32bits(v) != math.Float32bits(rp[i].T.Data[j]) {
				t.Fatalf("%s[%d]: %v resumed, %v straight", sp[i].Name, j, rp[i].T.Data[j], v)
			}
		}
	}
	// The final model is in OutDir itself, in HF layout.
	f, err := hf.LoadFolder(c.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if fp := f.Model.Params(); fp[0].T.Data[5] != sp[0].T.Data[5] {
		t.Error("the final model folder does not hold the trained weights")
	}
	if latest, _ := LatestCheckpoint(c.OutDir); filepath.Base(latest) != "checkpoint-6" {
		t.Errorf("latest checkpoint %s, want checkpoint-6", latest)
	}
}

// TestInterruptedSave leaves what a kill in the middle of a save leaves (a temporary folder,
// half written) and a folder named like a checkpoint without its optimizer file: the latest
// checkpoint is still the last complete one, it loads, and the next save clears the leftovers.
func TestInterruptedSave(t *testing.T) {
	c := DefaultPretrain(4)
	c.BatchSize, c.OutDir, c.KeepCheckpoints = 4, t.TempDir(), 2
	dc := DefaultData(32, 1)
	p := toyPretrainer(t, dc, c)
	for range 2 {
		if _, err := p.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	good, err := p.SaveCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(c.OutDir, tmpPrefix+"3-12345")
	bogus := filepath.Join(c.OutDir, "checkpoint-3")
	for _, d := range []string{tmp, bogus} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, hf.WeightsFile), []byte("half a fi"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := LatestCheckpoint(c.OutDir)
	if err != nil || latest != good {
		t.Fatalf("latest %q, %v; want %q", latest, err, good)
	}
	tok, docs := toyCorpus(t)
	data, _ := NewPretrainData(tok, docs, dc)
	q, err := ResumePretrainer(latest, data, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.SaveCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("leftover %s not removed: %v", tmp, err)
	}
	if _, err := os.Stat(filepath.Join(bogus, OptimizerFile)); err != nil {
		t.Errorf("checkpoint-3 not rewritten: %v", err)
	}
	if _, err := ResumePretrainer(bogus, data, c); err != nil {
		t.Error(err)
	}
	// A resume with other data is refused.
	dc.Seed = 2
	other, _ := NewPretrainData(tok, docs, dc)
	if _, err := ResumePretrainer(good, other, c); err == nil {
		t.Error("resumed with another data seed")
	}
}

// TestKeepCheckpoints checks that only the newest KeepCheckpoints stay.
func TestKeepCheckpoints(t *testing.T) {
	c := DefaultPretrain(5)
	c.BatchSize, c.OutDir, c.KeepCheckpoints, c.SaveEvery = 4, t.TempDir(), 2, 1
	p := toyPretrainer(t, DefaultData(32, 1), c)
	var saved []string
	if err := p.Run(context.Background(), func(e Event) {
		if e.Kind == EventCheckpoint {
			saved = append(saved, filepath.Base(e.Checkpoint))
		}
	}); err != nil {
		t.Fatal(err)
	}
	steps, _ := checkpointSteps(c.OutDir)
	if len(saved) != 5 || len(steps) != 2 || steps[0] != 4 || steps[1] != 5 {
		t.Errorf("saved %v, on disk %v; want 5 saves, steps 4 and 5 kept", saved, steps)
	}
}

// TestCancelAndNonFinite checks that a cancelled context stops a run with the state of the last
// complete step, and that a NaN loss stops it with ErrNonFinite, no weight changed.
func TestCancelAndNonFinite(t *testing.T) {
	c := DefaultPretrain(10)
	c.BatchSize, c.GradAccum = 4, 2
	p := toyPretrainer(t, DefaultData(32, 1), c)
	ctx, cancel := context.WithCancel(context.Background())
	err := p.Run(ctx, func(e Event) {
		if e.Step == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || p.State.Step != 2 || p.Optimizer.Step != 2 {
		t.Fatalf("Run returned %v at step %d (optimizer %d); want context.Canceled at 2", err, p.State.Step, p.Optimizer.Step)
	}

	before := append([]float32(nil), p.Model.Layers[0].Query.W.Data...)
	state := p.State
	p.Model.MLM.Bias.Data[7] = float32(math.NaN())
	if _, err := p.Step(context.Background()); !errors.Is(err, ErrNonFinite) {
		t.Fatalf("Step with a NaN weight: %v, want ErrNonFinite", err)
	}
	if p.State != state {
		t.Errorf("state moved to %+v", p.State)
	}
	for i, v := range p.Model.Layers[0].Query.W.Data {
		if v != before[i] {
			t.Fatal("weights changed by a non-finite step")
		}
	}
}

func TestEvaluateMLM(t *testing.T) {
	p := toyPretrainer(t, DefaultData(32, 1), DefaultPretrain(1))
	insts := p.Data.Fixed()
	n := 0
	for _, in := range insts {
		for _, y := range in.Labels {
			if y != bert.IgnoreIndex {
				n++
			}
		}
	}
	r, err := EvaluateMLM(p.Model, insts, p.Data.PadID, 5)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != n || r.Top5 < r.Accuracy || r.Accuracy < 0 || r.Top5 > 1 || math.Abs(r.Perplexity-math.Exp(r.Loss)) > 1e-9 {
		t.Errorf("%+v (want n %d)", r, n)
	}
	// An untrained model is close to uniform: the perplexity is near the vocabulary size.
	if V := float64(p.Model.Config.VocabSize); r.Perplexity < V/2 || r.Perplexity > 2*V {
		t.Errorf("perplexity %.1f of a random model, vocabulary %v", r.Perplexity, V)
	}
	// Batching does not change the figures.
	r1, _ := EvaluateMLM(p.Model, insts, p.Data.PadID, 1)
	if r1.N != r.N || r1.Accuracy != r.Accuracy || math.Abs(r1.Loss-r.Loss) > 1e-6 {
		t.Errorf("batch 1 gives %+v, batch 5 %+v", r1, r)
	}
}

// BenchmarkPretrainStep times a pre-training step (MLM + NSP forward and backward, clipping,
// AdamW) of the Tiny preset (2 layers, hidden 128, uncased vocabulary) on batches of 8
// sequences of 128 tokens, and reports tokens per second.
func BenchmarkPretrainStep(b *testing.B) {
	c, err := bert.Preset("tiny")
	if err != nil {
		b.Fatal(err)
	}
	tok := numberedTokenizer(b, c.VocabSize)
	rng := newRNG(1)
	docs := make([]TokenDocument, 16)
	for d := range docs {
		for range 40 {
			s := make([]int, 8+rng.IntN(20))
			for j := range s {
				s[j] = 5 + rng.IntN(c.VocabSize-5)
			}
			docs[d] = append(docs[d], s)
		}
	}
	dc := DefaultData(128, 1)
	dc.Instances.ShortSeqProb = 0
	data, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		b.Fatal(err)
	}
	m, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		b.Fatal(err)
	}
	pc := DefaultPretrain(1 << 30)
	pc.BatchSize, pc.PadTo = 8, 128
	p, err := NewPretrainer(m, tok, data, pc)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var tokens int64
	cpu0 := cpuSeconds()
	for b.Loop() {
		before := p.State.Tokens
		if _, err := p.Step(context.Background()); err != nil {
			b.Fatal(err)
		}
		tokens += p.State.Tokens - before
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
	if cpu1 := cpuSeconds(); cpu0 >= 0 {
		// The CPU time a step took, whatever share of the cores the machine left it.
		b.ReportMetric((cpu1-cpu0)*1e3/float64(b.N), "cpu-ms/op")
	}
}

// A model packed for inference is refused: training would leave its packed copies behind.
func TestPretrainRefusesPackedModel(t *testing.T) {
	tok, docs := toyCorpus(t)
	data, err := NewPretrainData(tok, docs, DefaultData(32, 1))
	if err != nil {
		t.Fatal(err)
	}
	m := testModel(t, tok.Vocab().Len(), 1)
	m.PackWeights()
	if _, err := NewPretrainer(m, tok, data, DefaultPretrain(5)); err == nil || !strings.Contains(err.Error(), "packed for inference") {
		t.Errorf("a packed model: error %v, want one that says it is packed for inference", err)
	}
}
