package tensor

import (
	"math"
	"runtime"
)

// AddBias adds bias[n] to every row of x[m, n]: x[i][j] += bias[j].
func AddBias(x, bias []float32, n int) {
	b := bias[:n:n]
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n : r+n]
		add(row, row, b)
	}
}

// Add sets dst[i] = a[i] + b[i]. dst may alias a or b.
func Add(dst, a, b []float32) { add(dst, a[:len(dst)], b[:len(dst)]) }

// addGo is the pure-Go twin of add (Add).
func addGo(dst, a, b []float32) {
	a = a[:len(dst)]
	b = b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// Mul sets dst[i] = a[i]·b[i]. dst may alias a or b.
func Mul(dst, a, b []float32) { mul(dst, a[:len(dst)], b[:len(dst)]) }

// mulGo is the pure-Go twin of mul (Mul).
func mulGo(dst, a, b []float32) {
	a = a[:len(dst)]
	b = b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

// MaskScale sets dst[i] = src[i]·scale where keep[i] is 1 and +0 where it is 0 (the product's
// bits masked, so a NaN or Inf of src is zeroed too): inverted dropout's mask applied, forward
// and backward. keep[i] must be 0 or 1; dst may be src.
func MaskScale(dst, src []float32, keep []uint8, scale float32) {
	maskScale(dst, src[:len(dst)], keep[:len(dst)], scale)
}

// maskScaleGo is the pure-Go twin of maskScale (MaskScale). Without branches: a dropped
// element was a mispredicted branch (the loop with an if took 17% of dropout's share of a
// training step).
func maskScaleGo(dst, src []float32, keep []uint8, scale float32) {
	keep = keep[:len(dst)]
	src = src[:len(dst)]
	for i, k := range keep {
		dst[i] = math.Float32frombits(math.Float32bits(src[i]*scale) & -uint32(k))
	}
}

// Scale multiplies x by s in place.
func Scale(x []float32, s float32) { scale(x, s) }

// scaleGo is the pure-Go twin of scale (Scale).
func scaleGo(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// SumSquares returns the sum of x[i]² accumulated in float64 (the squared L2 norm, as a
// gradient clipper needs it).
func SumSquares(x []float32) float64 { return sumSquares(x) }

// sumSquaresGo is the pure-Go twin of sumSquares (SumSquares).
func sumSquaresGo(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return ss
}

// AdamWConsts holds the float32 factors of one AdamW step for AdamW (the assembly reads
// them in this order).
type AdamWConsts struct {
	Beta1, OneMinusBeta1 float32 // β1 and 1-β1 (rounded to float32 after the subtraction)
	Beta2, OneMinusBeta2 float32 // β2 and 1-β2
	BC2Sqrt              float32 // sqrt(1 - β2^t), the second moment's bias correction
	Eps                  float32 // ε added to the corrected root of the second moment
	StepSize             float32 // lr / (1 - β1^t)
	Decay                float32 // 1 - lr·weight decay, or 1 for no decay
	GradScale            float32 // the gradient clipping's coefficient, applied to g first (1: none)
}

// AdamW applies one AdamW update (torch.optim.AdamW's arithmetic in float32) to the
// parameters w with gradient g and the moments m and v, all of len(g):
//
//	g *= GradScale (in a register: g in memory is left as it is)
//	w *= Decay; m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g·g
//	w -= StepSize·m / (sqrt(v)/BC2Sqrt + Eps)
func AdamW(w, m, v, g []float32, c *AdamWConsts) { adamw(w, m, v, g, c) }

// adamwGo is the pure-Go twin of adamw (AdamW).
func adamwGo(w, m, v, g []float32, c *AdamWConsts) {
	n := len(g)
	w, m, v = w[:n], m[:n], v[:n]
	b1, ob1, b2, ob2 := c.Beta1, c.OneMinusBeta1, c.Beta2, c.OneMinusBeta2
	for j := range g {
		gj := float32(g[j] * c.GradScale) // the conversion keeps the product from fusing into an FMA
		w[j] *= c.Decay
		m[j] = b1*m[j] + ob1*gj
		v[j] = b2*v[j] + ob2*gj*gj
		denom := float32(math.Sqrt(float64(v[j])))/c.BC2Sqrt + c.Eps
		w[j] -= c.StepSize * m[j] / denom
	}
}

// SoftmaxRows replaces each row of x[m, n] by its softmax, computed in float32 as
// exp(x - max) / sum, like torch.softmax. If mask is not nil, mask[j] (an additive mask,
// 0 or a large negative number) is added to x[i][j] first; mask has n entries shared by all rows.
//
// The mask is folded into the kernel's passes where the CPU has one (amd64 with AVX-512 or AVX2).
func SoftmaxRows(x []float32, n int, mask []float32) {
	if mask != nil {
		mask = mask[:n:n]
	}
	for r := 0; r+n <= len(x); r += n {
		softmaxRowMask(x[r:r+n:r+n], mask)
	}
}

// addMask adds mask[j] to row[j].
func addMask(row, mask []float32) {
	m := mask[:len(row)]
	for j := range row {
		row[j] += m[j]
	}
}

// softmaxRowMaskGo is the pure-Go twin of softmaxRowMask: row += mask (when not nil), then
// softmaxRowGo.
func softmaxRowMaskGo(row, mask []float32) {
	if mask != nil {
		addMask(row, mask)
	}
	softmaxRowGo(row)
}

// softmaxRowGo replaces row by its softmax: the pure-Go twin of softmaxRow (the exponentials
// float32 within 2 ulp of exp, by expf; the sum in float32).
func softmaxRowGo(row []float32) {
	mx := float32(math.Inf(-1))
	for _, v := range row {
		if v > mx {
			mx = v
		}
	}
	var sum float32
	for j, v := range row {
		e := expf(v - mx)
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
}

// LayerNorm normalises each row of x[m, n] into dst (dst may alias x):
// dst = (x - mean) / sqrt(var + eps) * gamma + beta, with the biased variance, as torch.nn.LayerNorm.
// If mean and rstd are not nil they receive each row's mean and 1/sqrt(var+eps) (for backward).
// Rows are split over the processors when there are at least addLNParallelMin values (each
// row's result is the same either way).
func LayerNorm(dst, x, gamma, beta []float32, n int, eps float32, mean, rstd []float32) {
	rows := len(x) / n
	addLNJob{dst: dst, a: x[:rows*n], g: gamma[:n:n], bt: beta[:n:n], n: n, eps: eps, mean: mean, rstd: rstd}.runRows(rows)
}

// SoftmaxTerms sets e[j] = exp(x[j] − m), m = max(x), in float32 (within 2 ulp of exp;
// vectorised where the CPU allows), and returns m and the sum of the e[j] in float64:
// softmax(x)[j] = e[j]/sum. e has len(x) elements and may be x itself. For one row of a
// vocabulary's logits (a fill-mask's scores), where math.Exp in float64 cost a third of the
// query.
func SoftmaxTerms(e, x []float32) (m float32, sum float64) {
	m = rowMax(x)
	return m, expShiftSum(e[:len(x)], x, m)
}

// AddLayerNorm sets sum = a + b and normalises each row of sum[m, n] into dst, as Add then
// LayerNorm (the residual connection and LayerNorm of a BERT block) in one pass over a and b.
// dst may alias sum, a or b; sum may alias a or b. Rows are split over the processors when
// there are at least addLNParallelMin values (each row's result is the same either way).
func AddLayerNorm(sum, dst, a, b, gamma, beta []float32, n int, eps float32, mean, rstd []float32) {
	addLNJob{sum: sum, dst: dst, a: a[:len(sum)], b: b[:len(sum)], g: gamma[:n:n], bt: beta[:n:n],
		n: n, eps: eps, mean: mean, rstd: rstd}.runRows(len(sum) / n)
}

// addLNParallelMin is the smallest m·n that AddLayerNorm and LayerNorm split over goroutines:
// BERT-Mini's 128 tokens (32 K values, about 20 µs) and above.
const addLNParallelMin = 1 << 15

// addLNJob is one AddLayerNorm call (or, with b nil, one LayerNorm call of a), run on ranges
// of rows.
type addLNJob struct {
	sum, dst, a, b, g, bt []float32
	n                     int
	eps                   float32
	mean, rstd            []float32
	// run is the method value j.rows, bound once: passing it allocates nothing.
	run func(lo, hi int)
}

// runRows runs j on its rows [0, rows): on the calling goroutine below addLNParallelMin
// values, else split over the processors (row by row, so any split gives the same bits) by a
// pooled job whose method value is bound once: the call allocates nothing.
func (j addLNJob) runRows(rows int) {
	if rows*j.n < addLNParallelMin || runtime.GOMAXPROCS(0) < 2 {
		j.rows(0, rows)
		return
	}
	pj := addLNJobs.Get()
	j.run = pj.run
	*pj = j
	ParallelFor(rows, pj.run)
	*pj = addLNJob{run: pj.run} // keep no operand alive
	addLNJobs.Put(pj)
}

// addLNJobs keeps addLNJobs between calls.
var addLNJobs = FreeList[addLNJob]{New: func() *addLNJob {
	j := new(addLNJob)
	j.run = j.rows
	return j
}}

// rows computes rows [lo, hi).
func (j *addLNJob) rows(lo, hi int) {
	n := j.n
	for i := lo; i < hi; i++ {
		r := i * n
		var m32, rs32 float32
		if j.b == nil {
			m32, rs32 = layerNormRow(j.dst[r:r+n:r+n], j.a[r:r+n:r+n], j.g, j.bt, j.eps)
		} else {
			m32, rs32 = addLayerNormRow(j.sum[r:r+n:r+n], j.dst[r:r+n:r+n], j.a[r:r+n:r+n], j.b[r:r+n:r+n], j.g, j.bt, j.eps)
		}
		if j.mean != nil {
			j.mean[i] = m32
		}
		if j.rstd != nil {
			j.rstd[i] = rs32
		}
	}
}

// addLayerNormRowGo is the pure-Go twin of addLayerNormRow: Add, then layerNormRowGo.
func addLayerNormRowGo(sum, out, a, b, g, beta []float32, eps float32) (mean, rstd float32) {
	Add(sum, a, b)
	return layerNormRowGo(out, sum, g, beta, eps)
}

// layerNormRowGo normalises row[n] into out[n] (out may alias row) with gamma g[n] and beta b[n],
// and returns the row's mean and 1/sqrt(var+eps): the pure-Go twin of layerNormRow.
func layerNormRowGo(out, row, g, b []float32, eps float32) (mean, rstd float32) {
	n := len(row)
	out, g, b = out[:n], g[:n], b[:n]
	// Accumulate in float64: the mean of a few thousand float32 values loses digits otherwise,
	// and HF's CPU kernels accumulate with more precision than a naive float32 sum.
	var s float64
	for _, v := range row {
		s += float64(v)
	}
	mu := s / float64(n)
	var ss float64
	for _, v := range row {
		d := float64(v) - mu
		ss += d * d
	}
	rs := 1 / math.Sqrt(ss/float64(n)+float64(eps))
	m32, rs32 := float32(mu), float32(rs)
	for j, v := range row {
		out[j] = (v-m32)*rs32*g[j] + b[j]
	}
	return m32, rs32
}

// GELU applies the exact GELU, x * 0.5 * (1 + erf(x / sqrt(2))), in place (HF "gelu").
func GELU(x []float32) {
	gelu(x)
}

// geluGo is the pure-Go twin of gelu: the exact GELU x·Φ(x) with the float32 Φ of normCDF
// (erf.go), within a few float32 ulp of the float64 formula (TestGELUAccuracy).
func geluGo(x []float32) {
	for i, v := range x {
		phi, _ := normCDF(v)
		x[i] = v * phi
	}
}

// GELUWithDerivative sets y = GELU(x) and d = GELU'(x), one evaluation of Φ for both (d may
// alias x): y has GELU's bits, and Mul(dx, dy, d) gives GELUBackward(dx, dy, x)'s, so a
// training step can keep d from its forward pass and skip Φ in its backward.
func GELUWithDerivative(y, d, x []float32) {
	geluDeriv(y[:len(x)], d[:len(x)], x)
}

// geluDerivGo is the pure-Go twin of geluDeriv (GELUWithDerivative): geluGo's y and the
// factor geluBackwardGo multiplies dy by.
func geluDerivGo(y, d, x []float32) {
	const invSqrt2Pi = 0.3989422804014327 // 1/sqrt(2π)
	y, d = y[:len(x)], d[:len(x)]
	for i, v := range x {
		phi, ex := normCDF(v)
		if ex < 0 {
			ex = expNeg64(0.5 * float64(v) * float64(v))
		}
		y[i] = v * phi
		d[i] = phi + v*invSqrt2Pi*ex
	}
}

// GELUTanh applies the tanh approximation of GELU in place (HF "gelu_new", "gelu_pytorch_tanh"):
//
//	0.5·x·(1 + tanh(u)) = x·σ(2u) = x / (1 + exp(-2u)),  u = √(2/π)·(x + 0.044715x³)
//
// in float32, the exponentials taken gelutanhBlock at a time by the softmax's kernel (expf, 2
// ulp), so that the tail of 1 + tanh(u) near 0 keeps its relative precision; within a few ulp
// of the float64 formula (TestGELUTanhAccuracy). Below x = gelutanhTail it is x·0 (-0), as the
// float64 formula gives it there, where the value is under 1e-36.
func GELUTanh(x []float32) {
	var z [gelutanhBlock]float32
	for lo := 0; lo < len(x); lo += gelutanhBlock {
		b := x[lo:min(lo+gelutanhBlock, len(x))]
		e := z[:len(b)]
		gelutanhExp(e, b)
		for i, v := range b {
			if v < gelutanhTail {
				b[i] = v * 0
			} else {
				b[i] = v / (1 + e[i])
			}
		}
	}
}

// gelutanhBlock is the number of elements GELUTanh and GELUTanhBackward take at a time;
// gelutanhTail is where they stop computing: from there down gelu_new is under 1e-36 and its
// derivative under 1e-34, and exp(-2u) overflows float32 soon after (x ≈ -10.07).
const (
	gelutanhBlock = 256
	gelutanhTail  = -10
)

// gelutanhExp sets e[i] = exp(-2u(x[i])) for GELUTanh, the exponent capped at 88 (past
// gelutanhTail: the exp kernels are for the softmax's exponents, which are never large).
func gelutanhExp(e, x []float32) {
	const c2 = -2 * 0.7978845608028654 // -2·√(2/π)
	x = x[:len(e)]
	for i, v := range x {
		z := float32(c2) * (v + 0.044715*v*v*v)
		if z > 88 {
			z = 88
		}
		e[i] = z
	}
	expShiftSum(e, e, 0)
}

// ReLU applies max(0, x) in place.
func ReLU(x []float32) {
	for i, v := range x {
		if v < 0 {
			x[i] = 0
		}
	}
}

// Tanh applies tanh in place.
func Tanh(x []float32) {
	for i, v := range x {
		x[i] = float32(math.Tanh(float64(v)))
	}
}
