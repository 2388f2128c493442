package tensor

import "math"

// AddBias adds bias[n] to every row of x[m, n]: x[i][j] += bias[j].
func AddBias(x, bias []float32, n int) {
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n : r+n]
		b := bias[:n:n]
		for j := range row {
			row[j] += b[j]
		}
	}
}

// Add sets dst[i] = a[i] + b[i]. dst may alias a or b.
func Add(dst, a, b []float32) {
	a = a[:len(dst)]
	b = b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// Scale multiplies x by s in place.
func Scale(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// SoftmaxRows replaces each row of x[m, n] by its softmax, computed in float32 as
// exp(x - max) / sum, like torch.softmax. If mask is not nil, mask[j] (an additive mask,
// 0 or a large negative number) is added to x[i][j] first; mask has n entries shared by all rows.
func SoftmaxRows(x []float32, n int, mask []float32) {
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n : r+n]
		if mask != nil {
			m := mask[:n:n]
			for j := range row {
				row[j] += m[j]
			}
		}
		softmaxRow(row)
	}
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
func LayerNorm(dst, x, gamma, beta []float32, n int, eps float32, mean, rstd []float32) {
	g := gamma[:n:n]
	b := beta[:n:n]
	for i, r := 0, 0; r+n <= len(x); i, r = i+1, r+n {
		m32, rs32 := layerNormRow(dst[r:r+n:r+n], x[r:r+n:r+n], g, b, eps)
		if mean != nil {
			mean[i] = m32
		}
		if rstd != nil {
			rstd[i] = rs32
		}
	}
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

// GELUTanh applies the tanh approximation of GELU in place (HF "gelu_new", "gelu_pytorch_tanh").
func GELUTanh(x []float32) {
	const c = 0.7978845608028654 // sqrt(2/pi)
	for i, v := range x {
		u := float64(v)
		x[i] = float32(0.5 * u * (1 + math.Tanh(c*(u+0.044715*u*u*u))))
	}
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
