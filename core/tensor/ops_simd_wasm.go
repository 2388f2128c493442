//go:build wasm && goexperiment.simd && !purego

package tensor

import (
	"math"
	"simd"
)

// The row and element-wise kernels with wasm SIMD (4 float32 lanes, see gemm_simd_wasm.go).
// Their pure-Go twins are in ops.go; ops_simd_wasm_test.go compares them, and checks the
// float32 erf used by gelu against math.Erf over a dense range. Tails shorter than a vector
// run the same formulas one element at a time.
//
// The simd package has no vector exp or erf: expSIMD and erfSIMD below are float32
// polynomials. Package-level simd values are not supported (see the simd package's BUGS), so
// constants are broadcast inside the functions.

// softmaxRow replaces row by its softmax, exp(x - max) / sum (see SoftmaxRows). The
// exponentials are float32 within 2 ulp of exp (expSIMD; softmaxRowGo rounds math.Exp), the
// sum float32 in 4 lanes.
func softmaxRow(row []float32) {
	n := len(row)
	mx := rowMax(row)
	var sum float32
	i := 0
	if n >= simdLanes {
		vmx := simd.BroadcastFloat32s(mx)
		var vs simd.Float32s
		for ; i+simdLanes <= n; i += simdLanes {
			e := expSIMD(simd.LoadFloat32s(row[i : i+simdLanes]).Sub(vmx))
			e.Store(row[i : i+simdLanes])
			vs = vs.Add(e)
		}
		sum = simdSum(vs)
	}
	for j := i; j < n; j++ {
		e := expf(row[j] - mx)
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	i = 0
	vinv := simd.BroadcastFloat32s(inv)
	for ; i+simdLanes <= n; i += simdLanes {
		s := row[i : i+simdLanes]
		simd.LoadFloat32s(s).Mul(vinv).Store(s)
	}
	for j := i; j < n; j++ {
		row[j] *= inv
	}
}

// layerNormRow normalises row[n] into out[n] (out may alias row) with gamma g[n] and beta b[n]
// and returns the mean and 1/sqrt(var+eps) (see LayerNorm). layerNormRowGo accumulates in
// float64; the simd package cannot widen float32 lanes, so this one sums float32 lanes twice:
// mu0 = sum(x)/n, then d = x - mu0 gives the mean's correction sum(d)/n and the variance
// sum(d²)/n - (sum(d)/n)² (the corrected two-pass algorithm), with the lanes added in float64.
// The output is (x - mean)·rstd·g + b in the same order of operations as layerNormRowGo.
func layerNormRow(out, row, g, b []float32, eps float32) (mean, rstd float32) {
	n := len(row)
	out, g, b = out[:n], g[:n], b[:n]
	nv := n &^ (simdLanes - 1)
	var s0, s1 simd.Float32s
	i := 0
	for ; i+2*simdLanes <= nv; i += 2 * simdLanes {
		s0 = s0.Add(simd.LoadFloat32s(row[i : i+simdLanes]))
		s1 = s1.Add(simd.LoadFloat32s(row[i+simdLanes : i+2*simdLanes]))
	}
	if i < nv {
		s0 = s0.Add(simd.LoadFloat32s(row[i : i+simdLanes]))
	}
	s := simdSum64(s0) + simdSum64(s1)
	for _, v := range row[nv:] {
		s += float64(v)
	}
	mu0 := float32(s / float64(n))
	vmu := simd.BroadcastFloat32s(mu0)
	var d0, d1, q0, q1 simd.Float32s
	i = 0
	for ; i+2*simdLanes <= nv; i += 2 * simdLanes {
		x0 := simd.LoadFloat32s(row[i : i+simdLanes]).Sub(vmu)
		x1 := simd.LoadFloat32s(row[i+simdLanes : i+2*simdLanes]).Sub(vmu)
		d0, d1 = d0.Add(x0), d1.Add(x1)
		q0, q1 = q0.Add(x0.Mul(x0)), q1.Add(x1.Mul(x1))
	}
	if i < nv {
		x0 := simd.LoadFloat32s(row[i : i+simdLanes]).Sub(vmu)
		d0, q0 = d0.Add(x0), q0.Add(x0.Mul(x0))
	}
	ds := simdSum64(d0) + simdSum64(d1)
	qs := simdSum64(q0) + simdSum64(q1)
	for _, v := range row[nv:] {
		d := float64(v - mu0)
		ds += d
		qs += d * d
	}
	dm := ds / float64(n)
	mu := float64(mu0) + dm
	rs := 1 / math.Sqrt(max(qs/float64(n)-dm*dm, 0)+float64(eps))
	m32, rs32 := float32(mu), float32(rs)
	vm, vr := simd.BroadcastFloat32s(m32), simd.BroadcastFloat32s(rs32)
	for i = 0; i < nv; i += simdLanes {
		x := simd.LoadFloat32s(row[i : i+simdLanes])
		gv := simd.LoadFloat32s(g[i : i+simdLanes])
		bv := simd.LoadFloat32s(b[i : i+simdLanes])
		x.Sub(vm).Mul(vr).Mul(gv).Add(bv).Store(out[i : i+simdLanes])
	}
	for j := nv; j < n; j++ {
		out[j] = (row[j]-m32)*rs32*g[j] + b[j]
	}
	return m32, rs32
}

// gelu applies the exact GELU, x·Φ(x) = x·(1 + erf(x/√2))/2, in place (see GELU), with Φ from
// the float32 polynomials of geluPhiSIMD: within 1e-6 of the float64 GELU for every float32
// (TestGELUSIMDAccuracy), where geluGo is within half a float32 ulp.
func gelu(x []float32) {
	n := len(x)
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		s := x[i : i+simdLanes]
		v := simd.LoadFloat32s(s)
		v.Mul(geluPhiSIMD(v)).Store(s)
	}
	if i < n {
		// The tail through the same polynomials, so that every element gets the same function.
		var buf [simdLanes]float32
		copy(buf[:], x[i:])
		v := simd.LoadFloat32s(buf[:])
		v.Mul(geluPhiSIMD(v)).Store(buf[:])
		copy(x[i:], buf[:])
	}
}

