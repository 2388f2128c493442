//go:build wasm && goexperiment.simd && !purego

package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"simd"
	"testing"
)

// These tests run only in the wasm SIMD build (make test-wasm runs them with Go 1.27's
// GOEXPERIMENT=simd in Node): each SIMD kernel against its pure-Go twin and a float64
// reference. The GEMM kernel is also in gemmKernels, so every test in gemm_test.go runs it too.

func TestSIMDLanes(t *testing.T) {
	var v simd.Float32s
	if v.Len() != simdLanes {
		t.Fatalf("simd.Float32s has %d lanes, the kernels are written for %d", v.Len(), simdLanes)
	}
	if simd.Emulated() {
		t.Errorf("the simd package is emulated: the kernels would be slower than their pure-Go twins")
	}
}

func TestGemmKernelSelectionSIMD(t *testing.T) {
	ks := gemmKernels()
	if len(ks) != 2 || ks[0] != gemmSIMD2x16 || ks[1] != gemmGo2x4 {
		t.Fatalf("gemmKernels() = %v, want [simd-2x16 go-2x4]", ks)
	}
	if gemmDefault != gemmSIMD2x16 {
		t.Errorf("Gemm uses %s, want %s", gemmDefault.name, gemmSIMD2x16.name)
	}
	if k := gemmSIMD2x16; k.mc%k.mr != 0 || k.nc%k.nr != 0 {
		t.Errorf("%s: blocking mc %d, nc %d is not a whole number of %dx%d tiles", k.name, k.mc, k.nc, k.mr, k.nr)
	}
}

// TestGemmSIMDvsGo compares the SIMD kernel with the pure-Go kernel and with gonum (and the
// float64 reference) on shapes that are not multiples of the 2×16 tile, through the driver,
// with the real blocking and with one small enough to take every loop of the driver.
func TestGemmSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	small := *gemmSIMD2x16
	small.kc, small.mc, small.nc = 7, 4, 32
	kerns := []*gemmKernel{gemmSIMD2x16, &small}
	shapes := []gemmShape{{1, 1, 1}, {1, 17, 3}, {3, 15, 1}, {2, 16, 2}, {5, 33, 9}, {13, 47, 31}, {37, 129, 257}, {130, 530, 258}}
	params := []gemmParams{{alpha: 1, beta: 0, pad: 1, off: 1, nanC: true}, {alpha: -0.5, beta: 1.5, pad: 3, off: 2}}
	for _, s := range shapes {
		for _, pr := range params {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					p := newGemmProblem(rng, tA, tB, s.m, s.n, s.k, pr.alpha, pr.beta, pr.pad, pr.off, pr.nanC)
					goWin := p.run(t, "go-2x4", func(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
						gemmWith(gemmGo2x4, 1, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					})
					gon := p.run(t, "gonum", gemmGonum)
					for i, kern := range kerns {
						name := fmt.Sprintf("%s#%d", kern.name, i)
						got := p.run(t, name, func(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
							gemmWith(kern, 1, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
						})
						p.agree(t, name, "go-2x4", got, goWin)
						p.agree(t, name, "gonum", got, gon)
					}
				}
			}
		}
	}
}

func TestExpSIMD(t *testing.T) {
	var worst int64
	var at float32
	var in, out [simdLanes]float32
	check := func(xs [simdLanes]float32) {
		in = xs
		expSIMD(simd.LoadFloat32s(in[:])).Store(out[:])
		for i, x := range in {
			want := float32(math.Exp(float64(x)))
			if x < -87.33654475055310898657 {
				want = 0 // below the smallest normal float32
			}
			if u := ulps(out[i], want); u > worst {
				worst, at = u, x
			}
		}
	}
	rng := rand.New(rand.NewPCG(23, 24))
	for n := 0; n < 250_000; n++ { // not "for range N": the simd rewriter of Go 1.27.3 crashes on it
		var xs [simdLanes]float32
		for i := range xs {
			xs[i] = float32(-rng.Float64() * 90)
		}
		check(xs)
	}
	check([simdLanes]float32{0, float32(math.Copysign(0, -1)), -1e-30, -87.33654})
	check([simdLanes]float32{-87.3366, -100, float32(math.Inf(-1)), -math.MaxFloat32})
	t.Logf("worst: %d ulp at %g", worst, at)
	if worst > 2 {
		t.Errorf("expSIMD(%g): %d ulp from exp", at, worst)
	}
	in = [simdLanes]float32{float32(math.NaN()), 0, 0, 0}
	expSIMD(simd.LoadFloat32s(in[:])).Store(out[:])
	if out[0] == out[0] {
		t.Errorf("expSIMD(NaN) = %g", out[0])
	}
}

