package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// GemmPackedB with a weight packed once gives the bits of Gemm(false, true, …) with the raw
// weight, for every kernel of this build, one goroutine and two, across the blocking's edges
// (k past kc, n past nc, m past mc, ragged tiles), strided operands, and alpha and beta; and
// both stay near the plain triple loop.
func TestGemmPackedB(t *testing.T) {
	tests := []struct {
		m, n, k     int
		lda, ldc    int // 0: dense
		alpha, beta float32
	}{
		{1, 1, 1, 0, 0, 1, 0},
		{3, 5, 7, 0, 0, 1, 0},
		{16, 128, 128, 0, 0, 1, 0},
		{1, 600, 64, 0, 0, 1, 0},     // one row through a decoder-like weight, n past nc
		{17, 100, 300, 0, 0, 0.5, 0}, // k past kc
		{130, 520, 260, 0, 0, 1, 0},  // every dimension past its block
		{9, 33, 40, 45, 37, 2, 0.5},  // strided, beta
		{40, 9, 70, 0, 0, 1, 1},      // splits by rows (m > n)
		// Split by columns with A packed once and shared (packSharedA): a weight past 1 MiB
		// with ragged rows and two depth blocks, then short A over three depth blocks.
		{70, 1100, 300, 310, 1110, 0.5, 0.25},
		{9, 40, 600, 0, 0, 1, 0},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float32 { return randSlice(rng, n, 1) }
	for _, tc := range tests {
		lda, ldc := max(tc.lda, tc.k), max(tc.ldc, tc.n)
		a, w, c0 := fill(tc.m*lda), fill(tc.n*tc.k), fill(tc.m*ldc)
		ref := append([]float32(nil), c0...)
		gemmRef(false, true, tc.m, tc.n, tc.k, tc.alpha, a, lda, w, tc.k, tc.beta, ref, ldc)
		for _, kern := range gemmKernels() {
			pb := packTransB(kern, w, tc.n, tc.k)
			for _, threads := range []int{1, 2, 3} {
				want := append([]float32(nil), c0...)
				gemmWith(kern, threads, false, true, tc.m, tc.n, tc.k, tc.alpha, a, lda, w, tc.k, tc.beta, want, ldc)
				got := append([]float32(nil), c0...)
				gemmPackedWith(threads, tc.m, tc.alpha, a, lda, pb, tc.beta, got, ldc, epilogue{})
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%dx%dx%d %s, %d goroutines: C[%d] = %g packed, %g with Gemm", tc.m, tc.n, tc.k, kern.name, threads, i, got[i], want[i])
					}
					if d := math.Abs(float64(got[i] - ref[i])); d > 1e-4*float64(tc.k) {
						t.Fatalf("%dx%dx%d %s: C[%d] = %g, triple loop %g", tc.m, tc.n, tc.k, kern.name, i, got[i], ref[i])
					}
				}
			}
		}
	}
}

// Unpack gives back the packed weight bit for bit, for every kernel of this build, across
// ragged slivers and depth blocks (k past kc), and leaves nothing past N×K touched.
func TestPackedBUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][2]int{{1, 1}, {3, 7}, {17, 5}, {33, 300}, {100, 600}, {1100, 257}} {
		n, k := s[0], s[1]
		w := randSlice(rng, n*k, 1)
		for _, kern := range gemmKernels() {
			pb := packTransB(kern, w, n, k)
			got := make([]float32, n*k+3)
			got[n*k], got[n*k+1], got[n*k+2] = 7, 8, 9
			pb.Unpack(got)
			for i := range w {
				if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
					t.Fatalf("%dx%d %s: w[%d] = %g unpacked, %g packed", n, k, kern.name, i, got[i], w[i])
				}
			}
			if got[n*k] != 7 || got[n*k+1] != 8 || got[n*k+2] != 9 {
				t.Fatalf("%dx%d %s: Unpack wrote past the weight: %v", n, k, kern.name, got[n*k:])
			}
		}
	}
}

// LinearPacked equals Linear bit for bit, bias and all.
func TestLinearPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const m, in, out = 7, 96, 50
	x, w, b := make([]float32, m*in), make([]float32, out*in), make([]float32, out)
	for _, s := range [][]float32{x, w, b} {
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
	}
	want, got := make([]float32, m*out), make([]float32, m*out)
	MatMulTransB(want, x, w, m, in, out)
	AddBias(want, b, out)
	LinearPacked(got, x, PackTransB(w, out, in), b, m)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("y[%d] = %g packed, %g with MatMulTransB and AddBias", i, got[i], want[i])
		}
	}
}

// LinearPackedAct, whose goroutines each add the bias and apply the activation to their own
// strip (by columns, or by rows when m > n), gives the bits of Linear followed by the
// activation over all of y, for one to three goroutines, with and without a bias, and the
// activation nil, GELU and Tanh, on shapes whose strips end inside a vector.
func TestLinearPackedAct(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	fill := func(n int) []float32 { return randSlice(rng, n, 1) }
	acts := []struct {
		name string
		f    func([]float32)
	}{{"none", nil}, {"gelu", GELU}, {"tanh", Tanh}}
	for _, sh := range []struct{ m, in, out int }{{1, 5, 3}, {7, 96, 50}, {16, 128, 512}, {130, 70, 37}, {33, 64, 200}} {
		x, w, b := fill(sh.m*sh.in), fill(sh.out*sh.in), fill(sh.out)
		pb := PackTransB(w, sh.out, sh.in)
		for _, bias := range [][]float32{nil, b} {
			for _, act := range acts {
				want := make([]float32, sh.m*sh.out)
				MatMulTransB(want, x, w, sh.m, sh.in, sh.out)
				if bias != nil {
					AddBias(want, bias, sh.out)
				}
				if act.f != nil {
					act.f(want)
				}
				for threads := 1; threads <= 3; threads++ {
					got := fill(sh.m * sh.out) // overwritten: beta is 0
					ep := epilogue{bias: bias, act: act.f}
					gemmPackedWith(threads, sh.m, 1, x, sh.in, pb, 0, got, sh.out, ep)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%dx%dx%d bias %v act %s, %d goroutines: y[%d] = %g, want %g",
								sh.m, sh.in, sh.out, bias != nil, act.name, threads, i, got[i], want[i])
						}
					}
				}
				got := make([]float32, sh.m*sh.out)
				LinearPackedAct(got, x, pb, bias, sh.m, act.f)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("LinearPackedAct %dx%dx%d: y[%d] = %g, want %g", sh.m, sh.in, sh.out, i, got[i], want[i])
					}
				}
			}
		}
	}
}
