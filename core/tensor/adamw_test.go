package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamWGradScale checks that AdamW with GradScale s gives the same bits as scaling the
// gradient by s in memory first (Scale, what clipping did before it was folded into the
// optimizer) and then stepping with GradScale 1, and that the gradient is left as it was.
func TestAdamWGradScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 5, 16, 17, 100, 1003} {
		for _, s := range []float32{1, 0.37, 1e-3} {
			w, m, v, g := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
				m[i] = float32(rng.NormFloat64()) * 1e-3
				v[i] = float32(rng.Float64()) * 1e-6
				g[i] = float32(rng.NormFloat64()) * float32(math.Pow(10, float64(rng.IntN(5)-3)))
			}
			w2, m2, v2 := append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)
			g0, gs := append([]float32(nil), g...), append([]float32(nil), g...)
			c := AdamWConsts{Beta1: 0.9, OneMinusBeta1: 1 - float32(0.9), Beta2: 0.999, OneMinusBeta2: 1 - float32(0.999),
				BC2Sqrt: 0.04, Eps: 1e-8, StepSize: 2e-3, Decay: 0.99999, GradScale: s}
			AdamW(w, m, v, g, &c)
			Scale(gs, s)
			c.GradScale = 1
			AdamW(w2, m2, v2, gs, &c)
			for i := range w {
				if math.Float32bits(w[i]) != math.Float32bits(w2[i]) || math.Float32bits(m[i]) != math.Float32bits(m2[i]) || math.Float32bits(v[i]) != math.Float32bits(v2[i]) {
					t.Fatalf("n=%d scale %g [%d]: w m v %g %g %g, scaled first %g %g %g", n, s, i, w[i], m[i], v[i], w2[i], m2[i], v2[i])
				}
				if math.Float32bits(g[i]) != math.Float32bits(g0[i]) {
					t.Fatalf("n=%d scale %g [%d]: the gradient changed from %g to %g", n, s, i, g0[i], g[i])
				}
			}
		}
	}
}
