package train

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// electraRun is ELECTRA at Tiny size on the toy corpus (no sentence task, dynamic masks).
func electraRun(t *testing.T, steps int, out string) *Pretrainer {
	t.Helper()
	tok, docs := toyCorpus(t)
	dc := DefaultData(32, 3)
	dc.Instances.Task, dc.Dynamic = NoSentenceTask, true
	data, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		t.Fatal(err)
	}
	// Tiny's depth at half its width: the discriminator's learning shows within the test's steps.
	c, err := ElectraConfig("tiny", tok)
	if err != nil {
		t.Fatal(err)
	}
	if c, err = c.Reshape(bert.Shape{Hidden: 64, Heads: 2}); err != nil {
		t.Fatal(err)
	}
	c.EmbeddingSize = 64
	disc, err := bert.NewRandom(c, bert.Heads{RTD: true}, 5)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := NewGenerator(disc, 6)
	if err != nil {
		t.Fatal(err)
	}
	pc := DefaultPretrain(steps)
	pc.BatchSize, pc.LR, pc.Warmup, pc.Seed, pc.OutDir, pc.SaveEvery = 8, 1e-3, 3, 1, out, 3
	p, err := NewPretrainer(disc, tok, data, pc)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetGenerator(gen, ElectraLambda); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestElectraSharedGradients: one step's gradient of a shared embedding is the discriminator's
