package bert_test

import (
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/internal/approx"
)

// Gradient tolerances of the fixtures' README.
const gradAtol, gradRtol = 1e-5, 1e-4

// fixtureLoss is outputs_summary.json's loss (MLM + NSP) of the fixture batch; relKQLoss that
// of the relative_key_query fixture.
const (
	fixtureLoss = 18.575448612606145
	relKQLoss   = 14.23255769176803
)

// TestGradientsMatchFixture checks d loss / d parameter for every tensor of grads.safetensors:
// 47 with absolute positions, 49 with relative_key_query (the two layers' distance embeddings).
func TestGradientsMatchFixture(t *testing.T) {
	for _, tc := range []struct {
		dir    string
		loss   float64
		params int
	}{{fixtureDir, fixtureLoss, 47}, {relKQFixtureDir, relKQLoss, 49}} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) { checkFixtureGradients(t, tc.dir, tc.loss, tc.params) })
	}
}

func checkFixtureGradients(t *testing.T, dir string, fixtureLoss float64, params int) {
	m := loadFixtureModelIn(t, dir, "")
	b, labels, nsp := fixtureBatchIn(t, dir)
	g := m.NewGrads()
	loss, err := m.ForwardBackward(b, labels, nsp, bert.TrainOptions{}, g)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(loss.Total - fixtureLoss); d > 1e-5 {
		t.Errorf("loss %.9f, want %.9f (diff %.3g)", loss.Total, fixtureLoss, d)
	}
	t.Logf("loss %.9f (MLM %.9f, NSP %.9f), fixture %.9f", loss.Total, loss.MLM, loss.NSP, fixtureLoss)

	got := map[string][]float32{}
	for _, p := range g.Params() {
		got[p.Name] = p.T.Data
	}
	// The tied decoder is the word embeddings: both fixture entries hold the total gradient.
	got["cls.predictions.decoder.weight"] = got["bert.embeddings.word_embeddings.weight"]

	want := readAll(t, filepath.Join(dir, "grads.safetensors"))
	if len(want) != params {
		t.Errorf("fixture has %d gradients, want %d", len(want), params)
	}
	if len(got) != params { // the tied decoder counted twice, as the fixture does
		t.Errorf("the model has %d gradients, the fixture %d", len(got), params)
	}
	var worst float64
	var worstName string
	for name, w := range want {
		gv, ok := got[name]
		if !ok {
			t.Errorf("%s: no gradient", name)
			continue
		}
		rtol := gradRtol
		if strings.HasSuffix(name, "attention.self.key.bias") {
			rtol = 0 // zero in exact math: only rounding noise to compare
		}
		if err := approx.Check(name, gv, w, gradAtol, rtol); err != nil {
			t.Error(err)
		}
		if d := approx.MaxAbsDiff(gv, w); d > worst {
			worst, worstName = d, name
		}
	}
	t.Logf("max |gradient - fixture| %.3g (%s)", worst, worstName)
}

