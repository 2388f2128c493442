package tensor

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

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

// BenchmarkGemmDecoder times the three products of the tied MLM decoder of BERT-Tiny (hidden
// 128) and BERT-Mini (256) in a training step (146 labelled rows, 30,522 words) on one
// goroutine and on GOMAXPROCS, with their CPU time: the logits T·Wᵀ (and the same with W
// packed once, as the eval forward has it), the weight gradient dYᵀ·T and the input gradient
// dY·W.
func BenchmarkGemmDecoder(b *testing.B) {
	const n, v = 146, 30522
	for _, e := range []int{128, 256} {
		rng := rand.New(rand.NewPCG(1, 2))
		t, w, dy := randSlice(rng, n*e, 0.5), randSlice(rng, v*e, 0.5), randSlice(rng, n*v, 0.5)
		logits, dw, dt := make([]float32, n*v), make([]float32, v*e), make([]float32, n*e)
		pw := PackTransB(w, v, e)
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"logits", func() { Gemm(false, true, n, v, e, 1, t, e, w, e, 0, logits, v) }},
			{"logits-packed", func() { GemmPackedB(n, 1, t, e, pw, 0, logits, v) }},
			{"dW", func() { Gemm(true, false, v, e, n, 1, dy, v, t, e, 1, dw, e) }},
			{"dX", func() { Gemm(false, false, n, e, v, 1, dy, v, w, e, 0, dt, e) }},
		} {
			for _, procs := range benchProcs() {
				b.Run(fmt.Sprintf("H%d/%s/procs=%d", e, c.name, procs), func(b *testing.B) {
					prev := runtime.GOMAXPROCS(procs)
					defer runtime.GOMAXPROCS(prev)
					c.f()
					cpu0 := cpuSeconds()
					for b.Loop() {
						c.f()
					}
					b.ReportMetric(2*float64(n*e*v)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu1 := cpuSeconds(); cpu0 >= 0 {
						b.ReportMetric((cpu1-cpu0)*1e3/float64(b.N), "cpu-ms/op")
					}
				})
			}
		}
	}
}

// benchProcs is the goroutine counts a benchmark compares: 1, and GOMAXPROCS when it is more.
func benchProcs() []int {
	if p := runtime.GOMAXPROCS(0); p > 1 {
		return []int{1, p}
	}
	return []int{1}
}

// BenchmarkGemmLinearTrain times the three products of a linear layer in a training step of
// 1,024 tokens (batch 8 × 128) on one goroutine, for BERT-Mini's (256, 1024) and BERT-Base's
// (768, 3072) shapes: the forward X·Wᵀ, the input gradient dY·W and the weight gradient
// dYᵀ·X (added to the gradient, beta 1), in GFLOP/s. Each call takes the next of eight sets of
// operands (48 MiB and more in all), so that they come from memory, as in a step.
func BenchmarkGemmLinearTrain(b *testing.B) {
	const t, sets = 1024, 8
	for _, s := range []struct{ in, out int }{{256, 256}, {256, 1024}, {1024, 256}, {768, 768}, {768, 3072}, {3072, 768}} {
		rng := rand.New(rand.NewPCG(1, 2))
		var x, w, dy, y, dx, dw [sets][]float32
		for i := range sets {
			x[i], w[i], dy[i] = randSlice(rng, t*s.in, 0.5), randSlice(rng, s.out*s.in, 0.5), randSlice(rng, t*s.out, 0.5)
			y[i], dx[i], dw[i] = make([]float32, t*s.out), make([]float32, t*s.in), make([]float32, s.out*s.in)
		}
		for _, c := range []struct {
			name string
			f    func(i int)
		}{
			{"fwd", func(i int) {
				gemmWith(gemmDefault, 1, false, true, t, s.out, s.in, 1, x[i], s.in, w[i], s.in, 0, y[i], s.out)
			}},
			{"dX", func(i int) {
				gemmWith(gemmDefault, 1, false, false, t, s.in, s.out, 1, dy[i], s.out, w[i], s.in, 0, dx[i], s.in)
			}},
			{"dW", func(i int) {
				gemmWith(gemmDefault, 1, true, false, s.out, s.in, t, 1, dy[i], s.out, x[i], s.in, 1, dw[i], s.in)
			}},
		} {
			b.Run(fmt.Sprintf("%dx%d/%s", s.in, s.out, c.name), func(b *testing.B) {
				c.f(0)
				for i := 0; b.Loop(); i++ {
					c.f(i % sets)
				}
				b.ReportMetric(2*float64(t*s.in*s.out)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkSoftmaxCrossEntropyLinearBackward times the MLM decoder's fused loss backward at
// BERT-Tiny's pre-training shape (146 labelled rows of 8 x 128, hidden 128, 30,522 words), with
// and without the bias's sums, on one goroutine and on GOMAXPROCS. Each call takes fresh logits
// (copied in outside the timer): the call overwrites them with d logits.
func BenchmarkSoftmaxCrossEntropyLinearBackward(b *testing.B) {
	const m, in, out = 146, 128, 30522
	rng := rand.New(rand.NewPCG(3, 4))
	logits0, x, w := randSlice(rng, m*out, 3), randSlice(rng, m*in, 1), randSlice(rng, out*in, 0.1)
	labels := make([]int, m)
	for i := range labels {
		labels[i] = rng.IntN(out)
	}
	logits, dx, dw, db := make([]float32, m*out), make([]float32, m*in), make([]float32, out*in), make([]float32, out)
	for _, bias := range []bool{true, false} {
		for _, procs := range benchProcs() {
			b.Run(fmt.Sprintf("bias=%v/procs=%d", bias, procs), func(b *testing.B) {
				prev := runtime.GOMAXPROCS(procs)
				defer runtime.GOMAXPROCS(prev)
				d := db
				if !bias {
					d = nil
				}
				var elapsed time.Duration
				for b.Loop() {
					copy(logits, logits0)
					t0 := time.Now()
					SoftmaxCrossEntropyLinearBackward(dx, dw, d, logits, labels, 1.0/m, x, w, m, in, out, false)
					elapsed += time.Since(t0)
				}
				b.ReportMetric(float64(elapsed.Microseconds())/1e3/float64(b.N), "ms/call")
			})
		}
	}
}
