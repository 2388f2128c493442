package bert_test

import (
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tensor"
)

// A model with packed weights (PackWeights) gives the same bits as the same model without them
// in every eval output (hidden states, MLM logits for all rows and for chosen rows, NSP, the
// trace), on the HF fixtures (absolute and relative_key_query positions) and a random base-width
// model whose matrices span the GEMM's blocks; training passes are not changed by it.
func TestPackedWeightsSameOutputs(t *testing.T) {
	type tc struct {
		name string
		m    func(t *testing.T) *bert.Model
	}
	load := func(dir string) func(t *testing.T) *bert.Model {
		return func(t *testing.T) *bert.Model {
			f, err := hf.LoadFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			return f.Model
		}
	}
	random := func(t *testing.T) *bert.Model {
		c := bert.DefaultConfig()
		c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 700, 320, 1, 4, 1100
		m, err := bert.NewRandom(c, bert.AllHeads, 3)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []tc{{"fixture", load(fixtureDir)}, {"relative_key_query fixture", load(relKQFixtureDir)}, {"random 320 wide", random}} {
		t.Run(c.name, func(t *testing.T) {
			raw, packed := c.m(t), c.m(t)
			packed.PackWeights()
			if raw.Packed() || !packed.Packed() {
				t.Fatalf("Packed: %v before PackWeights, %v after", raw.Packed(), packed.Packed())
			}
			const B, S = 2, 13
			b := bert.Batch{B: B, S: S, InputIDs: make([]int, B*S), TokenTypeIDs: make([]int, B*S), AttentionMask: make([]int, B*S)}
			for i := range b.InputIDs {
				b.InputIDs[i] = 5 + (i*37)%(raw.Config.VocabSize-5)
				b.TokenTypeIDs[i] = (i % S) / 7
				if i%S < S-2 || i < S {
					b.AttentionMask[i] = 1
				}
			}
			for _, opt := range []bert.Options{{MLM: true, NSP: true, Trace: true}, {MLM: true, MLMRows: []int{3, 17}}} {
				want, err := raw.Forward(b, opt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := packed.Forward(b, opt)
				if err != nil {
					t.Fatal(err)
				}
				same := func(what string, x, y *tensor.Tensor) {
					t.Helper()
					if (x == nil) != (y == nil) {
						t.Fatalf("%s: nil %v packed, %v raw", what, x == nil, y == nil)
					}
					if x == nil {
						return
					}
					for i := range x.Data {
						if math.Float32bits(x.Data[i]) != math.Float32bits(y.Data[i]) {
							t.Fatalf("%s[%d]: %g packed, %g raw", what, i, x.Data[i], y.Data[i])
						}
					}
				}
				same("hidden", got.Hidden, want.Hidden)
				same("MLM logits", got.MLMLogits, want.MLMLogits)
				same("NSP logits", got.NSPLogits, want.NSPLogits)
				if opt.Trace {
					for l := range got.Trace.Layers {
						g, w := got.Trace.Layers[l], want.Trace.Layers[l]
						same("query", g.Query, w.Query)
						same("intermediate", g.Intermediate, w.Intermediate)
						same("FFN output", g.FFNOut, w.FFNOut)
					}
				}
			}
			// Training reads the raw weights: its loss is the unpacked model's.
			labels := make([]int, B*S)
			for i := range labels {
				labels[i] = bert.IgnoreIndex
			}
			labels[4], labels[S+2] = 7, 9
			lr, err := raw.ForwardBackward(b, labels, nil, bert.TrainOptions{}, raw.NewGrads())
			if err != nil {
				t.Fatal(err)
			}
			lp, err := packed.ForwardBackward(b, labels, nil, bert.TrainOptions{}, packed.NewGrads())
			if err != nil {
				t.Fatal(err)
			}
			if lr != lp {
				t.Errorf("training loss %+v packed, %+v raw", lp, lr)
			}
		})
	}
}