// geluBackward sets dx = dy·GELU'(x) = dy·(Φ(x) + x·φ(x)), φ(x) = exp(-x²/2)/√(2π) (see
// GELUBackward; dx may alias dy), four lanes at a time: Φ from geluPhiSIMD and the
// exponential from expSIMD, where geluBackwardGo takes float64 steps per element (it was the
// largest kernel after the GEMMs in a wasm training step). Within 2e-7 of the float64
// derivative, as geluBackwardGo (TestGELUAccuracy); the tail runs the same polynomials.
func geluBackward(dx, dy, x []float32) {
	n := len(dx)
	dy, x = dy[:n], x[:n]
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		g := geluGradSIMD(simd.LoadFloat32s(x[i : i+simdLanes]))
		simd.LoadFloat32s(dy[i : i+simdLanes]).Mul(g).Store(dx[i : i+simdLanes])
	}
	if i < n {
		var bx, bd [simdLanes]float32
		copy(bx[:], x[i:])
		copy(bd[:], dy[i:])
		simd.LoadFloat32s(bd[:]).Mul(geluGradSIMD(simd.LoadFloat32s(bx[:]))).Store(bd[:])
		copy(dx[i:], bd[:])
	}
}

// geluDeriv sets y = GELU(x) and d = GELU'(x) (see GELUWithDerivative) four lanes at a time,
// from one exponential: Φ as geluPhiExp reads it (geluPhiSIMD's bits, as geluGradSIMD relies
// on), y = x·Φ as gelu, d as geluGradSIMD; d may alias x. The tail runs the same polynomials.
func geluDeriv(y, d, x []float32) {
	n := len(x)
	y, d = y[:n], d[:n]
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		v := simd.LoadFloat32s(x[i : i+simdLanes])
		yv, dv := geluAndGradSIMD(v)
		yv.Store(y[i : i+simdLanes])
		dv.Store(d[i : i+simdLanes])
	}
	if i < n {
		var bx, by [simdLanes]float32
		copy(bx[:], x[i:])
		yv, dv := geluAndGradSIMD(simd.LoadFloat32s(bx[:]))
		yv.Store(by[:])
		dv.Store(bx[:])
		copy(y[i:], by[:])
		copy(d[i:], bx[:])
	}
}

