package pipeline

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// BenchmarkFillMask times the page's "mask a word" query on a Tiny model (vocabulary 30,522)
// with raw weights and with its weights packed once, as the engine holds them: for one masked
// row the decoder [V, H] costs more to pack than to multiply.
func BenchmarkFillMask(b *testing.B) {
	tok := loadFixture(&testing.T{}).Tokenizer
	for _, packed := range []bool{false, true} {
		name := "tiny-raw"
		if packed {
			name = "tiny-packed"
		}
		b.Run(name, func(b *testing.B) {
			c, err := bert.Preset("tiny")
			if err != nil {
				b.Fatal(err)
			}
			m, err := bert.NewRandom(c, bert.Heads{MLM: true}, 1)
			if err != nil {
				b.Fatal(err)
			}
			if packed {
				m.PackWeights()
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FillMask(m, tok, "the cat sat on the [MASK] and looked at the dog.", nil, 5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
