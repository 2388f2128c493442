package explain

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
)

// relkqDir is the relative_key_query fixture (HF 4.x's relative position embeddings).
const relkqDir = "../bert/testdata/bert-tiny-relkq"

// The lens at the last layer is the fill-mask output: the same tokens with the same
// probabilities as pipeline.FillMask gives for the text.
func TestLensLastLayerEqualsFillMask(t *testing.T) {
	f := loadFixture(t)
	e := &Explainer{Model: PreTraining(f.Model), Tok: f.Tokenizer}
	for _, c := range []struct{ text, pair string }{
		{"the city of paris is [MASK]", "the big cat"},
		{"[MASK] dogs jumps over the [MASK] cat", ""},
	} {
		rep, err := e.Lens(Request{Text: c.text, Pair: c.pair, TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		var pair *string
		if c.pair != "" {
			pair = &c.pair
		}
		fm, err := pipeline.FillMask(f.Model, f.Tokenizer, c.text, pair, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(fm.Masks) != len(rep.Lens.Positions) {
			t.Fatalf("%q: %d masks in fill-mask, %d in the lens", c.text, len(fm.Masks), len(rep.Lens.Positions))
		}
		for i, mk := range fm.Masks {
			lp := rep.Lens.Positions[i]
			if lp.Position != mk.Position || len(lp.Layers) != len(f.Model.Layers)+1 {
				t.Fatalf("%q: lens position %d with %d layers, fill-mask position %d", c.text, lp.Position, len(lp.Layers), mk.Position)
			}
			last := lp.Layers[len(lp.Layers)-1].Top
			for j, p := range mk.Predictions {
				if last[j].ID != p.ID || last[j].Token != p.Token || math.Abs(last[j].Prob-p.Score) > 1e-6 {
					t.Errorf("%q mask %d rank %d: lens %s %.7f, fill-mask %s %.7f", c.text, i, j, last[j].Token, last[j].Prob, p.Token, p.Score)
				}
			}
		}
	}
}

// Every layer's readout equals the reference's (top 5 and the candidate's probability).
func TestLensMatchesReference(t *testing.T) {
	r := loadReference(t)
	m := loadFixture(t).Model
	lens, err := LogitLens(m, r.input(), []int{r.MaskPosition}, []int{r.Candidate}, 5)
	if err != nil {
		t.Fatal(err)
	}
	layers := lens.Positions[0].Layers
	if len(layers) != len(r.Lens) {
		t.Fatalf("%d layers, want %d", len(layers), len(r.Lens))
	}
	for l, want := range r.Lens {
		got := layers[l]
		for k, id := range want.IDs {
			if got.Top[k].ID != id || math.Abs(got.Top[k].Prob-want.Probs[k]) > 1e-5 {
				t.Errorf("layer %d rank %d: %d %.7f, want %d %.7f", l, k, got.Top[k].ID, got.Top[k].Prob, id, want.Probs[k])
			}
		}
		if math.Abs(got.Candidates[0]-want.CandidateProb) > 1e-5 {
			t.Errorf("layer %d: candidate probability %.7f, want %.7f", l, got.Candidates[0], want.CandidateProb)
		}
	}
}

// The neuron view's row, computed from the traced q and k, is the traced attention row, and
// its scaled dot products are the traced scores, for every layer, head and query.
// The relative_key_query fixture checks the relative terms, and relative_key (the same model
// without the key term) that KR is left out.
func TestNeuronViewEqualsTrace(t *testing.T) {
	for _, dir := range []string{fixtureDir, relkqDir, relkqDir + ":" + bert.PositionRelativeKey} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			path, typ, _ := strings.Cut(dir, ":")
			f, err := hf.LoadFolder(path)
			if err != nil {
				t.Fatal(err)
			}
			if typ != "" {
				f.Model.Config.PositionEmbeddingType = typ
			}
			testNeuronViewEqualsTrace(t, f.Model)
		})
	}
}

func testNeuronViewEqualsTrace(t *testing.T, m *bert.Model) {
	rng := rand.New(rand.NewPCG(5, 6))
	in := randomInput(rng, 13)
	out, err := m.Forward(in.batch(1), bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	S, A, d := len(in.IDs), m.Config.NumAttentionHeads, m.Config.HeadDim()
	for l := range m.Layers {
		for h := range A {
			for q := range S {
				n, err := NeuronView(m, in, l, h, q)
				if err != nil {
					t.Fatal(err)
				}
				row := out.Trace.Attentions[l].Data[(h*S+q)*S : (h*S+q+1)*S]
				scores := out.Trace.Layers[l].Scores.Data[(h*S+q)*S : (h*S+q+1)*S]
				var sum float64
				for j := range S {
					if math.Abs(n.Probs[j]-float64(row[j])) > 1e-6 {
						t.Errorf("layer %d head %d query %d key %d: probability %.7f, traced %.7f", l, h, q, j, n.Probs[j], row[j])
					}
					if math.Abs(n.Scores[j]-float64(scores[j])) > 1e-5 {
						t.Errorf("layer %d head %d query %d key %d: score %.7f, traced %.7f", l, h, q, j, n.Scores[j], scores[j])
					}
					if len(n.QK[j]) != d || len(n.K[j]) != d {
						t.Fatalf("q·k of %d dimensions, want %d", len(n.QK[j]), d)
					}
					sum += n.Probs[j]
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Errorf("layer %d head %d query %d: row sums to %v", l, h, q, sum)
				}
				wantQR, wantKR := 0, 0
				if m.Config.Relative() {
					wantQR = S
				}
				if m.Config.PositionEmbeddingType == bert.PositionRelativeKeyQuery {
					wantKR = S
				}
				if len(n.QR) != wantQR || len(n.KR) != wantKR {
					t.Fatalf("%s: %d q·r and %d k·r terms, want %d and %d", m.Config.PositionEmbeddingType, len(n.QR), len(n.KR), wantQR, wantKR)
				}
			}
		}
	}
	for _, bad := range [][3]int{{-1, 0, 0}, {2, 0, 0}, {0, 4, 0}, {0, 0, S}} {
		if _, err := NeuronView(m, in, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("NeuronView(%v): no error", bad)
		}
	}
}