// geluAndGradSIMD returns x·Φ(x) (gelu's lanes) and GELU'(x) (geluGradSIMD's) in each lane.
func geluAndGradSIMD(x simd.Float32s) (y, d simd.Float32s) {
	const invSqrt2Pi = 0.3989422804014327 // 1/√(2π)
	z := x.Mul(simd.BroadcastFloat32s(1 / math.Sqrt2))
	e := expSIMD(z.Mul(z).Neg())
	phi := geluPhiExp(z, e)
	return x.Mul(phi), phi.Add(x.Mul(simd.BroadcastFloat32s(invSqrt2Pi)).Mul(e))
}

// mul sets dst[i] = a[i]·b[i] (see Mul) four lanes at a time; dst may be a or b.
func mul(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		simd.LoadFloat32s(a[i : i+simdLanes]).Mul(simd.LoadFloat32s(b[i : i+simdLanes])).Store(dst[i : i+simdLanes])
	}
	mulGo(dst[i:], a[i:], b[i:])
}

// geluGradSIMD returns GELU'(x) = Φ(x) + x·exp(-x²/2)/√(2π) in each lane (NaN at ±Inf and NaN,
// as the float64 formula).
func geluGradSIMD(x simd.Float32s) simd.Float32s {
	const invSqrt2Pi = 0.3989422804014327 // 1/√(2π)
	// One exponential, exp(-z²) = exp(-x²/2), for φ and for Φ's erfc (which reads it where
	// 1 <= |z| <= 9, where it equals exp(-zb²) of geluPhiSIMD bit for bit): the second
	// exponential was about a fifth of the backward's work.
	z := x.Mul(simd.BroadcastFloat32s(1 / math.Sqrt2))
	e := expSIMD(z.Mul(z).Neg())
	return geluPhiExp(z, e).Add(x.Mul(simd.BroadcastFloat32s(invSqrt2Pi)).Mul(e))
}

// geluPhiSIMD returns Φ(x) = (1 + erf(x/√2))/2, the standard normal distribution function, in
// each lane. With z = x/√2:
//
//	|z| < 1:  Φ = 1/2 + z·P(z²)/2               P: erf(z)/z, degree 6 (relative error 1.3e-9)
//	|z| >= 1: e = exp(-z²)·Q(1/|z|)/2 = erfc(|z|)/2, Q: erfc(z)·exp(z²), degree 9 (1.4e-7)
//	          Φ = 1 - e for z > 0, e for z < 0; e = 0 for |z| > 9 (erfc(9) < 1e-36)
//
// P and Q are least-squares fits with minimax reweighting of the relative error, made for this
// function (P agrees with Cephes erff). Far out, erfc's relative error times x·erfc(x/√2)/2,
// which is below 0.12, keeps the absolute error of x·Φ small; 1 - e keeps x·Φ = x exactly for
// large x. NaN gives NaN; ±Inf give Φ = 1 and 0 (x·Φ at -Inf is NaN, as in geluGo).
func geluPhiSIMD(x simd.Float32s) simd.Float32s {
	z := x.Mul(simd.BroadcastFloat32s(1 / math.Sqrt2))
	zb := clamp(z.Abs(), simd.BroadcastFloat32s(1), simd.BroadcastFloat32s(9))
	return geluPhiExp(z, expSIMD(zb.Mul(zb).Neg()))
}

