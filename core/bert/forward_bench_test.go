package bert_test

import (
	"strconv"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// BenchmarkForward times one eval-mode forward pass at batch 1 (encoder and pooler, as
// BertModel) for the sizes `make bench` compares with its peers, and reports allocations per
// pass after the warm-up call (the target is near zero: buffers reused). The "-packed" cases
// run the same model with its weights packed once (PackWeights), as the engine holds them.
func BenchmarkForward(b *testing.B) {
	for _, tc := range []struct {
		preset string
		s      int
		pos    string // position_embedding_type; "": absolute
		packed bool
	}{{"tiny", 16, "", false}, {"tiny", 16, "", true}, {"mini", 128, "", false}, {"mini", 128, "", true},
		{"base", 128, "", false}, {"base", 128, "", true}, {"mini", 128, bert.PositionRelativeKeyQuery, false}} {
		name := tc.preset + "-S" + strconv.Itoa(tc.s)
		if tc.pos != "" {
			name += "-" + tc.pos
		}
		if tc.packed {
			name += "-packed"
		}
		b.Run(name, func(b *testing.B) {
			c, err := bert.Preset(tc.preset)
			if err != nil {
				b.Fatal(err)
			}
			if tc.pos != "" {
				c.PositionEmbeddingType = tc.pos
			}
			m, err := bert.NewRandom(c, bert.Heads{Pooler: true}, 1)
			if err != nil {
				b.Fatal(err)
			}
			if tc.packed {
				m.PackWeights()
			}
			batch := bert.Batch{B: 1, S: tc.s, InputIDs: make([]int, tc.s)}
			for i := range batch.InputIDs {
				batch.InputIDs[i] = 1000 + (i*7919)%(c.VocabSize-1000)
			}
			if _, err := m.Forward(batch, bert.Options{}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for b.Loop() {
				if _, err := m.Forward(batch, bert.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/forward")
			if cpu1 := cpuSeconds(); cpu0 >= 0 {
				b.ReportMetric((cpu1-cpu0)*1e3/float64(b.N), "cpu-ms/op")
			}
		})
	}
}
