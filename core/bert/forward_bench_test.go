package bert_test

import (
	"strconv"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// BenchmarkForward times one eval-mode forward pass at batch 1 (encoder and pooler, as
// BertModel) for the sizes `make bench` compares with its peers, and reports allocations per
// pass after the warm-up call (the target is near zero: buffers reused).
func BenchmarkForward(b *testing.B) {
	for _, tc := range []struct {
		preset string
		s      int
		pos    string // position_embedding_type; "": absolute
	}{{"tiny", 16, ""}, {"mini", 128, ""}, {"base", 128, ""}, {"mini", 128, bert.PositionRelativeKeyQuery}} {
		name := tc.preset + "-S" + strconv.Itoa(tc.s)
		if tc.pos != "" {
			name += "-" + tc.pos
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
