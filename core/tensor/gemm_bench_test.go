package tensor

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchmarkGemm measures C[M, N] = A[M, K]·B[N, K]ᵀ (the layout of a linear layer) for BERT's
// shapes, per micro-kernel on one goroutine and split over GOMAXPROCS, through Gemm's own
// choice, and for gonum's blas32 as a peer. Run with -cpu 1,2 for one and two threads.
func BenchmarkGemm(b *testing.B) {
	shapes := []struct{ m, k, n int }{
		{128, 768, 768}, {128, 768, 3072}, {128, 3072, 768},
		{16, 128, 128}, {16, 128, 512}, {512, 1024, 1024},
	}
	for _, s := range shapes {
		rng := rand.New(rand.NewPCG(1, 2))
		x := make([]float32, s.m*s.k)
		w := make([]float32, s.n*s.k)
		y := make([]float32, s.m*s.n)
		for i := range x {
			x[i] = float32(rng.Float64()*2 - 1)
		}
		for i := range w {
			w[i] = float32(rng.Float64()*2 - 1)
		}
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		bench := func(b *testing.B, f func()) {
			f()
			b.ResetTimer()
			for b.Loop() {
				f()
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		shape := fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n)
		for _, kern := range gemmKernels() {
			b.Run(shape+"/"+kern.name+"/serial", func(b *testing.B) {
				bench(b, func() { gemmWith(kern, 1, false, true, s.m, s.n, s.k, 1, x, s.k, w, s.k, 0, y, s.n) })
			})
			b.Run(shape+"/"+kern.name+"/parallel", func(b *testing.B) {
				threads := runtime.GOMAXPROCS(0)
				bench(b, func() { gemmWith(kern, threads, false, true, s.m, s.n, s.k, 1, x, s.k, w, s.k, 0, y, s.n) })
			})
		}
		b.Run(shape+"/packed", func(b *testing.B) {
			pb := PackTransB(w, s.n, s.k)
			bench(b, func() { GemmPackedB(s.m, 1, x, s.k, pb, 0, y, s.n) })
		})
		b.Run(shape+"/Gemm", func(b *testing.B) {
			bench(b, func() { Gemm(false, true, s.m, s.n, s.k, 1, x, s.k, w, s.k, 0, y, s.n) })
		})
		b.Run(shape+"/gonum", func(b *testing.B) {
			A := blas32.General{Rows: s.m, Cols: s.k, Stride: s.k, Data: x}
			B := blas32.General{Rows: s.n, Cols: s.k, Stride: s.k, Data: w}
			C := blas32.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: y}
			bench(b, func() { blas32.Gemm(blas.NoTrans, blas.Trans, 1, A, B, 0, C) })
		})
	}
}
