package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gelu64 is the exact GELU in float64, the reference of geluGo: x·Φ(x) with Φ(x) =
// erfc(-x/√2)/2, which equals (1 + erf(x/√2))/2 without its cancellation for negative x
// (1 + math.Erf(-6) is 0 in float64 too).
func gelu64(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }

// gelu64Grad is the derivative of the exact GELU in float64, the reference of GELUBackward.
func gelu64Grad(x float64) float64 {
	return 0.5*math.Erfc(-x/math.Sqrt2) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
}

// erfSweep calls f with every step-th float32 in [0, hi] (by bit pattern, so that every binade
// gets the same number of points, the subnormals included) and with its negative.
func erfSweep(hi float32, step uint32, f func(x float32)) {
	top := math.Float32bits(hi)
	for b := uint32(0); b <= top; b += step {
		x := math.Float32frombits(b)
		f(x)
		f(-x)
	}
}

// TestErff checks erff against math.Erf rounded to float32 on a dense sweep of [-10, 10]
// (every 61st bit pattern: 17.8 million points, every binade) and the specials. The bound is
// 1 ulp: the reference is itself rounded, so a result within 1 ulp of it is within 1.5 ulp of
// erf; the design error (fit 1.2e-9 below 1, erfc's few 1e-8 above, times erfc ≤ 0.16) is a
// fraction of an ulp and the rest is float32 rounding.
func TestErff(t *testing.T) {
	var worst int64
	var at float32
	erfSweep(10, 61, func(x float32) {
		if u := ulps(erff(x), float32(math.Erf(float64(x)))); u > worst {
			worst, at = u, x
		}
	})
	t.Logf("worst: %d ulp at %g (erff %g, erf %g)", worst, at, erff(at), math.Erf(float64(at)))
	if worst > 1 {
		t.Errorf("erff(%g) = %g, erf = %g: %d ulp", at, erff(at), math.Erf(float64(at)), worst)
	}
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct{ x, want float32 }{
		{0, 0}, {negZero, negZero},
		{inf, 1}, {-inf, -1}, {4, 1}, {-4, -1}, {9.2, 1}, {-9.2, -1}, {math.MaxFloat32, 1},
		{3.9, float32(math.Erf(3.9))}, {-3.9, float32(math.Erf(-3.9))},
		{1, float32(math.Erf(1))}, {-1, float32(math.Erf(-1))},
		{math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32},
		{1e-40, float32(math.Erf(float64(float32(1e-40))))}, {-1e-30, float32(math.Erf(-1e-30))},
	} {
		if got := erff(c.x); math.Float32bits(got) != math.Float32bits(c.want) && ulps(got, c.want) > 1 {
			t.Errorf("erff(%g) = %g, want %g", c.x, got, c.want)
		}
		if c.x == 0 && math.Float32bits(erff(c.x)) != math.Float32bits(c.x) {
			t.Errorf("erff(%g) = %g keeps the sign of zero", c.x, erff(c.x))
		}
	}
	if got := erff(float32(math.NaN())); got == got {
		t.Errorf("erff(NaN) = %g", got)
	}
}

// TestNormCDF checks Φ (normCDF) in ulps against math.Erfc, which is where the GELU's negative
// side gets its relative accuracy: 1 + erf(x/√2) would cancel to a few digits there. Points
// where Φ is below the smallest normal float32 (x < -13) are checked to be tiny.
func TestNormCDF(t *testing.T) {
	var worst int64
	var at float32
	erfSweep(14, 61, func(x float32) {
		want := 0.5 * math.Erfc(-float64(x)/math.Sqrt2)
		got, ex := normCDF(x)
		if want < 0x1p-126 {
			if got > 0x1p-126 {
				t.Fatalf("normCDF(%g) = %g, want %g", x, got, want)
			}
			return
		}
		if u := ulps(got, float32(want)); u > worst {
			worst, at = u, x
		}
		if wantEx := math.Exp(-0.5 * float64(x) * float64(x)); ex >= 0 && wantEx >= 0x1p-126 && ulps(ex, float32(wantEx)) > 2 {
			t.Fatalf("normCDF(%g): exp(-x²/2) = %g, want %g", x, ex, math.Exp(-0.5*float64(x)*float64(x)))
		}
	})
	t.Logf("worst: %d ulp at %g", worst, at)
	if worst > 5 {
		t.Errorf("normCDF(%g): %d ulp from Φ", at, worst)
	}
}

