package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkGELU times the exact GELU and the softmax of rows over BERT-Base's shapes at
// sequence length 128: the intermediate activation [128, 3072] and the attention scores of
// 12 heads [12·128, 128]. Inputs are normal-ish (the activations' spread), so the branches of
// the polynomials are taken as in a forward pass.
func BenchmarkGELU(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 128*3072)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 2)
	}
	x := make([]float32, len(src))
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		copy(x, src)
		GELU(x)
	}
}

// BenchmarkGELUBackward times the exact GELU's backward (dx = dy·GELU'(x)) on BenchmarkGELU's
// input.
func BenchmarkGELUBackward(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 128*3072)
	dy := make([]float32, len(x))
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 2)
		dy[i] = float32(rng.NormFloat64())
	}
	dx := make([]float32, len(x))
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		GELUBackward(dx, dy, x)
	}
}

// BenchmarkGELUTanh times gelu_new (ALBERT's activation) and its backward on the intermediate
// activation of BERT-Base's shape, [128, 3072], inputs as BenchmarkGELU's.
func BenchmarkGELUTanh(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 128*3072)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 2)
	}
	x, d := make([]float32, len(src)), make([]float32, len(src))
	b.Run("forward", func(b *testing.B) {
		b.SetBytes(int64(4 * len(src)))
		for b.Loop() {
			copy(x, src)
			GELUTanh(x)
		}
	})
	b.Run("backward", func(b *testing.B) {
		b.SetBytes(int64(4 * len(src)))
		for b.Loop() {
			copy(d, src)
			GELUTanhBackward(d, d, src)
		}
	})
}

// BenchmarkSoftmax times SoftmaxRows on 12 heads of [128, 128] attention scores.
func BenchmarkSoftmax(b *testing.B) {
	const n = 128
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, 12*n*n)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 3)
	}
	x := make([]float32, len(src))
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		copy(x, src)
		SoftmaxRows(x, n, nil)
	}
}

// BenchmarkSumRows times the bias gradient of Tiny's tied MLM decoder in a training step: the
// column sums of d loss / d logits, [146 labelled rows, 30,522 words].
func BenchmarkSumRows(b *testing.B) {
	const m, n = 146, 30522
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, m*n)
	for i := range x {
		x[i] = rng.Float32() - 0.5
	}
	dst := make([]float32, n)
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		SumRows(dst, x, n)
	}
}

// BenchmarkLayerNormBackward times LayerNormBackward on a training step's shapes (1,024 tokens
// of BERT-Tiny, Mini and Base) on one goroutine and split over GOMAXPROCS, with the CPU time it
// took: the split is worth it only where its wall time is below the one goroutine's.
func BenchmarkLayerNormBackward(b *testing.B) {
	for _, n := range []int{128, 256, 768} {
		const rows = 1024
		rng := rand.New(rand.NewPCG(7, uint64(n)))
		x, dy, dx := randSlice(rng, rows*n, 0.3), randSlice(rng, rows*n, 0.3), make([]float32, rows*n)
		gamma, dg, db := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range gamma {
			gamma[i] = 1 + 0.1*rng.Float32()
		}
		mean, rstd := make([]float32, rows), make([]float32, rows)
		for i := range mean {
			mean[i], rstd[i] = 0.01, 3.4
		}
		for _, chunks := range benchProcs() {
			b.Run(fmt.Sprintf("%dx%d/chunks=%d", rows, n, chunks), func(b *testing.B) {
				b.SetBytes(int64(4 * 3 * len(x)))
				cpu0 := cpuSeconds()
				for b.Loop() {
					layerNormBackwardChunks(chunks, dx, dg, db, dy, x, gamma, mean, rstd, n)
				}
				if cpu1 := cpuSeconds(); cpu0 >= 0 {
					b.ReportMetric((cpu1-cpu0)*1e6/float64(b.N), "cpu-µs/op")
				}
			})
		}
	}
}