// geluRef is the exact GELU in float64.
func geluRef(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// TestGELUSIMDAccuracy checks the float32 polynomial GELU against the float64 one, math.Erf's,
// on a dense grid of [-16, 16] (every 2^-15, 1,048,577 points: where the polynomials and their
// seams are) and on 2^20 random float32 bit patterns (every magnitude): the largest absolute
// error must be at most 1e-6.
func TestGELUSIMDAccuracy(t *testing.T) {
	const tol = 1e-6
	xs := make([]float32, 0, 1<<21+16)
	for i := -1 << 19; i <= 1<<19; i++ {
		xs = append(xs, float32(i)/(1<<15))
	}
	rng := rand.New(rand.NewPCG(25, 26))
	for n := 0; n < 1<<20; n++ {
		x := math.Float32frombits(rng.Uint32())
		if x != x || math.IsInf(float64(x), 0) {
			continue
		}
		xs = append(xs, x)
	}
	// The seams of the two regions (|x/√2| = 1 and 9), and the extremes.
	for _, x := range []float64{math.Sqrt2, 9 * math.Sqrt2, math.SmallestNonzeroFloat32, 1e-30, math.MaxFloat32} {
		for _, d := range []float32{-1, 0, 1} {
			v := float32(x)
			v = math.Float32frombits(uint32(int32(math.Float32bits(v)) + int32(d)))
			if !math.IsInf(float64(v), 0) {
				xs = append(xs, v, -v)
			}
		}
	}
	got := append([]float32(nil), xs...)
	gelu(got)
	var worst float64
	var at float32
	for i, x := range xs {
		want := geluRef(float64(x))
		if d := math.Abs(float64(got[i]) - want); !(d <= worst) {
			worst, at = d, x
		}
	}
	t.Logf("%d points: largest |gelu - GELU(float64)| = %.3g at x = %g", len(xs), worst, at)
	if !(worst <= tol) {
		t.Errorf("gelu(%g) = %g, float64 GELU %g: error %.3g > %g", at, got[slicesIndex(xs, at)], geluRef(float64(at)), worst, tol)
	}
	// Specials: ±0 keep their sign, +Inf stays, NaN and -Inf give NaN as geluGo does.
	sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	want := append([]float32(nil), sp...)
	geluGo(want)
	gelu(sp)
	for i := range sp {
		if math.Float32bits(sp[i]) != math.Float32bits(want[i]) && !(sp[i] != sp[i] && want[i] != want[i]) {
			t.Errorf("special %d: gelu %g, geluGo %g", i, sp[i], want[i])
		}
	}
}

func slicesIndex(xs []float32, v float32) int {
	for i, x := range xs {
		if math.Float32bits(x) == math.Float32bits(v) {
			return i
		}
	}
	return -1
}

// TestGELUSIMDvsGo compares GELU with geluGo on lengths that are not multiples of 4 (the tail).
func TestGELUSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 1023, 1024, 1025} {
		x := randSlice(rng, n, 3)
		want := append([]float32(nil), x...)
		geluGo(want)
		GELU(x)
		for i := range x {
			if d := math.Abs(float64(x[i] - want[i])); d > 1e-6 {
				t.Fatalf("n=%d: element %d: GELU %g, geluGo %g", n, i, x[i], want[i])
			}
		}
	}
}

// TestGELUBackwardSIMDvsGo compares GELUBackward (SIMD) with geluBackwardGo on lengths around
// the vector width, in place too (dx = dy), and on the specials (NaN where the Go twin gives
// NaN). TestGELUAccuracy holds both to the float64 derivative.
func TestGELUBackwardSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 1023, 1024, 1025} {
		x, dy := randSlice(rng, n, 4), randSlice(rng, n, 2)
		if n > 3 {
			x[1], x[2], x[3] = float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())
		}
		want := make([]float32, n)
		geluBackwardGo(want, dy, x)
		got := append([]float32(nil), dy...)
		GELUBackward(got, got, x)
		for i := range got {
			if want[i] != want[i] {
				if got[i] == got[i] {
					t.Fatalf("n=%d: element %d (x %g): GELUBackward %g, geluBackwardGo NaN", n, i, x[i], got[i])
				}
				continue
			}
			if d := math.Abs(float64(got[i] - want[i])); !(d <= 4e-7*math.Max(1, math.Abs(float64(dy[i])))) {
				t.Fatalf("n=%d: element %d (x %g, dy %g): GELUBackward %g, geluBackwardGo %g", n, i, x[i], dy[i], got[i], want[i])
			}
		}
	}
}

