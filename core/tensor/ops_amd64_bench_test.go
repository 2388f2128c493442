//go:build amd64 && !purego

package tensor

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// BenchmarkOpsKernels times each assembly kernel (AVX2, AVX-512) against its pure-Go twin (the code it
// replaced) in the same process, on the shapes of a BERT-Tiny pre-training step (batch 8 x
// 128 tokens, intermediate 512, 2 heads, uncased vocabulary of 30,522) and BERT-Base's
// [128, 3072] GELU: run with -count and compare the go/, avx2/ and avx512/ medians.
func BenchmarkOpsKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	norm := func(n int, s float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * s)
		}
		return x
	}
	const rows, H, I, V, S = 1024, 128, 512, 30522, 128
	geluIn := norm(128*3072, 2)
	geluX := make([]float32, len(geluIn))
	dy := norm(rows*I, 1)
	bx := norm(rows*I, 2)
	dx := make([]float32, rows*I)
	db := make([]float32, I)
	scores := norm(8*2*S*S, 3)
	sx := make([]float32, len(scores))
	mask := make([]float32, S)
	for j := 100; j < S; j++ {
		mask[j] = -10000
	}
	lnA, lnB := norm(rows*H, 1), norm(rows*H, 1)
	gamma, beta := norm(H, 1), norm(H, 0.1)
	lnSum, lnOut := make([]float32, rows*H), make([]float32, rows*H)
	logits := norm(16*V, 2)
	dl := make([]float32, 16*V)
	const P = 4_400_000 // BERT-Tiny's parameters with the uncased vocabulary
	w, m, v, g := norm(P, 0.02), norm(P, 0.001), norm(P, 0.001), norm(P, 0.01)
	for i := range v {
		v[i] *= v[i]
	}
	ac := &AdamWConsts{Beta1: 0.9, OneMinusBeta1: 1 - float32(0.9), Beta2: 0.999, OneMinusBeta2: 1 - float32(0.999),
		BC2Sqrt: 0.3, Eps: 1e-6, StepSize: 1e-4, Decay: 0.99999, GradScale: 0.5}
	cases := []struct {
		name string
		f    func()
	}{
		{"GELU-128x3072", func() { copy(geluX, geluIn); GELU(geluX) }},
		{"GELUBackward-1024x512", func() { GELUBackward(dx, dy, bx) }},
		{"SoftmaxMask-16x128x128", func() { copy(sx, scores); SoftmaxRows(sx, S, mask) }},
		{"AddLayerNorm-1024x128", func() { AddLayerNorm(lnSum, lnOut, lnA, lnB, gamma, beta, H, 1e-12, nil, nil) }},
		{"CrossEntropy-16x30522", func() {
			for r := range 16 {
				SoftmaxCrossEntropyBackward(dl[r*V:(r+1)*V], logits[r*V:(r+1)*V], r, 1)
			}
		}},
		{"AdamW-4.4M", func() { AdamW(w, m, v, g, ac) }},
		{"SumSquares-4.4M", func() { SumSquares(g) }},
		{"SumRows-1024x512", func() { SumRows(db, dy, I) }},
	}
	for _, c := range cases {
		for _, k := range []struct {
			name  string
			level int
			has   bool
		}{{"go", opsGo, true}, {"avx2", opsAVX2, cpu.X86.HasAVX2}, {"avx512", opsAVX512, cpu.X86.HasAVX512F}} {
			if !k.has {
				continue
			}
			b.Run(k.name+"/"+c.name, func(b *testing.B) {
				defer func(was int) { opsLevel = was }(opsLevel)
				opsLevel = k.level
				cpu0 := cpuSeconds()
				for b.Loop() {
					c.f()
				}
				if cpu1 := cpuSeconds(); cpu0 >= 0 {
					b.ReportMetric((cpu1-cpu0)*1e6/float64(b.N), "cpu-µs/op")
				}
			})
		}
	}
}
