package tensor

import (
	"fmt"
	"strings"
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

// BenchmarkGemmPackedFromMemory runs GemmPackedB on BERT-Base's shapes (128 rows, one
// thread) as a forward does, with each call another packed weight out of 64 MiB of them, so
// that the weight comes from memory and not from cache; "near" repeats one weight. "ahead"
// with the weights marked streamed (SetStreamed), as a large model's are; "off" without.
func BenchmarkGemmPackedFromMemory(b *testing.B) {
	for _, sh := range [][3]int{{128, 768, 768}, {128, 768, 3072}, {128, 3072, 768}} {
		m, k, n := sh[0], sh[1], sh[2]
		a := make([]float32, m*k)
		for i := range a {
			a[i] = float32(i%7) * 0.1
		}
		w := make([]float32, n*k)
		for i := range w {
			w[i] = float32(i%5) * 0.1
		}
		pbs := make([]*PackedB, (64<<20)/(4*n*k)+1)
		for i := range pbs {
			pbs[i] = PackTransB(w, n, k)
		}
		c := make([]float32, m*n)
		for _, near := range []bool{false, true} {
			for _, ahead := range []bool{true, false} {
				name := fmt.Sprintf("%dx%dx%d/far/ahead", m, k, n)
				if near {
					name = strings.Replace(name, "far", "near", 1)
				}
				if !ahead {
					name = strings.Replace(name, "ahead", "off", 1)
				}
				b.Run(name, func(b *testing.B) {
					for _, pb := range pbs {
						pb.SetStreamed(ahead)
					}
					i := 0
					for b.Loop() {
						pb := pbs[0]
						if !near {
							pb, i = pbs[i], (i+1)%len(pbs)
						}
						gemmPackedWith(1, m, 1, a, k, pb, 0, c, n, epilogue{})
					}
					b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}