// geluPhiExp is geluPhiSIMD of z = x/√2 given ez = exp(-z²) for 1 <= |z| <= 9, the lanes that
// take erfc (the others may hold anything): GELU's backward shares the exponential with φ(x).
func geluPhiExp(z, ez simd.Float32s) simd.Float32s {
	one := simd.BroadcastFloat32s(1)
	half := simd.BroadcastFloat32s(0.5)
	az := z.Abs()

	// |z| < 1: erf(z) = z·P(z²).
	za := clamp(z, simd.BroadcastFloat32s(-1), one)
	z2 := za.Mul(za)
	p := simd.BroadcastFloat32s(7.853973833371608e-05)
	p = p.Mul(z2).Add(simd.BroadcastFloat32s(-0.0008010230781693578))
	p = p.Mul(z2).Add(simd.BroadcastFloat32s(0.005188332414381935))
	p = p.Mul(z2).Add(simd.BroadcastFloat32s(-0.026853814830214234))
	p = p.Mul(z2).Add(simd.BroadcastFloat32s(0.11283585235024776))
	p = p.Mul(z2).Add(simd.BroadcastFloat32s(-0.37612625835332325))
	p = p.Mul(z2).Add(simd.BroadcastFloat32s(1.128379165730805))
	phiA := half.Add(half.Mul(za.Mul(p)))

	// |z| >= 1: erfc(|z|) = exp(-z²)·Q(1/|z|).
	zb := clamp(az, one, simd.BroadcastFloat32s(9))
	t := one.Div(zb)
	q := simd.BroadcastFloat32s(0.0699301540496618)
	q = q.Mul(t).Add(simd.BroadcastFloat32s(-0.3896313225668961))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(0.9238961879474356))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(-1.1729957653092966))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(0.7569530698124667))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(-0.042133556517934476))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(-0.28369628476353104))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(0.0012060873105386727))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(0.5640496182130033))
	q = q.Mul(t).Add(simd.BroadcastFloat32s(5.446721310629282e-06))
	e := half.Mul(ez.Mul(q))
	e = e.Masked(az.LessEqual(simd.BroadcastFloat32s(9)))
	var zero simd.Float32s
	phiB := one.Sub(e).IfElse(z.Greater(zero), e)

	return phiA.IfElse(az.Less(one), phiB)
}

// expSIMD returns exp(x) in each lane for x <= 0 (or NaN), within 2 ulp: expf (ops_backward.go)
// with vectors. Lanes below ln(2^-126) give 0.
func expSIMD(x simd.Float32s) simd.Float32s {
	lo := simd.BroadcastFloat32s(-87.33654475055310898657) // ln(2^-126)
	small := x.Less(lo)
	x = lo.IfElse(small, x) // max(x, lo), as clamp does it
	// Adding 1.5·2²³ rounds to an integer (wasm has no fused multiply-add to spoil it).
	magic := simd.BroadcastFloat32s(12582912)
	k := x.Mul(simd.BroadcastFloat32s(1.44269504088896341)).Add(magic).Sub(magic)
	r := x.Sub(k.Mul(simd.BroadcastFloat32s(0.693359375))).Sub(k.Mul(simd.BroadcastFloat32s(-2.12194440e-4)))
	p := simd.BroadcastFloat32s(1.9875691500e-4)
	p = p.Mul(r).Add(simd.BroadcastFloat32s(1.3981999507e-3))
	p = p.Mul(r).Add(simd.BroadcastFloat32s(8.3334519073e-3))
	p = p.Mul(r).Add(simd.BroadcastFloat32s(4.1665795894e-2))
	p = p.Mul(r).Add(simd.BroadcastFloat32s(1.6666665459e-1))
	p = p.Mul(r).Add(simd.BroadcastFloat32s(5.0000001201e-1))
	p = p.Mul(r).Mul(r).Add(r).Add(simd.BroadcastFloat32s(1))
	// 2^k from its exponent bits: k >= -126 after the clamp, so (k+127)<<23 is a normal float.
	pow := k.ConvertToInt32().Add(simd.BroadcastInt32s(127)).ShiftAllLeft(23).ToBits().BitsToFloat32()
	var zero simd.Float32s
	return zero.IfElse(small, p.Mul(pow))
}