// TestGELUAccuracy checks geluGo (GELU on builds without wasm SIMD) and GELUBackward against
// the float64 formulas on a dense sweep of [-16, 16] and the specials. The forward must be
// within 6 ulp (measured: 5, at x ≈ -1.3, where Φ = 1/2 + erf/2 is a tenth and R's rounding
// shows) of the float64 GELU rounded to float32 (relative, so the tiny values of the
// negative tail too) down to x = -11.7 (GELU ≈ -7e-31), and within 1e-36 below; the
// derivative, which is in [-0.17, 1.13], within 2e-7 absolute (about 2 ulp of 1).
func TestGELUAccuracy(t *testing.T) {
	var xs []float32
	erfSweep(16, 241, func(x float32) { xs = append(xs, x) })
	y := append([]float32(nil), xs...)
	geluGo(y)
	ones := make([]float32, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	d := make([]float32, len(xs))
	GELUBackward(d, ones, xs)
	var worstU int64
	var worstD float64
	var atU, atD float32
	for i, x := range xs {
		want := gelu64(float64(x))
		if float64(x) < -11.7 {
			// Φ(x) < 2⁻¹⁰⁰: Φ and then x·Φ get near the subnormals, where ulps mean little.
			if math.Abs(float64(y[i])-want) > 1e-36 {
				t.Fatalf("geluGo(%g) = %g, want %g", x, y[i], want)
			}
		} else if u := ulps(y[i], float32(want)); u > worstU {
			worstU, atU = u, x
		}
		if e := math.Abs(float64(d[i]) - gelu64Grad(float64(x))); e > worstD {
			worstD, atD = e, x
		}
	}
	t.Logf("%d points: forward worst %d ulp at %g; backward worst %.3g at %g", len(xs), worstU, atU, worstD, atD)
	if worstU > 6 {
		t.Errorf("geluGo(%g): %d ulp from the float64 GELU", atU, worstU)
	}
	if worstD > 2e-7 {
		t.Errorf("GELUBackward at %g: error %.3g > 2e-7", atD, worstD)
	}

	// Specials as the float64 formula gives them: ±0 keep their sign, +Inf stays, NaN and -Inf
	// (-Inf·0) give NaN; the derivative is 1/2 at 0, 1 at +Inf, NaN at -Inf and NaN.
	inf := math.Inf(1)
	for _, x := range []float64{0, math.Copysign(0, -1), inf, -inf, math.NaN(), 1e-30, -1e-30, -20, 20} {
		g := []float32{float32(x)}
		geluGo(g)
		want := float32(gelu64(x))
		if math.Float32bits(g[0]) != math.Float32bits(want) && !(g[0] != g[0] && want != want) {
			t.Errorf("geluGo(%g) = %g, want %g", x, g[0], want)
		}
		dd := []float32{1}
		GELUBackward(dd, dd, []float32{float32(x)})
		wantD := float32(gelu64Grad(x))
		if dd[0] != wantD && !(dd[0] != dd[0] && wantD != wantD) {
			t.Errorf("GELUBackward at %g = %g, want %g", x, dd[0], wantD)
		}
	}
}

// TestSoftmaxRowGo checks softmaxRowGo (float32 expf) on rows of several lengths and spreads,
// and with an additive mask: rows sum to 1, and each entry is within a relative tol of
// the float64 softmax of the same float32 differences x - max (which round in float32 as in
// torch), where tol is 1e-6, or (n+4)·2⁻²⁴ for long rows (the float32 sum's bound); and each is
// within 4 ulp of the previous implementation (math.Exp rounded to float32, the
// same float32 sum).
func TestSoftmaxRowGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 2, 7, 128, 512, 3000} {
		for _, scale := range []float64{0.1, 4, 30} {
			for _, masked := range []bool{false, true} {
				x := randSlice(rng, n, scale)
				if masked {
					for j := n / 2; j < n; j++ {
						x[j] += -1e4 // HF's additive mask (the first entry stays unmasked)
					}
				}
				// The float32 sum of n terms is within (n-1)·2⁻²⁴ relative (typically far less),
				// the exponentials 2 ulp, the reciprocal and the product half an ulp each.
				tol := max(1e-6, float64(n+4)*0x1p-24)
				got := append([]float32(nil), x...)
				softmaxRowGo(got)
				old := append([]float32(nil), x...)
				mx := float32(math.Inf(-1))
				for _, v := range old {
					mx = max(mx, v)
				}
				var s32 float32
				var s64 float64
				for j, v := range old {
					old[j] = float32(math.Exp(float64(v - mx)))
					s32 += old[j]
					s64 += math.Exp(float64(v - mx))
				}
				var sum float64
				for j := range got {
					old[j] *= 1 / s32
					sum += float64(got[j])
					want := math.Exp(float64(x[j]-mx)) / s64
					if e := math.Abs(float64(got[j]) - want); e > tol*want && e > 0x1p-126 {
						t.Fatalf("n=%d scale=%g masked=%v: [%d] = %g, float64 softmax %g", n, scale, masked, j, got[j], want)
					}
					if u := ulps(got[j], old[j]); u > 4 && old[j] > 0x1p-126 {
						t.Fatalf("n=%d scale=%g masked=%v: [%d] = %g, math.Exp version %g: %d ulp", n, scale, masked, j, got[j], old[j], u)
					}
				}
				if math.Abs(sum-1) > tol {
					t.Errorf("n=%d scale=%g masked=%v: sum %.9g", n, scale, masked, sum)
				}
			}
		}
	}
}