// TestTrainForwardEvalEqualsForward checks that the training forward pass without dropout
// computes what Forward computes, and that its loss is PreTrainingLoss of Forward's logits.
func TestTrainForwardEvalEqualsForward(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, labels, nsp := fixtureBatch(t)
	out, err := m.Forward(b, bert.Options{MLM: true, NSP: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := bert.PreTrainingLoss(out, labels, nsp)
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.ForwardTrain(b, bert.TrainOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if d := approx.MaxAbsDiff(a.Hidden.Data, out.Hidden.Data); d != 0 {
		t.Errorf("hidden states differ from Forward by %g", d)
	}
	if d := approx.MaxAbsDiff(a.Pooled.Data, out.Pooled.Data); d != 0 {
		t.Errorf("pooled output differs from Forward by %g", d)
	}
	got, err := m.ForwardBackward(b, labels, nsp, bert.TrainOptions{Seed: 7}, m.NewGrads())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"total", got.Total, want.Total}, {"MLM", got.MLM, want.MLM}, {"NSP", got.NSP, want.NSP}} {
		// The cross entropy's exponentials are float32 in the backward, float64 in CrossEntropy.
		if math.Abs(c.got-c.want) > 1e-6*math.Abs(c.want) {
			t.Errorf("%s loss %.12g, Forward gives %.12g", c.name, c.got, c.want)
		}
	}
}

// TestGradientAccumulation checks that two calls into the same gradients add up to twice one
// call, with dropout on (the same seed gives the same masks).
func TestGradientAccumulation(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, labels, nsp := fixtureBatch(t)
	opt := bert.TrainOptions{Dropout: true, Seed: 42}
	once, twice := m.NewGrads(), m.NewGrads()
	l1, err := m.ForwardBackward(b, labels, nsp, opt, once)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l2, err := m.ForwardBackward(b, labels, nsp, opt, twice)
		if err != nil {
			t.Fatal(err)
		}
		if l2 != l1 {
			t.Fatalf("same seed, different losses: %+v, %+v", l1, l2)
		}
	}
	gp := twice.Params()
	for i, p := range once.Params() {
		double := make([]float32, p.T.Len())
		for j, v := range p.T.Data {
			double[j] = 2 * v
		}
		if err := approx.Check(p.Name, gp[i].T.Data, double, 1e-7, 1e-5); err != nil {
			t.Error(err)
		}
	}
	twice.Zero()
	for _, p := range twice.Params() {
		for _, v := range p.T.Data {
			if v != 0 {
				t.Fatalf("%s: Zero left %g", p.Name, v)
			}
		}
	}
}

// TestGradientsSameOnAnyGoroutines checks that a training step (dropout on) gives the same loss
// and gradients bit for bit on one goroutine and on several, at a size where the backward
// splits its LayerNorms, bias sums and dropout over the processors (BERT-Tiny, 2x128 tokens).
func TestGradientsSameOnAnyGoroutines(t *testing.T) {
	m := newTinyModel(t)
	b, labels := trainBatch(m.Config, 2, 128)
	nsp := []int{0, 1}
	step := func(procs int) (bert.Losses, *bert.Grads) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		g := m.NewGrads()
		l, err := m.ForwardBackward(b, labels, nsp, bert.TrainOptions{Dropout: true, Seed: 7}, g)
		if err != nil {
			t.Fatal(err)
		}
		return l, g
	}
	l1, g1 := step(1)
	for _, procs := range []int{2, 3} {
		l, g := step(procs)
		if l != l1 {
			t.Errorf("%d goroutines: losses %+v, one goroutine %+v", procs, l, l1)
		}
		want := g1.Params()
		for i, p := range g.Params() {
			for j, v := range p.T.Data {
				if math.Float32bits(v) != math.Float32bits(want[i].T.Data[j]) {
					t.Fatalf("%d goroutines: %s[%d] = %g, one goroutine %g", procs, p.Name, j, v, want[i].T.Data[j])
				}
			}
		}
	}
}

