package bert

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/tensor"
)

// distilTargets draws a teacher's outputs for b: masked-LM distributions at the labelled
// positions and attention rows that, as a real teacher's, put nothing on padding keys.
func distilTargets(c Config, b Batch, labels []int, rng *rand.Rand) DistilTargets {
	var t DistilTargets
	softmaxInto := func(dst []float32, keep func(j int) bool) {
		var z float64
		ex := make([]float64, len(dst))
		for j := range dst {
			if keep(j) {
				ex[j] = math.Exp(2 * rng.NormFloat64())
				z += ex[j]
			}
		}
		for j := range dst {
			dst[j] = float32(ex[j] / z)
		}
	}
	for _, y := range labels {
		if y != IgnoreIndex {
			row := make([]float32, c.VocabSize)
			softmaxInto(row, func(int) bool { return true })
			t.MLM = append(t.MLM, row...)
		}
	}
	S, A := b.S, c.NumAttentionHeads
	for range c.NumHiddenLayers {
		at := tensor.New(b.B, A, S, S)
		for bh := range b.B * A {
			bi := bh / A
			for i := range S {
				softmaxInto(at.Data[(bh*S+i)*S:(bh*S+i+1)*S], func(j int) bool { return b.AttentionMask[bi*S+j] != 0 })
			}
		}
		t.Attentions = append(t.Attentions, at)
	}
	return t
}

// distilLoss64 is the distillation loss computed in float64 from the reference's outputs.
func distilLoss64(o refOut, c Config, b Batch, labels []int, t DistilTargets, w DistilWeights) DistilLosses {
	V, S, A := c.VocabSize, b.S, c.NumAttentionHeads
	var l DistilLosses
	l.Hard = crossEntropy64(o.mlmLogits, V, labels)
	n := 0
	for i, y := range labels {
		if y == IgnoreIndex {
			continue
		}
		row := o.mlmLogits[i*V : (i+1)*V]
		mx := math.Inf(-1)
		for _, z := range row {
			mx = math.Max(mx, z)
		}
		var sum float64
		for _, z := range row {
			sum += math.Exp(z - mx)
		}
		logZ := mx + math.Log(sum)
		for j, tj := range t.MLM[n*V : (n+1)*V] {
			if tj > 0 {
				l.Soft += float64(tj) * (math.Log(float64(tj)) - (row[j] - logZ))
			}
		}
		n++
	}
	l.Soft /= float64(n)
	rows := 0
	for li, p := range o.probs {
		for bh := range b.B * A {
			bi := bh / A
			for i := range S {
				if b.AttentionMask[bi*S+i] == 0 {
					continue
				}
				if li == 0 {
					rows++
				}
				for j := range S {
					tj := float64(t.Attentions[li].Data[(bh*S+i)*S+j])
					if tj > 0 {
						l.Attention += tj * math.Log(tj/p[(bh*S+i)*S+j])
					}
				}
			}
		}
	}
	l.Attention /= float64(rows * len(o.probs)) // rows counts (sequence, head, query) of one layer
	l.Total = w.Hard*l.Hard + w.Soft*l.Soft + w.Attention*l.Attention
	return l
}

