//go:build amd64 && !purego

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// forEachAsm runs f once for each assembly instruction set this CPU has, with opsLevel set
// to it, and says which ones it cannot test here.
func forEachAsm(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, l := range []struct {
		name  string
		level int
		has   bool
	}{{"avx512", opsAVX512, cpu.X86.HasAVX512F}, {"avx2", opsAVX2, cpu.X86.HasAVX2}} {
		t.Run(l.name, func(t *testing.T) {
			if !l.has {
				t.Skipf("the CPU lacks %s: its kernels are not tested here", l.name)
			}
			defer func(was int) { opsLevel = was }(opsLevel)
			opsLevel = l.level
			f(t)
		})
	}
}

// opsSizes are the lengths the kernels are compared on: empty, shorter than a vector, one
// vector, odd tails, and rows of BERT shapes.
var opsSizes = []int{0, 1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100, 128, 255, 768, 1001}

// opsInput returns n floats with the given spread after an offset of off floats in a larger
// slice, so that the kernels also see slices that do not start on a 64-byte boundary.
func opsInput(rng *rand.Rand, n, off int, spread float64) []float32 {
	buf := make([]float32, n+off+3)
	for i := range buf {
		buf[i] = float32(rng.NormFloat64() * spread)
	}
	return buf[off : off+n]
}

// sameBits reports whether a and b are the same float32, or both NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// specials are inputs at the edges of the kernels' branches.
var specials = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.4142135, -1.4142135, 1.4142137, -1.4142137,
	9.3, -9.3, 13.2, -13.2, 13.3, -13.3, 20, -20, 88.72283, 88.72284, 88.7229, -87.33654, -87.33655, -87.4,
	-103, -104, 1e-30, -1e-30, 1e-45, math.MaxFloat32, -math.MaxFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}

// TestGELUAsmVsGo checks that the assembly GELU and its backward give the Go twins' bits
// on a sweep of every 97th float32 in [-20, 20] (every binade), on the specials and on
// slices of odd lengths and offsets (the tails).
func TestGELUAsmVsGo(t *testing.T) { forEachAsm(t, testGELUAsm) }