// plus the generator's, and after the update the two models still hold one tensor.
func TestElectraSharedGradients(t *testing.T) {
	p := electraRun(t, 2, "")
	g := p.Generator
	if c := g.Model.Config; c.HiddenSize != 16 || c.EmbDim() != 64 || g.Model.EmbProj == nil || p.Model.EmbProj != nil {
		t.Fatalf("generator hidden %d, E %d; projections %v / %v", c.HiddenSize, c.EmbDim(), g.Model.EmbProj != nil, p.Model.EmbProj != nil)
	}
	insts, _ := p.Data.Next(Position{}, 8)
	b, err := NewPretrainBatch(insts, p.Data.PadID, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.grads.Zero()
	g.grads.Zero()
	if _, err := p.electraStep(b, bert.TrainOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	find := func(ps []bert.Param, name string) []float32 {
		for _, q := range ps {
			if q.Name == name {
				return slices.Clone(q.T.Data)
			}
		}
		t.Fatalf("no %s", name)
		return nil
	}
	const word, ln = "bert.embeddings.word_embeddings.weight", "bert.embeddings.LayerNorm.weight"
	dWord, gWord := find(p.grads.Params(), word), find(g.grads.Params(), word)
	dLN, gLN := find(p.grads.Params(), ln), find(g.grads.Params(), ln)
	gs := p.stepGrads()
	if len(gs) != len(p.Optimizer.Params()) {
		t.Fatalf("%d gradients for %d parameters", len(gs), len(p.Optimizer.Params()))
	}
	for _, tc := range []struct {
		name   string
		d, gen []float32
	}{{word, dWord, gWord}, {ln, dLN, gLN}} {
		got := find(gs, tc.name)
		nonzero := 0
		for i := range got {
			if got[i] != tc.d[i]+tc.gen[i] {
				t.Fatalf("%s[%d]: %g, want %g + %g", tc.name, i, got[i], tc.d[i], tc.gen[i])
			}
			if tc.gen[i] != 0 && tc.d[i] != 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Errorf("%s: no element with both gradients", tc.name)
		}
	}
	if _, err := p.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.Model.WordEmb != p.Model.WordEmb || g.Model.MLM.Decoder != p.Model.WordEmb || g.Model.PosEmb != p.Model.PosEmb || g.Model.EmbLN.W != p.Model.EmbLN.W {
		t.Error("the embeddings are no longer shared after a step")
	}
	for _, prm := range p.Optimizer.Params() {
		if prm.Name == "generator."+word {
			t.Error("the shared word embeddings are in the optimizer twice")
		}
	}
}

// TestElectraTrains: the generator's masked LM and the discriminator's loss fall, and the
// discriminator learns to tell replaced tokens from original ones (ELECTRA's discriminator
// starts slowly: it first learns the share of replaced tokens); the folders load back with the
// same logits, and a run resumed from a checkpoint ends with the same weights.
func TestElectraTrains(t *testing.T) {
	const steps = 150
	out := t.TempDir()
	p := electraRun(t, steps, out)
	for e := range 4 { // 4 × 19 sequences of up to 32 tokens, masked as 4 epochs mask them
		for k := range p.Data.Len() {
			p.Eval = append(p.Eval, p.Data.Example(100+e, k))
		}
	}
	before, err := p.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	p.History = nil
	if err := p.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for _, e := range p.History {
		if e.Kind == EventStep {
			evs = append(evs, e)
		}
	}
	after := p.History[len(p.History)-1].Metrics
	mean := func(es []Event, f func(Event) float64) (s float64) {
		for _, e := range es {
			s += f(e) / float64(len(es))
		}
		return s
	}
	first, last := evs[:5], evs[len(evs)-5:]
	gen := func(e Event) float64 { return e.MLMLoss }
	rtd := func(e Event) float64 { return e.RTDLoss }
	t.Logf("generator MLM %.3f -> %.3f, discriminator BCE %.3f -> %.3f; held-out P(replaced) of replaced / original tokens %.3f / %.3f -> %.3f / %.3f, generator accuracy %.3f -> %.3f",
		mean(first, gen), mean(last, gen), mean(first, rtd), mean(last, rtd), before.Metrics["rtd_replaced_prob"], before.Metrics["rtd_original_prob"],
		after["rtd_replaced_prob"], after["rtd_original_prob"], before.Metrics["generator_mlm_accuracy"], after["generator_mlm_accuracy"])
	if !(mean(last, gen) < 0.7*mean(first, gen)) || !(mean(last, rtd) < 0.8*mean(first, rtd)) {
		t.Errorf("losses did not fall by 30%% and 20%%")
	}
	if gap0, gap := before.Metrics["rtd_replaced_prob"]-before.Metrics["rtd_original_prob"], after["rtd_replaced_prob"]-after["rtd_original_prob"]; !(math.Abs(gap0) < 0.01 && gap > 0.03) {
		t.Errorf("P(replaced) gap between replaced and original tokens %.3f -> %.3f: want from about 0 to over 0.03", gap0, gap)
	}

	// The folders.
	df, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	gf, err := hf.LoadFolder(filepath.Join(out, GeneratorFolder))
	if err != nil {
		t.Fatal(err)
	}
	if df.Model.RTD == nil || df.Model.MLM != nil || gf.Model.MLM == nil || gf.Model.Config.HiddenSize != 16 {
		t.Fatalf("folders: discriminator heads %v, generator heads %v", df.Model.HeadNames(), gf.Model.HeadNames())
	}
	if !slices.Equal(gf.Model.WordEmb.Data, p.Model.WordEmb.Data) {
		t.Error("the generator folder's word embeddings are not the discriminator's")
	}
	b, err := NewPretrainBatch(p.Data.Fixed()[:4], p.Data.PadID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		trained, got *bert.Model
		opt          bert.Options
	}{{"discriminator", p.Model, df.Model, bert.Options{RTD: true}}, {"generator", p.Generator.Model, gf.Model, bert.Options{MLM: true}}} {
		w, err := c.trained.Forward(b.Batch, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		g, err := c.got.Forward(b.Batch, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if c.opt.RTD && !slices.Equal(w.RTDLogits.Data, g.RTDLogits.Data) || c.opt.MLM && !slices.Equal(w.MLMLogits.Data, g.MLMLogits.Data) {
			t.Errorf("%s: the loaded folder's logits differ", c.name)
		}
	}
	for _, a := range []struct{ dir, arch string }{{out, "ElectraForPreTraining"}, {filepath.Join(out, GeneratorFolder), "ElectraForMaskedLM"}} {
		f, _ := hf.LoadFolder(a.dir)
		var arch []string
		if err := json.Unmarshal(f.Model.Config.Extra["architectures"], &arch); err != nil || len(arch) != 1 || arch[0] != a.arch {
			t.Errorf("%s: architectures %v, want %s", a.dir, arch, a.arch)
		}
	}

	// Resume from checkpoint-147 (the last kept before the end): the same final weights.
	r, err := ResumeElectra(filepath.Join(out, CheckpointPrefix+"147"), p.Data, p.Config, ElectraLambda)
	if err != nil {
		t.Fatal(err)
	}
	r.Config.OutDir = ""
	if err := r.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for i, prm := range r.Optimizer.Params() {
		if !slices.Equal(prm.T.Data, p.Optimizer.Params()[i].T.Data) {
			t.Fatalf("resumed run: %s differs from the uninterrupted run's", prm.Name)
		}
	}
}
