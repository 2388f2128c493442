package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkPackBRows packs 256x512 blocks of B by rows into 32-column slivers, as a training
// step's dX = dY·W packs W (ldb = in) and dW = dYᵀ·X packs X: from a matrix of 64 MiB, each
// call another block, so that the source comes from memory as in a step, not from cache.
func BenchmarkPackBRows(b *testing.B) {
	for _, pk := range []struct {
		name string
		rows func(dst, src []float32, ldb, kb, nsl, nr int)
	}{{"go", gemmPackRowsGo}, {gemmDefault.name, gemmDefault.packRows}} {
		if pk.rows == nil {
			continue
		}
		for _, ldb := range []int{256, 1024} {
			b.Run(fmt.Sprintf("%s/ldb%d", pk.name, ldb), func(b *testing.B) {
				const kb, nb = 256, 512
				nbw := min(nb, ldb)
				src := make([]float32, 16<<20)
				for i := range src {
					src[i] = float32(i)
				}
				rows := len(src) / ldb
				dst := make([]float32, kb*nbw)
				blk := 0
				for b.Loop() {
					p0 := (blk * kb) % (rows - kb)
					gemmPackBRows(pk.rows, dst, src, ldb, p0, 0, kb, nbw, gemmDefault.nr)
					blk++
				}
				b.SetBytes(int64(4 * kb * nbw))
			})
		}
	}
}