// TestAddSIMDvsGo: AddBias and Add (SIMD) give the bits of addGo, in place too.
func TestAddSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{1, 3, 4, 5, 8, 9, 127, 128, 129} {
		x, y := randSlice(rng, 3*n, 3), randSlice(rng, n, 3)
		want := append([]float32(nil), x...)
		for r := 0; r < 3; r++ {
			addGo(want[r*n:(r+1)*n], want[r*n:(r+1)*n], y)
		}
		got := append([]float32(nil), x...)
		AddBias(got, y, n)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: element %d: AddBias %g, addGo %g", n, i, got[i], want[i])
			}
		}
		sum := make([]float32, n)
		Add(sum, x[:n], y)
		for i := range sum {
			if math.Float32bits(sum[i]) != math.Float32bits(x[i]+y[i]) {
				t.Fatalf("n=%d: element %d: Add %g, want %g", n, i, sum[i], x[i]+y[i])
			}
		}
	}
}

// TestScaleSIMDvsGo checks Scale (SIMD) against scaleGo bit for bit on lengths around the
// vector width, the specials included.
func TestScaleSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{1, 3, 4, 5, 8, 9, 127, 128, 129} {
		x := randSlice(rng, n, 3)
		x[0] = float32(math.Inf(-1))
		if n > 2 {
			x[2] = float32(math.NaN())
		}
		for _, s := range []float32{0.5, -3, 0, 1e-30} {
			want := append([]float32(nil), x...)
			scaleGo(want, s)
			got := append([]float32(nil), x...)
			Scale(got, s)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("n=%d s=%g: element %d: Scale %g, scaleGo %g", n, s, i, got[i], want[i])
				}
			}
		}
	}
}

// TestSoftmaxSIMDvsGo compares SoftmaxRows (SIMD) with softmaxRowGo and a float64 softmax, with
// and without an additive mask (0 or -1e4, and the float32 minimum that some models use).
func TestSoftmaxSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 128, 129, 1000} {
		for _, withMask := range []bool{false, true} {
			const rows = 3
			x := randSlice(rng, rows*n, 4)
			var mask []float32
			if withMask {
				mask = make([]float32, n)
				for j := range mask {
					switch j % 5 {
					case 1:
						mask[j] = -1e4
					case 3:
						mask[j] = -math.MaxFloat32
					}
				}
				mask[0] = 0
			}
			want := append([]float32(nil), x...)
			for r := 0; r < rows; r++ {
				row := want[r*n : (r+1)*n]
				for j := range row {
					if mask != nil {
						row[j] += mask[j]
					}
				}
				softmaxRowGo(row)
			}
			in := append([]float32(nil), x...)
			SoftmaxRows(x, n, mask)
			for r := 0; r < rows; r++ {
				// float64 reference
				row := in[r*n : (r+1)*n]
				mx := math.Inf(-1)
				v := make([]float64, n)
				for j := range row {
					v[j] = float64(row[j])
					if mask != nil {
						v[j] = float64(row[j] + mask[j])
					}
					mx = math.Max(mx, v[j])
				}
				var s float64
				for j := range v {
					v[j] = math.Exp(v[j] - mx)
					s += v[j]
				}
				for j := range v {
					got, ref := float64(x[r*n+j]), v[j]/s
					if d := math.Abs(got - ref); d > 1e-6*ref+1e-12 {
						t.Fatalf("n=%d mask=%v row %d col %d: %g, float64 softmax %g", n, withMask, r, j, got, ref)
					}
					// softmaxRowGo's sequential float32 sum is the less exact of the two.
					if d := math.Abs(got - float64(want[r*n+j])); d > 1e-5*ref+1e-12 {
						t.Fatalf("n=%d mask=%v row %d col %d: %g, softmaxRowGo %g", n, withMask, r, j, got, want[r*n+j])
					}
				}
			}
		}
	}
}

