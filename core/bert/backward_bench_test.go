package bert_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// BenchmarkForwardBackward times one training step's forward and backward pass (dropout on),
// the gradients zeroed before each as a training loop does, and reports tokens per second.
func BenchmarkForwardBackward(b *testing.B) {
	b.Run("fixture", func(b *testing.B) {
		f, err := hf.LoadFolder(fixtureDir)
		if err != nil {
			b.Fatal(err)
		}
		batch, labels, nsp := benchFixtureBatch(b)
		m := f.Model
		benchForwardBackward(b, m, batch, labels, nsp)
	})
	// Tiny and Mini at seq 128, batch 8, about 15% of positions predicted; Tiny with
	// relative_key_query positions too, and Mini with the built-in model's 12,000-word
	// vocabulary (the shape `make pretrain` trains).
	for _, tc := range []struct {
		preset, pos string
		vocab       int // 0: the preset's
	}{{"tiny", "", 0}, {"mini", "", 0}, {"tiny", bert.PositionRelativeKeyQuery, 0}, {"mini", "", 12000}} {
		name := tc.preset + "-B8-S128"
		if tc.pos != "" {
			name += "-" + tc.pos
		}
		if tc.vocab != 0 {
			name = fmt.Sprintf("%s-V%d-B8-S128", tc.preset, tc.vocab)
		}
		b.Run(name, func(b *testing.B) {
			c, err := bert.Preset(tc.preset)
			if err != nil {
				b.Fatal(err)
			}
			if tc.pos != "" {
				c.PositionEmbeddingType = tc.pos
			}
			if tc.vocab != 0 {
				c.VocabSize = tc.vocab
			}
			m, err := bert.NewRandom(c, bert.AllHeads, 1)
			if err != nil {
				b.Fatal(err)
			}
			batch, labels := trainBatch(c, 8, 128)
			benchForwardBackward(b, m, batch, labels, []int{0, 1, 0, 1, 0, 1, 0, 1})
		})
	}
	// The page's Training lab: the built-in model's shape (8 x 256, 20,000 words) at its batch
	// of 16 short sentences (24 tokens), where packing the weights weighs more than at 8 x 128.
	b.Run("builtin-B16-S24", func(b *testing.B) {
		c, err := bert.Preset("mini")
		if err != nil {
			b.Fatal(err)
		}
		c.NumHiddenLayers, c.VocabSize = 8, 20000
		m, err := bert.NewRandom(c, bert.AllHeads, 1)
		if err != nil {
			b.Fatal(err)
		}
		batch, labels := trainBatch(c, 16, 24)
		benchForwardBackward(b, m, batch, labels, make([]int, 16))
	})
}

// trainBatch is a training batch of B sequences of S tokens for a model of config c: token ids
// spread over the vocabulary (past its first 1,000), sentence B on each sequence's second half,
// and a masked-LM label on every seventh token.
func trainBatch(c bert.Config, B, S int) (bert.Batch, []int) {
	batch := bert.Batch{B: B, S: S, InputIDs: make([]int, B*S), TokenTypeIDs: make([]int, B*S)}
	labels := make([]int, B*S)
	for i := range batch.InputIDs {
		batch.InputIDs[i] = 1000 + (i*7919)%(c.VocabSize-1000)
		if i%S >= S/2 {
			batch.TokenTypeIDs[i] = 1
		}
		labels[i] = bert.IgnoreIndex
		if i%7 == 3 {
			labels[i] = batch.InputIDs[i]
		}
	}
	return batch, labels
}

func benchForwardBackward(b *testing.B, m *bert.Model, batch bert.Batch, labels, nsp []int) {
	g := m.NewGrads()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; b.Loop(); i++ {
		g.Zero() // as a training loop does before each step
		if _, err := m.ForwardBackward(batch, labels, nsp, bert.TrainOptions{Dropout: true, Seed: uint64(i)}, g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch.B*batch.S)/b.Elapsed().Seconds(), "tokens/s")
	if cpu1 := cpuSeconds(); cpu0 >= 0 {
		b.ReportMetric((cpu1-cpu0)*1e3/float64(b.N), "cpu-ms/op")
	}
}

// benchFixtureBatch is fixtureBatch for a benchmark.
func benchFixtureBatch(b *testing.B) (bert.Batch, []int, []int) {
	f, err := hf.Open(filepath.Join(fixtureDir, "inputs.safetensors"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	get := func(name string) ([]int, []int) {
		v, shape, err := f.Int64(name)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out, shape
	}
	ids, shape := get("input_ids")
	types, _ := get("token_type_ids")
	mask, _ := get("attention_mask")
	labels, _ := get("labels")
	nsp, _ := get("next_sentence_label")
	return bert.Batch{B: shape[0], S: shape[1], InputIDs: ids, TokenTypeIDs: types, AttentionMask: mask}, labels, nsp
}