// expShiftSum sets dst[j] = exp(x[j] - shift) (expSIMD, within 2 ulp) and returns their sum
// in float64 (the lanes of each vector added, then the vectors in order); shift is at least
// max(x), as softmax's is. The tail runs expf, the scalar twin.
func expShiftSum(dst, x []float32, shift float32) float64 {
	n := len(dst)
	x = x[:n]
	vs := simd.BroadcastFloat32s(shift)
	var s float64
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		e := expSIMD(simd.LoadFloat32s(x[i : i+simdLanes]).Sub(vs))
		e.Store(dst[i : i+simdLanes])
		s += simdSum64(e)
	}
	for ; i < n; i++ {
		e := expf(x[i] - shift)
		dst[i] = e
		s += float64(e)
	}
	return s
}

// rowMax is the largest element of x (-Inf for an empty x; NaN elements are skipped, as
// rowMaxGo skips them). Each lane keeps the larger of itself and the next
// element by a compare and a select: f32x4.max, with its NaN and signed-zero rules, is about
// eight instructions in V8 against two, and this pass reads the MLM logits of every training
// step.
func rowMax(x []float32) float32 {
	n := len(x)
	mx := float32(math.Inf(-1))
	i := 0
	if n >= 2*simdLanes {
		vm := simd.BroadcastFloat32s(mx)
		for ; i+simdLanes <= n; i += simdLanes {
			v := simd.LoadFloat32s(x[i : i+simdLanes])
			vm = v.IfElse(v.Greater(vm), vm)
		}
		mx = simdMax(vm)
	}
	for _, v := range x[i:] {
		if v > mx {
			mx = v
		}
	}
	return mx
}

// clamp is min(max(x, lo), hi) in each lane for lo <= hi, NaN staying NaN, by compares and
// selects (see rowMax).
func clamp(x, lo, hi simd.Float32s) simd.Float32s {
	x = lo.IfElse(x.Less(lo), x)
	return hi.IfElse(x.Greater(hi), x)
}

// simdSum returns the sum of the lanes of v, in float32.
func simdSum(v simd.Float32s) float32 {
	var a [simdLanes]float32
	v.Store(a[:])
	return (a[0] + a[1]) + (a[2] + a[3])
}

// simdSum64 returns the sum of the lanes of v, in float64.
func simdSum64(v simd.Float32s) float64 {
	var a [simdLanes]float32
	v.Store(a[:])
	return (float64(a[0]) + float64(a[1])) + (float64(a[2]) + float64(a[3]))
}

// simdMax returns the largest lane of v (NaN if a lane is NaN).
func simdMax(v simd.Float32s) float32 {
	var a [simdLanes]float32
	v.Store(a[:])
	return max(a[0], a[1], a[2], a[3])
}

// addColsAsm sets acc[j] += float64(x[j]) for j < n, n >= 4 a multiple of 4, reading x up to
// x[n+1] (ops_simd_wasm.s).
//
//go:noescape
func addColsAsm(acc *float64, x *float32, n int)

// addCols sets acc[j] += float64(x[j]) for j < len(x) (see SumRows), two at a time with
// f64x2.promote_low_f32x4: the same float64 sums as addColsGo. The Go loop converted and added
// one element at a time, and summing the MLM decoder's bias gradient over the labelled rows
// (4.4 M elements a Tiny step) took 3% of a wasm training step.
func addCols(acc []float64, x []float32) {
	n := len(x)
	acc = acc[:n]
	// The kernel reads two floats past its last element: leave at least two to the Go tail.
	k := max(n-2, 0) &^ 3
	if k > 0 {
		addColsAsm(&acc[0], &x[0], k)
	}
	addColsGo(acc[k:], x[k:])
}

// opsName names the element-wise kernels in use (see Kernels).
func opsName() string { return "wasm-simd" }