// TestZeroedGradsSameAsFresh: a step into gradients that held another step's and were zeroed
// gives the bits of a step into fresh gradients, whichever heads it trains (Zero leaves the
// decoder's gradient to be set by the masked-LM head, or cleared by whatever else reads it
// first), and zeroed gradients read as zeros.
func TestZeroedGradsSameAsFresh(t *testing.T) {
	m := newTinyModel(t)
	b, labels := trainBatch(m.Config, 2, 128)
	nsp := []int{0, 1}
	opt := bert.TrainOptions{Dropout: true, Seed: 7}
	for _, tc := range []struct {
		name       string
		mlm, nsp   []int
		backwardOf bool // ForwardTrain then Backward, no heads
	}{{"mlm+nsp", labels, nsp, false}, {"mlm", labels, nil, false}, {"nsp", nil, nsp, false}, {"backward", nil, nil, true}} {
		t.Run(tc.name, func(t *testing.T) {
			step := func(g *bert.Grads) {
				if tc.backwardOf {
					a, err := m.ForwardTrain(b, opt)
					if err != nil {
						t.Fatal(err)
					}
					d := tensor.New(b.B, b.S, m.Config.HiddenSize)
					for i := range d.Data {
						d.Data[i] = float32(i%7) - 3
					}
					if err := m.Backward(a, d, nil, g); err != nil {
						t.Fatal(err)
					}
					return
				}
				if _, err := m.ForwardBackward(b, tc.mlm, tc.nsp, opt, g); err != nil {
					t.Fatal(err)
				}
			}
			fresh := m.NewGrads()
			step(fresh)
			used := m.NewGrads()
			if _, err := m.ForwardBackward(b, labels, nsp, bert.TrainOptions{Dropout: true, Seed: 99}, used); err != nil {
				t.Fatal(err)
			}
			used.Zero()
			step(used)
			want := fresh.Params()
			for i, p := range used.Params() {
				if j := sameBits(p.T, want[i].T); j >= 0 {
					t.Fatalf("%s[%d] = %g after Zero, %g fresh", p.Name, j, p.T.Data[j], want[i].T.Data[j])
				}
			}
			used.Zero()
			for _, p := range used.Params() {
				for j, v := range p.T.Data {
					if v != 0 {
						t.Fatalf("%s[%d] = %g after Zero, want 0", p.Name, j, v)
					}
				}
			}
		})
	}
}

// TestDropoutChangesTraining checks that dropout changes the loss, that the seed selects the
// masks, and that Dropout false ignores the seed.
func TestDropoutChangesTraining(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, labels, nsp := fixtureBatch(t)
	loss := func(opt bert.TrainOptions) float64 {
		l, err := m.ForwardBackward(b, labels, nsp, opt, m.NewGrads())
		if err != nil {
			t.Fatal(err)
		}
		return l.Total
	}
	eval1, eval2 := loss(bert.TrainOptions{Seed: 1}), loss(bert.TrainOptions{Seed: 2})
	d1, d1again, d2 := loss(bert.TrainOptions{Dropout: true, Seed: 1}), loss(bert.TrainOptions{Dropout: true, Seed: 1}), loss(bert.TrainOptions{Dropout: true, Seed: 2})
	if eval1 != eval2 {
		t.Errorf("eval mode depends on the seed: %g, %g", eval1, eval2)
	}
	if d1 != d1again {
		t.Errorf("same seed, different losses: %g, %g", d1, d1again)
	}
	if d1 == d2 || d1 == eval1 {
		t.Errorf("dropout had no effect: eval %g, seed 1 %g, seed 2 %g", eval1, d1, d2)
	}
}

func TestForwardBackwardRejectsBadInput(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, labels, nsp := fixtureBatch(t)
	other, err := bert.NewModel(m.Config, bert.Heads{Pooler: true})
	if err != nil {
		t.Fatal(err)
	}
	allIgnored := make([]int, len(labels))
	for i := range allIgnored {
		allIgnored[i] = bert.IgnoreIndex
	}
	tests := []struct {
		name     string
		m        *bert.Model
		mlm, nsp []int
		g        *bert.Grads
	}{
		{"no labels", m, nil, nil, m.NewGrads()},
		{"short MLM labels", m, labels[:3], nsp, m.NewGrads()},
		{"MLM label outside the vocabulary", m, append(append([]int(nil), labels[:len(labels)-1]...), 5000), nsp, m.NewGrads()},
		{"NSP label 2", m, labels, []int{0, 2}, m.NewGrads()},
		{"every MLM label ignored", m, allIgnored, nsp, m.NewGrads()},
		{"gradients of another model", m, labels, nsp, other.NewGrads()},
		{"nil gradients", m, labels, nsp, nil},
		{"no MLM head", other, labels, nil, other.NewGrads()},
		{"no NSP head", other, nil, nsp, other.NewGrads()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.m.ForwardBackward(b, tc.mlm, tc.nsp, bert.TrainOptions{}, tc.g); err == nil {
				t.Fatal("no error")
			} else {
				t.Log(err)
			}
		})
	}
}