func testGELUAsm(t *testing.T) {
	var xs []float32
	erfSweep(20, 97, func(x float32) { xs = append(xs, x) })
	xs = append(xs, specials...)
	check := func(name string, xs []float32) {
		t.Helper()
		want := append([]float32(nil), xs...)
		geluGo(want)
		got := append([]float32(nil), xs...)
		gelu(got)
		dy := make([]float32, len(xs))
		for i := range dy {
			dy[i] = 1 + float32(i%7)*0.37
		}
		wantB := make([]float32, len(xs))
		geluBackwardGo(wantB, dy, xs)
		gotB := make([]float32, len(xs))
		geluBackward(gotB, dy, xs)
		for i, x := range xs {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("%s: gelu(%g) = %g (%#x), Go twin %g (%#x)", name, x, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
			if !sameBits(gotB[i], wantB[i]) {
				t.Fatalf("%s: GELU'(%g)·%g = %g, Go twin %g", name, x, dy[i], gotB[i], wantB[i])
			}
		}
	}
	check("sweep", xs)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range opsSizes[1:] {
		for _, off := range []int{0, 1, 3} {
			x := opsInput(rng, n, off, 3)
			// The kernel must not write past the slice: compare the floats after it.
			full := x[:n+3]
			after := append([]float32(nil), full[n:]...)
			check("random", x)
			xc := append(x[:0:0], x...)
			gelu(x)
			geluGo(xc)
			for i := range x {
				if !sameBits(x[i], xc[i]) {
					t.Fatalf("n=%d off=%d: in place [%d] %g, Go twin %g", n, off, i, x[i], xc[i])
				}
			}
			for i, v := range full[n:] {
				if !sameBits(v, after[i]) {
					t.Fatalf("n=%d off=%d: wrote past the slice", n, off)
				}
			}
		}
	}
}

// sumLanes512 is the float64 sum of x in the order of expSumAVX512 (and sumAVX512): element
// i goes to lane i%8 of the accumulator lo when i%16 < 8, else of hi; then lo+hi, lane by
// lane, is halved twice (HSUMPD).
func sumLanes512(x []float32) float64 {
	var lo, hi [8]float64
	for i, v := range x {
		if i%16 < 8 {
			lo[i%8] += float64(v)
		} else {
			hi[i%8] += float64(v)
		}
	}
	var z [8]float64
	for l := range z {
		z[l] = lo[l] + hi[l]
	}
	y := [4]float64{z[0] + z[4], z[1] + z[5], z[2] + z[6], z[3] + z[7]}
	return (y[0] + y[2]) + (y[1] + y[3])
}

// TestExpSumAsmVsGo checks the vector expf of expSum bit for bit against expf over every
// 89th float32 in [-110, 110] and the specials, the float64 sum within rounding of the
// ordered sum (AVX-512: exactly the sum in its lane order, sumLanes512), and maxAdd against
// rowMaxGo.
func TestExpSumAsmVsGo(t *testing.T) { forEachAsm(t, testExpSumAsm) }

func testExpSumAsm(t *testing.T) {
	var xs []float32
	erfSweep(110, 89, func(x float32) { xs = append(xs, x) })
	xs = append(xs, specials...)
	got := make([]float32, len(xs))
	s := expSum(got, xs, nil, 0)
	for i, x := range xs {
		if want := expf(x); !sameBits(got[i], want) {
			t.Fatalf("exp(%g) = %g (%#x), expf %g (%#x)", x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
		}
	}
	if !math.IsNaN(s) { // a NaN is among the specials
		t.Errorf("sum with a NaN = %g", s)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range opsSizes[1:] {
		for _, off := range []int{0, 1, 5} {
			// Spread 4 keeps every float64 sum exact; spread 30 (offset 5) gives exponentials
			// far apart, whose sums round: then only the right order gives the same bits.
			spread := 4.0
			if off == 5 {
				spread = 30
			}
			x := opsInput(rng, n, off, spread)
			mask := opsInput(rng, n, 2, 1)
			for i := range mask {
				if i%5 == 1 {
					mask[i] = -10000
				}
			}
			for _, m := range [][]float32{nil, mask} {
				sum := append([]float32(nil), x...)
				if m != nil {
					addMask(sum, m)
				}
				mx := maxAdd(x, m)
				if w := rowMaxGo(sum); mx != w {
					t.Fatalf("n=%d: max %g, rowMaxGo %g", n, mx, w)
				}
				dst := make([]float32, n+1)
				dst[n] = 42
				s := expSum(dst[:n], x, m, mx)
				want := make([]float32, n)
				ws := expShiftSumGo(want, sum, mx)
				for i := range want {
					if !sameBits(dst[i], want[i]) {
						t.Fatalf("n=%d mask=%v: [%d] %g, Go twin %g", n, m != nil, i, dst[i], want[i])
					}
				}
				if dst[n] != 42 {
					t.Fatalf("n=%d: wrote past dst", n)
				}
				if math.Abs(s-ws) > 1e-15*ws*float64(n) {
					t.Fatalf("n=%d: sum %g, ordered sum %g", n, s, ws)
				}
				if opsLevel == opsAVX512 {
					// The exact order of the AVX-512 sum, two vectors a turn or one.
					if l := sumLanes512(want); s != l {
						t.Fatalf("n=%d mask=%v: sum %v, the 16-lane order gives %v", n, m != nil, s, l)
					}
				}
			}
		}
	}
	if got := maxAdd(nil, nil); !math.IsInf(float64(got), -1) {
		t.Errorf("max of nothing = %g, want -Inf", got)
	}
}

// TestRowKernelsAsmVsGo compares softmax, LayerNorm (alone and after a residual add), the
// column sums of SumRows, the sum of squares, Scale and AdamW with their Go twins on odd
// lengths and offsets: element-wise results bit for bit, the rest within a few float32 ulp
// (the order of the sums differs).
func TestRowKernelsAsmVsGo(t *testing.T) { forEachAsm(t, testRowKernelsAsm) }

func testRowKernelsAsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range opsSizes[1:] {
		for _, off := range []int{0, 1, 7} {
			x := opsInput(rng, n, off, 3)
			mask := opsInput(rng, n, 1, 1)
			mask[n/2] = -10000
			got := append([]float32(nil), x...)
			want := append([]float32(nil), x...)
			softmaxRowMask(got, mask)
			softmaxRowMaskGo(want, mask)
			// The kernel sums in float64, the twin in float32 in order: the kernel is held
			// to 3 ulp of a float64 softmax, the twin agrees within its own sum's rounding.
			ref := make([]float64, n)
			mx, sum64 := math.Inf(-1), 0.0
			for i := range ref {
				ref[i] = float64(x[i] + mask[i])
				mx = math.Max(mx, ref[i])
			}
			for i := range ref {
				// The shift in float32, as both kernels (and torch) take it.
				ref[i] = math.Exp(float64(float32(ref[i]) - float32(mx)))
				sum64 += ref[i]
			}
			for i := range got {
				if ulps(got[i], float32(ref[i]/sum64)) > 3 || math.Abs(float64(got[i]-want[i])) > 1e-6*float64(want[i]) {
					t.Fatalf("softmax n=%d [%d]: %g, Go twin %g, float64 %g", n, i, got[i], want[i], ref[i]/sum64)
				}
			}

			g := opsInput(rng, n, off, 1)
			b := opsInput(rng, n, 2, 1)
			shifted := append([]float32(nil), x...)
			for i := range shifted {
				shifted[i] += 50 // a mean far from 0, where a float32 sum would lose digits
			}
			out := make([]float32, n)
			wout := make([]float32, n)
			m1, r1 := layerNormRow(out, shifted, g, b, 1e-12)
			m2, r2 := layerNormRowGo(wout, shifted, g, b, 1e-12)
			if ulps(m1, m2) > 1 || ulps(r1, r2) > 1 {
				t.Fatalf("LayerNorm n=%d: mean, rstd %g, %g; Go twin %g, %g", n, m1, r1, m2, r2)
			}
			for i := range out {
				if math.Abs(float64(out[i]-wout[i])) > 1e-5*(1+math.Abs(float64(wout[i]))) {
					t.Fatalf("LayerNorm n=%d [%d]: %g, Go twin %g", n, i, out[i], wout[i])
				}
			}
			sum := make([]float32, n)
			wsum := make([]float32, n)
			addLayerNormRow(sum, out, x, shifted, g, b, 1e-12)
			addLayerNormRowGo(wsum, wout, x, shifted, g, b, 1e-12)
			for i := range out {
				if !sameBits(sum[i], wsum[i]) || math.Abs(float64(out[i]-wout[i])) > 1e-5*(1+math.Abs(float64(wout[i]))) {
					t.Fatalf("AddLayerNorm n=%d [%d]: sum %g out %g, Go twin %g %g", n, i, sum[i], out[i], wsum[i], wout[i])
				}
			}

			acc0 := make([]float64, n)
			for i := range acc0 {
				acc0[i] = float64(i) * 0.1
			}
			checkAddCols(t, x, acc0)

			ss, wss := sumSquares(x), sumSquaresGo(x)
			if math.Abs(ss-wss) > 1e-14*wss {
				t.Fatalf("sumSquares n=%d: %g, Go twin %g", n, ss, wss)
			}
			y := opsInput(rng, n, 0, 3)
			ad, wad := make([]float32, n+1), make([]float32, n)
			ad[n] = 42
			add(ad[:n], x, y)
			addGo(wad, x, y)
			for i := range wad {
				if !sameBits(ad[i], wad[i]) {
					t.Fatalf("add n=%d [%d]: %g, Go twin %g", n, i, ad[i], wad[i])
				}
			}
			if ad[n] != 42 {
				t.Fatalf("add n=%d wrote past dst", n)
			}
			inPlace := append([]float32(nil), x...)
			add(inPlace, inPlace, y) // dst aliasing a, as AddBias calls it
			for i := range wad {
				if !sameBits(inPlace[i], wad[i]) {
					t.Fatalf("add in place n=%d [%d]: %g, Go twin %g", n, i, inPlace[i], wad[i])
				}
			}
			sc, wsc := append([]float32(nil), x...), append([]float32(nil), x...)
			scale(sc, 0.37)
			scaleGo(wsc, 0.37)
			for i := range sc {
				if !sameBits(sc[i], wsc[i]) {
					t.Fatalf("scale n=%d [%d]: %g, Go twin %g", n, i, sc[i], wsc[i])
				}
			}

			c := &AdamWConsts{Beta1: 0.9, OneMinusBeta1: 1 - float32(0.9), Beta2: 0.999, OneMinusBeta2: 1 - float32(0.999),
				BC2Sqrt: 0.05, Eps: 1e-6, StepSize: 1e-3, Decay: 0.9999}
			for _, dg := range [][2]float32{{c.Decay, 1}, {1, 1}, {c.Decay, 0.37}} {
				c.Decay, c.GradScale = dg[0], dg[1]
				w, m, v := opsInput(rng, n, off, 0.1), opsInput(rng, n, 1, 0.01), opsInput(rng, n, 0, 0.001)
				for i := range v {
					v[i] *= v[i]
				}
				ww, wm, wv := append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)
				adamw(w, m, v, x, c)
				adamwGo(ww, wm, wv, x, c)
				for i := range w {
					if !sameBits(w[i], ww[i]) || !sameBits(m[i], wm[i]) || !sameBits(v[i], wv[i]) {
						t.Fatalf("AdamW n=%d decay %g grad scale %g [%d]: w m v %g %g %g, Go twin %g %g %g", n, c.Decay, c.GradScale, i, w[i], m[i], v[i], ww[i], wm[i], wv[i])
					}
				}
			}
		}
	}
}

// GELUWithDerivative and Mul on each instruction set: the bits of that set's GELU and
// GELUBackward (the pure-Go twins take the tails past whole vectors).
func TestGELUWithDerivativeAsm(t *testing.T) { forEachAsm(t, checkGELUWithDerivative) }

// TestMaskScaleAsm runs TestMaskScale's checks on each instruction set.
func TestMaskScaleAsm(t *testing.T) { forEachAsm(t, TestMaskScale) }

// TestBackwardRowKernelsAsm runs the tests of LayerNormBackward's and SoftmaxBackward's
// eight-row kernels on each instruction set the CPU has (AVX-512's eight rows at once, AVX2's
// two runs of four), each against the row loop or the Go twins bit for bit.
func TestBackwardRowKernelsAsm(t *testing.T) {
	forEachAsm(t, func(t *testing.T) {
		t.Run("Sums8", TestLayerNormBackwardSums8)
		t.Run("RowPairs", TestLayerNormBackwardRowPairs)
		t.Run("Chunks", TestBackwardChunks)
		t.Run("Softmax", TestSoftmaxBackwardRows)
	})
}