// The distillation loss and its gradient equal a float64 implementation of the same function
// and its central finite differences, for students with absolute and relative positions, with
// and without dropout, and with each term alone.
func TestDistilMatchesFiniteDifferences(t *testing.T) {
	tests := []struct {
		name    string
		pos     string
		dropout bool
		w       DistilWeights
		partial bool // head 1 of every layer and every third query of the others free (rows of zeros)
	}{
		{"all terms", PositionAbsolute, false, DistilWeights{Hard: 1, Soft: 1, Attention: 1}, false},
		{"all terms dropout", PositionAbsolute, true, DistilWeights{Hard: 0.5, Soft: 1, Attention: 3}, false},
		{"soft only", PositionAbsolute, false, DistilWeights{Soft: 1}, false},
		{"attention only", PositionAbsolute, true, DistilWeights{Attention: 1}, false},
		{"relative_key_query student", PositionRelativeKeyQuery, true, DistilWeights{Hard: 1, Soft: 1, Attention: 1}, false},
		{"attention on some heads and rows", PositionAbsolute, false, DistilWeights{Hard: 1, Attention: 2}, true},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := gradCheckModelPos(t, "gelu", true, AllHeads, tc.pos)
			b, labels, _ := gradCheckBatch()
			rng := rand.New(rand.NewPCG(uint64(ti), 7))
			targets := distilTargets(m.Config, b, labels, rng)
			if tc.partial {
				S, A := b.S, m.Config.NumAttentionHeads
				for _, at := range targets.Attentions {
					for bh := range b.B * A {
						for i := range S {
							if bh%A == 1 || i%3 == 0 {
								clear(at.Data[(bh*S+i)*S : (bh*S+i+1)*S])
							}
						}
					}
				}
			}
			opt := TrainOptions{Dropout: tc.dropout, Seed: uint64(200 + ti)}
			a, err := m.ForwardTrain(b, opt) // the same masks as ForwardBackwardDistil draws
			if err != nil {
				t.Fatal(err)
			}
			r := newRef(m)
			if tc.dropout {
				r.useMasks(a)
			}
			g := m.NewGrads()
			got, err := m.ForwardBackwardDistil(b, labels, targets, tc.w, opt, g)
			if err != nil {
				t.Fatal(err)
			}
			want := distilLoss64(r.forward(b, labels, nil), m.Config, b, labels, targets, tc.w)
			for _, x := range []struct {
				name      string
				got, want float64
			}{{"total", got.Total, want.Total}, {"hard", got.Hard, want.Hard}, {"soft", got.Soft, want.Soft}, {"attention", got.Attention, want.Attention}} {
				if math.Abs(x.got-x.want) > 1e-5*math.Max(1, math.Abs(x.want)) {
					t.Errorf("%s loss %.9g, float64 reference %.9g", x.name, x.got, x.want)
				}
			}
			grads := map[string]*tensor.Tensor{}
			for _, p := range g.Params() {
				grads[p.Name] = p.T
			}
			grads[decoderName] = grads["bert.embeddings.word_embeddings.weight"]
			var worst float64
			checked := 0
			for _, p := range m.Params() {
				if strings.HasPrefix(p.Name, "cls.seq_relationship") || strings.HasPrefix(p.Name, "bert.pooler") {
					continue // no next-sentence term
				}
				coords := fdCoords(p.Name, p.T.Shape, b, m.Config.PadTokenID, rng)
				w, n := checkFD(t, p.Name, r.p[p.Name], coords, 1e-5, grads[p.Name].Data, func() float64 {
					return distilLoss64(r.forward(b, labels, nil), m.Config, b, labels, targets, tc.w).Total
				})
				worst, checked = math.Max(worst, w), checked+n
			}
			t.Logf("losses %+v; %d coordinates, worst |grad - fd| / (1e-3 + |fd|) = %.3g", got, checked, worst)
		})
	}
}

// A student that already equals its teacher has soft and attention losses of 0, and the
// distillation of a matched student with only those terms has zero gradient.
func TestDistilSelfIsZero(t *testing.T) {
	m := gradCheckModel(t, "gelu", true, AllHeads)
	b, labels, _ := gradCheckBatch()
	var rows []int
	for i, y := range labels {
		if y != IgnoreIndex {
			rows = append(rows, i)
		}
	}
	out, err := m.Forward(b, Options{MLM: true, MLMRows: rows, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config.VocabSize
	probs := append([]float32(nil), out.MLMLogits.Data...)
	tensor.SoftmaxRows(probs, V, nil)
	g := m.NewGrads()
	l, err := m.ForwardBackwardDistil(b, labels, DistilTargets{MLM: probs, Attentions: out.Trace.Attentions}, DistilWeights{Soft: 1, Attention: 1}, TrainOptions{}, g)
	if err != nil {
		t.Fatal(err)
	}
	if l.Soft > 1e-6 || l.Attention > 1e-6 || l.Total > 1e-6 {
		t.Errorf("self-distillation losses %+v, want 0", l)
	}
	for _, p := range g.Params() {
		for i, v := range p.T.Data {
			if math.Abs(float64(v)) > 1e-5 {
				t.Fatalf("%s[%d]: gradient %g of a student equal to its teacher", p.Name, i, v)
			}
		}
	}
}

// Bad targets are errors that say what is wrong.
func TestDistilBadTargets(t *testing.T) {
	m := gradCheckModel(t, "gelu", true, AllHeads)
	b, labels, _ := gradCheckBatch()
	good := distilTargets(m.Config, b, labels, rand.New(rand.NewPCG(1, 2)))
	for _, tc := range []struct {
		name string
		t    DistilTargets
		want string
	}{
		{"short MLM", DistilTargets{MLM: good.MLM[1:]}, "teacher MLM probabilities"},
		{"one layer", DistilTargets{Attentions: good.Attentions[:1]}, "teacher attentions for 1 layers"},
		{"wrong shape", DistilTargets{Attentions: []*tensor.Tensor{good.Attentions[0], tensor.New(2, 2, 4, 4)}}, "layer 1 has shape"},
		{"nil layer", DistilTargets{Attentions: []*tensor.Tensor{good.Attentions[0], nil}}, "layer 1 has shape"},
	} {
		_, err := m.ForwardBackwardDistil(b, labels, tc.t, DistilWeights{Hard: 1, Soft: 1, Attention: 1}, TrainOptions{}, m.NewGrads())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