// add sets dst[i] = a[i] + b[i] (see Add) four lanes at a time; dst may be a or b.
func add(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		simd.LoadFloat32s(a[i : i+simdLanes]).Add(simd.LoadFloat32s(b[i : i+simdLanes])).Store(dst[i : i+simdLanes])
	}
	addGo(dst[i:], a[i:], b[i:])
}

// scale multiplies x by s in place (see Scale) four lanes at a time: the same products as
// scaleGo. The cross entropy's gradient scales a row of the vocabulary with it.
func scale(x []float32, s float32) {
	n := len(x)
	vs := simd.BroadcastFloat32s(s)
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		v := x[i : i+simdLanes]
		simd.LoadFloat32s(v).Mul(vs).Store(v)
	}
	scaleGo(x[i:], s)
}

// adamw is one AdamW update of w, m and v by g (see AdamW), four lanes at a time with the
// operations of adamwGo in its order, so that the results are the same bits: wasm has no
// fused multiply-add, and f32x4.sqrt is correctly rounded like float32(math.Sqrt(float64(v)))
// (a float64 square root of a float32 rounds to the correctly rounded float32 one). The
// optimizer pass runs over every parameter each step: a tenth of a Tiny step in the page.
func adamw(w, m, v, g []float32, c *AdamWConsts) {
	n := len(g)
	w, m, v = w[:n], m[:n], v[:n]
	b1, ob1 := simd.BroadcastFloat32s(c.Beta1), simd.BroadcastFloat32s(c.OneMinusBeta1)
	b2, ob2 := simd.BroadcastFloat32s(c.Beta2), simd.BroadcastFloat32s(c.OneMinusBeta2)
	bc, eps := simd.BroadcastFloat32s(c.BC2Sqrt), simd.BroadcastFloat32s(c.Eps)
	step, decay := simd.BroadcastFloat32s(c.StepSize), simd.BroadcastFloat32s(c.Decay)
	gscale := simd.BroadcastFloat32s(c.GradScale)
	i := 0
	for ; i+simdLanes <= n; i += simdLanes {
		gs := simd.LoadFloat32s(g[i : i+simdLanes]).Mul(gscale)
		ws := simd.LoadFloat32s(w[i : i+simdLanes]).Mul(decay)
		ms := b1.Mul(simd.LoadFloat32s(m[i : i+simdLanes])).Add(ob1.Mul(gs))
		vs := b2.Mul(simd.LoadFloat32s(v[i : i+simdLanes])).Add(ob2.Mul(gs).Mul(gs))
		denom := vs.Sqrt().Div(bc).Add(eps)
		ws = ws.Sub(step.Mul(ms).Div(denom))
		ms.Store(m[i : i+simdLanes])
		vs.Store(v[i : i+simdLanes])
		ws.Store(w[i : i+simdLanes])
	}
	adamwGo(w[i:], m[i:], v[i:], g[i:], c)
}

// sumSquaresChunk is the run of x that sumSquares sums in float32 lanes before adding the
// lanes to the float64 total: 64 products a lane.
const sumSquaresChunk = 64 * simdLanes

// sumSquares is the sum of x[i]² (see SumSquares; the gradient clipping's norm runs it over
// every gradient each step). The simd package cannot widen float32 lanes to float64, so the
// squares of each run of 256 values are summed in four float32 lanes (each of 64 products,
// within 64 ulp of exact, about 4e-6 relative), and the lanes in float64; sumSquaresGo's
// scalar float64 loop took 30 ms of a one-second step of the page's Training lab (the built-in
// model's 11.6 M gradients). torch sums a norm's squares in float32.
func sumSquares(x []float32) float64 {
	var s float64
	i := 0
	for ; i+sumSquaresChunk <= len(x); i += sumSquaresChunk {
		c := x[i : i+sumSquaresChunk : i+sumSquaresChunk]
		var acc simd.Float32s
		for j := 0; j < sumSquaresChunk; j += simdLanes {
			v := simd.LoadFloat32s(c[j : j+simdLanes])
			acc = acc.Add(v.Mul(v))
		}
		s += simdSum64(acc)
	}
	return s + sumSquaresGo(x[i:])
}
