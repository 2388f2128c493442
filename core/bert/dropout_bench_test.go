package bert

import (
	"fmt"
	"testing"

	"github.com/bertlab/bertlab/core/tensor"
)

// BenchmarkDropout times Dropout (the draws, the mask and the scaling) and DropoutBackward on
// a hidden state of BERT-Mini's 8 x 128 tokens, on one goroutine.
func BenchmarkDropout(b *testing.B) {
	const n = 8 * 128 * 256
	x, keep := make([]float32, n), make([]uint8, n)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	b.Run(fmt.Sprintf("forward/%d", n), func(b *testing.B) {
		b.SetBytes(4 * n)
		for i := 0; b.Loop(); i++ {
			Dropout(x, keep, 0.1, 1, uint64(i))
		}
	})
	b.Run(fmt.Sprintf("backward/%d", n), func(b *testing.B) {
		b.SetBytes(4 * n)
		for b.Loop() {
			tensor.MaskScale(x, x, keep, 1/0.9) // DropoutBackward on one goroutine
		}
	})
}