// TestLayerNormSIMDvsGo compares LayerNorm (SIMD, float32 lanes) with layerNormRowGo (float64
// sums) on rows with a large offset and outliers, where a plain float32 sum loses digits.
func TestLayerNormSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 3, 4, 5, 8, 9, 31, 128, 768, 769, 4096} {
		for _, offset := range []float32{0, 100, -3000} {
			const rows = 3
			x := randSlice(rng, rows*n, 2)
			for i := range x {
				x[i] += offset
				if i%97 == 5 {
					x[i] *= 30 // an outlier, as BERT's hidden states have
				}
			}
			g, b := randSlice(rng, n, 1), randSlice(rng, n, 1)
			got, want := make([]float32, rows*n), make([]float32, rows*n)
			mean, rstd := make([]float32, rows), make([]float32, rows)
			LayerNorm(got, x, g, b, n, 1e-12, mean, rstd)
			for r := 0; r < rows; r++ {
				row := x[r*n : (r+1)*n]
				wm, wr := layerNormRowGo(want[r*n:(r+1)*n], row, g, b, 1e-12)
				if d := math.Abs(float64(mean[r] - wm)); d > 1e-6*math.Abs(float64(wm))+1e-6 {
					t.Errorf("n=%d offset=%g row %d: mean %g, float64 sums %g", n, offset, r, mean[r], wm)
				}
				if n > 1 && math.Abs(float64(rstd[r]-wr)) > 2e-6*float64(wr) {
					t.Errorf("n=%d offset=%g row %d: rstd %g, float64 sums %g", n, offset, r, rstd[r], wr)
				}
				for j := 0; j < n; j++ {
					i := r*n + j
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-5+1e-5*math.Abs(float64(want[i])) {
						t.Fatalf("n=%d offset=%g row %d col %d: %g, layerNormRowGo %g", n, offset, r, j, got[i], want[i])
					}
				}
			}
			// In place, as BERT calls it.
			inPlace := append([]float32(nil), x...)
			LayerNorm(inPlace, inPlace, g, b, n, 1e-12, nil, nil)
			if !equalF32(inPlace, got) {
				t.Errorf("n=%d offset=%g: in place differs", n, offset)
			}
		}
	}
}

// expShiftSum and rowMax with SIMD against their pure-Go twins: every length from 0 to 70 and
// a vocabulary-sized row, the exponentials within 2 ulp of expf's (or both 0 below the
// smallest normal float32), the sum within 1e-12 relative, the maximum exact.
func TestExpShiftSumSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	lengths := []int{30522}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 30) // exponentials down to 0 after the shift
		}
		m, wm := rowMax(x), rowMaxGo(x)
		if m != wm {
			t.Fatalf("n=%d: rowMax %g, Go twin %g", n, m, wm)
		}
		got, want := make([]float32, n), make([]float32, n)
		s, ws := expShiftSum(got, x, wm), expShiftSumGo(want, x, wm)
		for i := range got {
			if d := ulps(got[i], want[i]); d > 2 {
				t.Fatalf("n=%d: exp(x[%d] - max) = %g, expf %g (%d ulp)", n, i, got[i], want[i], d)
			}
		}
		if d := math.Abs(s - ws); d > 1e-12*math.Abs(ws) {
			t.Fatalf("n=%d: sum %g, Go twin %g", n, s, ws)
		}
	}
}

