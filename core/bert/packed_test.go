package bert_test

import (
	"fmt"
	"math"
	"sync"
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

// A model packed in place (PackWeightsInPlace) holds the packed matrices only: its eval
// outputs are the raw model's bit for bit and leave the raw layout released; training,
// backward passes and Params get the raw weights back exactly (tied and untied decoders),
// from several goroutines at once beside eval passes (run it with -race).
func TestPackWeightsInPlace(t *testing.T) {
	c := bert.DefaultConfig()
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 300, 64, 2, 4, 130
	c.MaxPositionEmbeddings = 32
	for _, tied := range []bool{true, false} {
		mk := func() *bert.Model {
			m, err := bert.NewRandom(c, bert.AllHeads, 5)
			if err != nil {
				t.Fatal(err)
			}
			if !tied {
				m.MLM.Decoder = m.WordEmb.Clone()
				for i := range m.MLM.Decoder.Data {
					m.MLM.Decoder.Data[i] *= -0.5
				}
			}
			return m
		}
		raw, lean := mk(), mk()
		lean.PackWeightsInPlace()
		if !lean.Packed() || !lean.RawReleased() || raw.RawReleased() {
			t.Fatalf("tied %v: Packed %v, RawReleased %v after PackWeightsInPlace; raw model: RawReleased %v",
				tied, lean.Packed(), lean.RawReleased(), raw.RawReleased())
		}
		if q := lean.Layers[1].Inter.W; q.Data != nil || q.Shape[0] != c.IntermediateSize {
			t.Fatalf("tied %v: intermediate weight after PackWeightsInPlace: %d floats, shape %v", tied, len(q.Data), q.Shape)
		}
		if (lean.MLM.Decoder.Data == nil) == tied {
			t.Fatalf("tied %v: decoder released %v", tied, lean.MLM.Decoder.Data == nil)
		}
		const B, S = 2, 9
		b := bert.Batch{B: B, S: S, InputIDs: make([]int, B*S)}
		for i := range b.InputIDs {
			b.InputIDs[i] = 5 + (i*31)%(c.VocabSize-5)
		}
		opt := bert.Options{MLM: true, NSP: true}
		want, err := raw.Forward(b, opt)
		if err != nil {
			t.Fatal(err)
		}
		sameBits := func(what string, x, y []float32) {
			t.Helper()
			if len(x) != len(y) {
				t.Fatalf("tied %v: %s: %d floats, want %d", tied, what, len(x), len(y))
			}
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
					t.Fatalf("tied %v: %s[%d] = %g, want %g", tied, what, i, x[i], y[i])
				}
			}
		}
		got, err := lean.Forward(b, opt)
		if err != nil {
			t.Fatal(err)
		}
		sameBits("MLM logits", got.MLMLogits.Data, want.MLMLogits.Data)
		sameBits("NSP logits", got.NSPLogits.Data, want.NSPLogits.Data)
		if n, w := lean.NumParams(), raw.NumParams(); n != w || !lean.RawReleased() {
			t.Fatalf("tied %v: after an eval pass and NumParams (%d, want %d): RawReleased %v, want true", tied, n, w, lean.RawReleased())
		}
		// Training passes in two goroutines and eval passes in two more, all at once.
		labels := make([]int, B*S)
		for i := range labels {
			labels[i] = bert.IgnoreIndex
		}
		labels[2], labels[S+4] = 11, 12
		wantLoss, err := raw.ForwardBackward(b, labels, nil, bert.TrainOptions{}, raw.NewGrads())
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if g%2 == 0 {
					out, err := lean.Forward(b, opt)
					if err == nil && math.Float32bits(out.MLMLogits.Data[7]) != math.Float32bits(want.MLMLogits.Data[7]) {
						err = fmt.Errorf("eval pass beside EnsureRaw: logit %g, want %g", out.MLMLogits.Data[7], want.MLMLogits.Data[7])
					}
					errs <- err
					return
				}
				l, err := lean.ForwardBackward(b, labels, nil, bert.TrainOptions{}, lean.NewGrads())
				if err == nil && l != wantLoss {
					err = fmt.Errorf("training loss %+v, want %+v", l, wantLoss)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("tied %v: %v", tied, err)
			}
		}
		if lean.RawReleased() {
			t.Fatalf("tied %v: RawReleased after a training pass", tied)
		}
		wp, gp := raw.Params(), lean.Params()
		for i := range wp {
			sameBits(wp[i].Name, gp[i].T.Data, wp[i].T.Data)
		}
		if !tied {
			sameBits("decoder", lean.MLM.Decoder.Data, raw.MLM.Decoder.Data)
		}
	}
}
