package tensor

import "math"

// Float32 erf and the exact GELU's normal distribution function, for the pure-Go kernels
// (geluGo, GELUBackward): math.Erf in float64 cost about 45 ns an element, a fifth of a
// BERT-Base forward pass.
//
// The algorithm is the classic one of Cephes and fdlibm (glibc, musl) in single precision,
// with two regions and coefficients fitted for this file (least squares with Lawson's minimax
// reweighting of the relative error, in float64 against math.Erf and math.Erfc):
//
//	|x| < 1:        erf(x) = x + x·R(x²)            R: erf(x)/x - 1, degree 6 (relative 1.2e-9)
//	1 <= |x| < 9.3: erfc(|x|) = exp(-x²)·Q(w)       Q: erfc(a)·exp(a²), degree 10 in
//	                w = 1/|x| - 1/9.3 ∈ [0, 0.8925]  (relative 1.1e-8)
//
// erf(x) = ±(1 - erfc(|x|)) for 1 <= |x| < 4 and ±1 beyond (erfc(4) is below half an ulp of 1).
// exp(-x²) takes x² in float64, where the square of a float32 is exact, so that its argument
// carries no rounding error (x² would lose up to x²·2⁻²⁴ in float32: 5e-6 relative at 9).
// Measured against math.Erf rounded to float32 (TestErff): at most 1 ulp over every
// float32 in [-10, 10] and at the specials; Φ (normCDF) within 4 ulp relative down to the
// subnormals, the GELU x·Φ within 5 ulp (TestNormCDF, TestGELUAccuracy).

// erfR is R(s) = erf(x)/x - 1 at s = x², for s in [0, 1].
func erfR(s float32) float32 {
	p := float32(7.8538578993562065e-05)
	p = p*s - 0.00080101925767296113
	p = p*s + 0.0051883275660067341
	p = p*s - 0.026853811871987193
	p = p*s + 0.11283585147088974
	p = p*s - 0.37612625824096019
	return p*s + 0.1283791657266835 // 2/√π - 1 (fitted)
}

// erfcxQ is Q(a) = erfc(a)·exp(a²), the scaled complementary error function, for a in [1, 9.3],
// as a polynomial in w = 1/a - 1/9.3: w is small and exact-ish where Q is (the far tail), so
// that its rounding does not grow into the relative error of erfc there.
func erfcxQ(a float32) float32 {
	w := 1/a - 0.1075
	q := float32(-0.050585309995704771)
	q = q*w + 0.286790843640785
	q = q*w - 0.71487257560986384
	q = q*w + 1.0093268822411907
	q = q*w - 0.83024114658510284
	q = q*w + 0.28414318273874756
	q = q*w + 0.17924346241124089
	q = q*w - 0.23712320387627847
	q = q*w - 0.086038328286539373
	q = q*w + 0.55468167343980845
	return q*w + 0.060305840149151087
}

// expNeg64 is exp(-x2) in float32 within 2 ulp for x2 >= 0 given in float64 (the exact
// square of a float32, or half of it): expf's reduction and polynomial, with the reduction
// x = k·ln2 + r in float64 (exact for these k). Results below the smallest normal float32
// are 0, as expf's; NaN gives NaN.
func expNeg64(x2 float64) float32 {
	if x2 > 87.33654475055310898657 { // -ln(2⁻¹²⁶)
		return 0
	}
	const magic = 6755399441055744 // 1.5·2⁵²: adding it rounds to an integer
	k := (-x2*math.Log2E + magic) - magic
	r := float32(-x2 - k*math.Ln2)
	return expPoly(r) * math.Float32frombits(uint32(int32(k)+127)<<23)
}

// expPoly is exp(r) for |r| <= ln2/2 (within 1 ulp): Cephes expf's degree-6 polynomial.
func expPoly(r float32) float32 {
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	return p*r*r + r + 1
}

// erff is erf(x) in float32 within 1 ulp of math.Erf (see the top of this file). erff(±0) = ±0,
// erff(±Inf) = ±1, erff(NaN) = NaN.
func erff(x float32) float32 {
	a := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	switch {
	case a < 1:
		return x + x*erfR(x*x)
	case a < 4:
		e := 1 - expNeg64(float64(a)*float64(a))*erfcxQ(a)
		if x < 0 {
			return -e
		}
		return e
	case x != x:
		return x
	case x < 0:
		return -1
	}
	return 1
}

// normCDF is Φ(v) = (1 + erf(v/√2))/2, the standard normal distribution function, within a
// few ulp of float32 rounding: for |v/√2| >= 1 it is erfc(|v/√2|)/2 (v < 0) or 1 minus it,
// without the cancellation of 1 + erf for negative v, and exp(-v²/2) takes v²/2 exactly. It
// also returns that exp(-v²/2) when it computed it (|v/√2| >= 1), or -1 when not.
func normCDF(v float32) (phi, ex float32) {
	z64 := float64(v) * (1 / math.Sqrt2)
	z := float32(z64)
	a := math.Float32frombits(math.Float32bits(z) &^ (1 << 31))
	if a < 1 {
		// 1 + erf(z) = (1 + z) + z·R(z²), the sum in float64: for z near -1 it cancels to a
		// fraction of z, and the float32 rounding of z = v/√2 would grow with it (to 5 ulp).
		return float32(0.5 * ((1 + z64) + z64*float64(erfR(z*z)))), -1
	}
	if a > 9.3 {
		// erfc(9.3)/2 < 2e-39: Φ is 0 or 1 in normal float32 (NaN goes on to give NaN).
		a = 9.3
	}
	ex = expNeg64(0.5 * float64(v) * float64(v))
	e := 0.5 * ex * erfcxQ(a)
	if v > 0 {
		return 1 - e, ex
	}
	return e, ex
}