// TestGemmColSIMD2x16 checks the hand-written WebAssembly column of tiles (gemm_simd_wasm.s)
// against the Go kernel tile by tile, bit for bit: the same products added in the same order.
// Depths cover one step, odd and even counts and a whole block; the operands start at every
// offset of a 16-byte vector (v128 loads need not be aligned); C's columns past the tile must
// stay as they were, and with beta 0 C starts as NaN, which must not be read.
func TestGemmColSIMD2x16(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	defer func(on bool) { gemmWasmAsm = on }(gemmWasmAsm)
	for _, kc := range []int{1, 2, 3, 5, 16, 255, 256, 257} {
		for _, tiles := range []int{1, 2, 5} {
			for off := range simdLanes {
				for _, beta := range []float32{0, 1, -0.5} {
					ldc := 16 + 5*(off%2)
					a := randSlice(rng, off+tiles*2*kc, 1)[off:]
					b := randSlice(rng, off+16*kc, 1)[off:]
					c := colTestC(rng, tiles, ldc, beta)
					want, got := append([]float32(nil), c...), append([]float32(nil), c...)
					gemmWasmAsm = false
					gemmColSIMD2x16(kc, tiles, a, b, want, ldc, beta)
					gemmWasmAsm = true
					gemmColSIMD2x16(kc, tiles, a, b, got, ldc, beta)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("kc %d, %d tiles, offset %d, beta %g, ldc %d: c[%d] = %g, the Go kernel gives %g",
								kc, tiles, off, beta, ldc, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// colTestC is C for the column tests, tiles 2×16 tiles down one column: random, with the
// tiles' columns NaN when beta is 0 (C must then not be read).
func colTestC(rng *rand.Rand, tiles, ldc int, beta float32) []float32 {
	c := randSlice(rng, 2*tiles*ldc, 1)
	if beta == 0 {
		for i := range c {
			if i%ldc < 16 {
				c[i] = float32(math.NaN())
			}
		}
	}
	return c
}

// TestGemmColASIMD2x16 checks the hand-written column of tiles that reads A in place
// (gemmCol2x16StridedAsm) against its twin (each tile's sliver packed, then the Go kernel),
// bit for bit, for A untransposed and transposed, with strides past the tiles' width, depths
// of one step, odd counts and a whole block, operands at every offset of a 16-byte vector,
// and C's columns past the tile left as they were (beta 0: C starts as NaN, never read).
func TestGemmColASIMD2x16(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	defer func(on bool) { gemmWasmAsm = on }(gemmWasmAsm)
	for _, transA := range []bool{false, true} {
		for _, kc := range []int{1, 2, 5, 256, 257} {
			for _, tiles := range []int{1, 3} {
				for off := range simdLanes {
					for _, beta := range []float32{0, 1, -0.5} {
						lda := kc + 3 // untransposed: rows of at least kc
						rows := 2 * tiles
						if transA {
							lda, rows = 2*tiles+off+1, kc
						}
						a := randSlice(rng, off+rows*lda, 1)[off:]
						b := randSlice(rng, off+16*kc, 1)[off:]
						ldc := 16 + 3*(off%2)
						c := colTestC(rng, tiles, ldc, beta)
						want, got := append([]float32(nil), c...), append([]float32(nil), c...)
						gemmWasmAsm = false
						gemmColASIMD2x16(kc, tiles, a, lda, transA, b, want, ldc, beta)
						gemmWasmAsm = true
						gemmColASIMD2x16(kc, tiles, a, lda, transA, b, got, ldc, beta)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("transA %v, kc %d, %d tiles, offset %d, beta %g: c[%d] = %g, the twin gives %g",
									transA, kc, tiles, off, beta, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmKernelSIMD2x16Beta checks the micro-kernel with beta != 0, whose assembly version
// (gemmCol2x16Asm, one tile) adds beta·C to the sums itself, against the Go version bit for bit.
func TestGemmKernelSIMD2x16Beta(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	defer func(on bool) { gemmWasmAsm = on }(gemmWasmAsm)
	for _, kc := range []int{1, 2, 7, 256} {
		for _, beta := range []float32{1, -0.5, 3} {
			for _, ldc := range []int{16, 21} {
				a := randSlice(rng, 2*kc, 1)
				b := randSlice(rng, 16*kc, 1)
				c := randSlice(rng, ldc+16, 1)
				want, got := append([]float32(nil), c...), append([]float32(nil), c...)
				gemmWasmAsm = false
				gemmKernelSIMD2x16(kc, a, b, want, ldc, beta)
				gemmWasmAsm = true
				gemmKernelSIMD2x16(kc, a, b, got, ldc, beta)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("kc %d, beta %g, ldc %d: c[%d] = %g, the Go kernel gives %g", kc, beta, ldc, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestGemmPackRows2 checks the hand-written two-row packing (gemmPackRows2Asm) against the
// interleaving it stands for, on lengths around its four-step turns and at every offset of a
// vector; the float after dst's end must stay as it was.
func TestGemmPackRows2(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, kb := range []int{1, 2, 3, 4, 5, 7, 8, 9, 255, 256} {
		for off := range simdLanes {
			r0 := randSlice(rng, off+kb, 1)[off:]
			r1 := randSlice(rng, off+kb, 1)[off:]
			buf := randSlice(rng, off+2*kb+1, 1)
			guard := buf[off+2*kb]
			dst := buf[off : off+2*kb]
			packRows2Asm(dst, r0, r1)
			for p := range kb {
				if dst[2*p] != r0[p] || dst[2*p+1] != r1[p] {
					t.Fatalf("kb %d, offset %d: step %d = (%g, %g), want (%g, %g)", kb, off, p, dst[2*p], dst[2*p+1], r0[p], r1[p])
				}
			}
			if buf[off+2*kb] != guard {
				t.Fatalf("kb %d, offset %d: the float after dst was overwritten", kb, off)
			}
		}
	}
}

// TestAdamWSIMDvsGo checks AdamW (SIMD) against adamwGo bit for bit on lengths around the
// vector width, with and without weight decay, over several steps (the moments feed back).
func TestAdamWSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 4, 5, 7, 8, 31, 64, 1001} {
		for _, dg := range [][2]float32{{1, 1}, {1 - 1e-3*0.01, 1}, {1 - 1e-3*0.01, 0.37}} {
			decay, gscale := dg[0], dg[1]
			w, m, v := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
			}
			ww, wm, wv := append([]float32(nil), w...), make([]float32, n), make([]float32, n)
			for step := 1; step <= 3; step++ {
				c := &AdamWConsts{Beta1: 0.9, OneMinusBeta1: 1 - float32(0.9), Beta2: 0.999, OneMinusBeta2: 1 - float32(0.999),
					BC2Sqrt: float32(math.Sqrt(1 - math.Pow(0.999, float64(step)))), Eps: 1e-8,
					StepSize: float32(1e-3 / (1 - math.Pow(0.9, float64(step)))), Decay: decay, GradScale: gscale}
				g := make([]float32, n)
				for i := range g {
					g[i] = float32(rng.NormFloat64()) * float32(math.Pow(10, float64(rng.IntN(7)-4)))
				}
				AdamW(w, m, v, g, c)
				adamwGo(ww, wm, wv, g, c)
				for i := range w {
					if math.Float32bits(w[i]) != math.Float32bits(ww[i]) || math.Float32bits(m[i]) != math.Float32bits(wm[i]) || math.Float32bits(v[i]) != math.Float32bits(wv[i]) {
						t.Fatalf("n=%d decay=%g grad scale %g step %d [%d]: w m v %g %g %g, adamwGo %g %g %g", n, decay, gscale, step, i, w[i], m[i], v[i], ww[i], wm[i], wv[i])
					}
				}
			}
		}
	}
}

// TestSumSquaresSIMDvsGo compares sumSquares (float32 lanes over runs of 256 values) with the
// float64 sum of sumSquaresGo: within 1e-5 relative on gradients of every length around the
// run's size, on values spread over many magnitudes, and exactly 0 for zeros; NaN and Inf go
// through.
func TestSumSquaresSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, n := range []int{0, 1, 3, 255, 256, 257, 511, 512, 1000, 100_000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, rng.Float64()*6-4))
		}
		got, want := sumSquares(x), sumSquaresGo(x)
		if math.Abs(got-want) > 1e-5*want {
			t.Errorf("n=%d: sumSquares %g, sumSquaresGo %g (relative %.2g)", n, got, want, math.Abs(got-want)/want)
		}
		if n > 0 {
			clear(x)
			if s := sumSquares(x); s != 0 {
				t.Errorf("n=%d zeros: %g", n, s)
			}
			x[n-1] = float32(math.NaN())
			if s := sumSquares(x); !math.IsNaN(s) {
				t.Errorf("n=%d with a NaN: %g", n, s)
			}
			x[n-1] = float32(math.Inf(-1))
			if s := sumSquares(x); !math.IsInf(s, 1) {
				t.Errorf("n=%d with -Inf: %g", n, s)
			}
		}
	}
}

// addCols with f64x2 against its pure-Go twin, exactly, on every length from 0 to 40 and a
// vocabulary-sized row, with nothing written past acc's end; and rowMax skips NaN elements
// as its twin does, wherever they sit.
func TestAddColsRowMaxSIMDvsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	lengths := []int{30522}
	for n := 0; n <= 40; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
		}
		acc0 := make([]float64, n)
		for i := range acc0 {
			acc0[i] = rng.NormFloat64()
		}
		checkAddCols(t, x, acc0)
		if n > 0 {
			x[rng.IntN(n)] = float32(math.NaN())
			if m, wm := rowMax(x), rowMaxGo(x); math.Float32bits(m) != math.Float32bits(wm) {
				t.Fatalf("n=%d with a NaN: rowMax %g, Go twin %g", n, m, wm)
			}
		}
	}
}
