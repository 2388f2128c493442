package bert_test

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

func BenchmarkTmpFwdHeads(b *testing.B) {
	c, _ := bert.Preset("tiny")
	m, _ := bert.NewRandom(c, bert.AllHeads, 1)
	batch, labels := trainBatch(c, 8, 128)
	var rows []int
	for i, y := range labels {
		if y != bert.IgnoreIndex {
			rows = append(rows, i)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Forward(batch, bert.Options{MLM: true, MLMRows: rows, NSP: true})
	}
}