// gelutanh64 is HF's gelu_new in float64, the reference of GELUTanh, in its sigmoid form
// x·σ(2u) = x / (1 + exp(-2u)): the tanh form 0.5·x·(1 + tanh u) cancels to 0 in float64 below
// x ≈ -7.2. gelutanh64Grad is its derivative, the reference of GELUTanhBackward.
func gelutanh64(x float64) float64 {
	return x / (1 + math.Exp(-2*math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func gelutanh64Grad(x float64) float64 {
	c := math.Sqrt(2 / math.Pi)
	t := math.Tanh(c * (x + 0.044715*x*x*x))
	return 0.5*(1+t) + 0.5*x*(1-t*t)*c*(1+3*0.044715*x*x)
}

// TestGELUTanhAccuracy checks GELUTanh (x·σ(2u) in float32 with the softmax's exp kernel) and
// GELUTanhBackward against the float64 formulas on a dense sweep of [-16, 16] (its length not a
// whole number of blocks or vectors) and the specials. The forward must be within 8 ulp of the
// float64 value rounded to float32 from x = -1 up, and within 1e-5 relative below, to x = -9
// (gelu_new ≈ -6e-31): there it is x·e^{2u}·(1 + …), |2u| up to 40, and the float32 rounding of
// u moves it by a few parts in 10⁶ (torch's float32 1 + tanh(u) loses it all: it is 0 from
// x ≈ -4.5); below, within 1e-30 absolute. The derivative, in [-0.17, 1.13], within 3e-7
// absolute.
func TestGELUTanhAccuracy(t *testing.T) {
	var xs []float32
	erfSweep(16, 241, func(x float32) { xs = append(xs, x) })
	xs = xs[:len(xs)-3]
	y := append([]float32(nil), xs...)
	GELUTanh(y)
	d := make([]float32, len(xs))
	for i := range d {
		d[i] = 1
	}
	GELUTanhBackward(d, d, xs)
	var worstU int64
	var worstR, worstD float64
	var atU, atR, atD float32
	for i, x := range xs {
		want := gelutanh64(float64(x))
		switch {
		case x >= -1:
			if u := ulps(y[i], float32(want)); u > worstU {
				worstU, atU = u, x
			}
		case x >= -9:
			if r := math.Abs(float64(y[i])-want) / math.Abs(want); r > worstR {
				worstR, atR = r, x
			}
		default:
			if math.Abs(float64(y[i])-want) > 1e-30 {
				t.Errorf("GELUTanh(%g) = %g, want %g", x, y[i], want)
			}
		}
		if e := math.Abs(float64(d[i]) - gelutanh64Grad(float64(x))); e > worstD {
			worstD, atD = e, x
		}
	}
	t.Logf("%d points: forward worst %d ulp at %g, %.3g relative at %g; backward worst %.3g at %g", len(xs), worstU, atU, worstR, atR, worstD, atD)
	if worstU > 8 {
		t.Errorf("GELUTanh(%g): %d ulp from the float64 gelu_new", atU, worstU)
	}
	if worstR > 1e-5 {
		t.Errorf("GELUTanh(%g): %.3g relative from the float64 gelu_new", atR, worstR)
	}
	if worstD > 3e-7 {
		t.Errorf("GELUTanhBackward at %g: error %.3g > 3e-7", atD, worstD)
	}

	// Specials as the float64 formula gives them: ±0 keep their sign, +Inf stays, the far
	// negative tail is -0, -Inf (-Inf/Inf) and NaN give NaN; the derivative is 1/2 at 0, 1 at 20,
	// NaN at +Inf (Inf·0) and NaN, and 0 in the far negative tail down to -Inf (its limit; the
	// float64 formula's -Inf·0 there is NaN).
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct{ x, y, d float64 }{
		{0, 0, 0.5}, {math.Copysign(0, -1), math.Copysign(0, -1), 0.5}, {20, 20, 1}, {inf, inf, nan},
		{-20, math.Copysign(0, -1), 0}, {-1e30, math.Copysign(0, -1), 0}, {-inf, nan, 0}, {nan, nan, nan},
	} {
		g := []float32{float32(tc.x)}
		GELUTanh(g)
		if math.Float32bits(g[0]) != math.Float32bits(float32(tc.y)) && !(g[0] != g[0] && tc.y != tc.y) {
			t.Errorf("GELUTanh(%g) = %g, want %g", tc.x, g[0], tc.y)
		}
		dd := []float32{1}
		GELUTanhBackward(dd, dd, []float32{float32(tc.x)})
		if float64(dd[0]) != tc.d && !(dd[0] != dd[0] && tc.d != tc.d) {
			t.Errorf("GELUTanhBackward at %g = %g, want %g", tc.x, dd[0], tc.d)
		}
	}
}
