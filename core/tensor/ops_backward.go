package tensor

import (
	"math"
	"runtime"
	"unsafe"
)

// The backward kernels of ops.go and of Linear: each takes the gradient of the loss with
// respect to the forward output (dy) and what the forward kept, and produces the gradient with
// respect to the forward input (dx) and parameters. Parameter gradients are accumulated (+=)
// so that several uses of a parameter, and several batches, add up; input gradients are
// overwritten unless the doc comment says otherwise. dx may alias dy wherever the forward
// kernel is elementwise or row-wise.

// LinearBackward is the backward of Linear (y[m, out] = x[m, in]·w[out, in]ᵀ + b):
//
//	dw[o][i] += sum_r dy[r][o]*x[r][i]   (dw = dyᵀ·x), skipped when dw is nil
//	db[o]    += sum_r dy[r][o]           skipped when db is nil
//	dx[r][i]  = sum_o dy[r][o]*w[o][i] + dxBeta*dx[r][i]   (dx = dy·w), skipped when dx is nil
//
// dxBeta is 0 to overwrite dx or 1 to add to it (a residual branch already stored there).
func LinearBackward(dx, dw, db, dy, x, w []float32, m, in, out int, dxBeta float32) {
	if dw != nil {
		Gemm(true, false, out, in, m, 1, dy, out, x, in, 1, dw, in)
	}
	if db != nil {
		SumRows(db, dy[:m*out], out)
	}
	if dx != nil {
		Gemm(false, false, m, in, out, 1, dy, out, w, in, dxBeta, dx, in)
	}
}

// SumRows adds the column sums of x[m, n] to dst[n] (the gradient of a bias added to every row):
//
//	for i < m, j < n: dst[j] += x[i][j]
//
// The sums are accumulated in float64 and added to dst once.
//
// With at least backwardParallelMin values and more than one processor, the columns are split
// over the processors: each column's sum still runs over the rows in order, so the result is
// the same bits.
func SumRows(dst, x []float32, n int) {
	sumRowsChunks(backwardChunks(len(x)), dst, x, n)
}

// backwardParallelMin is the smallest number of values that SumRows and LayerNormBackward
// split over goroutines: the size from which AddLayerNorm splits its rows.
const backwardParallelMin = addLNParallelMin

// backwardChunks is the number of goroutines SumRows and LayerNormBackward use for size values.
func backwardChunks(size int) int {
	if size < backwardParallelMin || runtime.GOARCH == "wasm" {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// sumRowsChunks is SumRows with its columns split into at most chunks ranges, one goroutine each.
func sumRowsChunks(chunks int, dst, x []float32, n int) {
	if n == 0 {
		return
	}
	m := len(x) / n
	buf := sumBufs.Get()
	defer sumBufs.Put(buf)
	acc := zeroSums(buf, n)
	d := dst[:n:n]
	// Columns [c0, c1): their sums over all rows, in row order.
	cols := func(c0, c1 int) {
		a := acc[c0:c1:c1]
		for r := 0; r < m; r++ {
			addCols(a, x[r*n+c0:r*n+c1:r*n+c1])
		}
		for j, s := range a {
			d[c0+j] += float32(s)
		}
	}
	if chunks <= 1 {
		cols(0, n)
		return
	}
	parallelChunks(n, ceilDiv(n, chunks), cols)
}

// sumBufs keeps the float64 column sums of SumRows and SoftmaxCrossEntropyLinearBackward
// between calls. Made fresh each call (244 KB for the MLM decoder's bias over a 30,522-word
// vocabulary), they came from memory the heap had not used since its last collection, first
// touched in the middle of the two goroutines' block sums: those took 2.0-2.6 ms of CPU a
// call at BERT-Tiny's shape on two threads, 0.41-0.43 ms with the sums kept (the whole call
// 8.6-9.0 -> 7.5-8.0 ms).
var sumBufs = FreeList[[]float64]{
	New:     func() *[]float64 { return new([]float64) },
	MaxIdle: func() int { return runtime.GOMAXPROCS(0) },
}

// zeroSums returns n zeros in *buf, growing it when it is too small.
func zeroSums(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	s := (*buf)[:n]
	clear(s)
	return s
}

// addColsGo is the pure-Go twin of addCols: acc[j] += float64(x[j]).
func addColsGo(acc []float64, x []float32) {
	acc = acc[:len(x)]
	for j, v := range x {
		acc[j] += float64(v)
	}
}

// SoftmaxBackward is the backward of SoftmaxRows for rows of n, given the softmax output y:
//
//	dx[i][j] = y[i][j] * (dy[i][j] - sum_k dy[i][k]*y[i][k])
//
// The additive mask of SoftmaxRows has no gradient; masked entries (y = 0) get dx = 0.
// dx may alias dy.
func SoftmaxBackward(dx, dy, y []float32, n int) {
	r := 0
	if rows8Fast(n) {
		// Eight rows at a time with the vector kernels: each row's sum in its own float64
		// lane, over the row in order (smbSums8), the same bits as the loop below.
		var s [8]float64
		for ; r+8*n <= len(y); r += 8 * n {
			smbSums8(&s, dy[r:], y[r:], n)
			for k := range 8 {
				o := r + k*n
				smbDx(dx[o:o+n:o+n], dy[o:o+n], y[o:o+n], float32(s[k]))
			}
		}
	}
	for ; r+n <= len(y); r += n {
		smbDxGo(dx[r:r+n:r+n], dy[r:r+n], y[r:r+n], float32(smbSum(dy[r:r+n], y[r:r+n])))
	}
}

// smbSum is the sum of float64(dy[j])·float64(y[j]) over j < len(y), in order.
func smbSum(dy, y []float32) float64 {
	dy = dy[:len(y)]
	var s float64
	for j, v := range y {
		s += float64(dy[j]) * float64(v)
	}
	return s
}

// smbSums8Go is the pure-Go twin of smbSums8: s[r] is SoftmaxBackward's sum of row r of the
// eight rows of n floats at dy and y (row r at [r·n:]).
func smbSums8Go(s *[8]float64, dy, y []float32, n int) {
	for r := range 8 {
		s[r] = smbSum(dy[r*n:(r+1)*n], y[r*n:(r+1)*n])
	}
}

// smbDxGo is the pure-Go twin of smbDx: dx[j] = y[j]·(dy[j] - s) for j < len(dx) (dx may
// alias dy).
func smbDxGo(dx, dy, y []float32, s float32) {
	n := len(dx)
	dy, y = dy[:n:n], y[:n:n]
	for j, v := range y {
		dx[j] = v * (dy[j] - s)
	}
}

// LayerNormBackward is the backward of LayerNorm for rows of n, given the LayerNorm input x
// and the mean and rstd it recorded. With xh = (x - mean)·rstd and g = dy·gamma:
//
//	dgamma[j] += sum_i dy[i][j]*xh[i][j]
//	dbeta[j]  += sum_i dy[i][j]
//	dx[i][j]   = rstd[i] * (g[i][j] - mean_k g[i][k] - xh[i][j]*mean_k g[i][k]*xh[i][k])
//
// The row means are accumulated in float64. dx may alias dy.
//
// With at least lnBackwardParallelMin values and more than one processor (and dx apart from
// dy and x), one fork-join splits the work: each goroutine computes dx for its share of the
// rows and dgamma, dbeta for its share of the columns, summed over all rows in order: the same
// bits as one goroutine.
func LayerNormBackward(dx, dgamma, dbeta, dy, x, gamma, mean, rstd []float32, n int) {
	chunks := 1
	if len(x) >= lnBackwardParallelMin {
		chunks = backwardChunks(len(x))
	}
	if overlaps(dx, dy) || overlaps(dx, x) {
		chunks = 1
	}
	layerNormBackwardChunks(chunks, dx, dgamma, dbeta, dy, x, gamma, mean, rstd, n)
}

// lnBackwardParallelMin is the smallest number of values that LayerNormBackward splits over
// goroutines: BERT-Mini's 1,024 rows of 256 and above. The split reads every row twice (the
// column sums apart from dx), half of them written by the other core: in a training step of
// BERT-Tiny (1,024 rows of 128) that cost more than the second core gave (two threads 1.745x
// one, against 1.715x split; measured alone, with the rows in cache, the split gained 18%).
const lnBackwardParallelMin = 1 << 18

// overlaps reports whether a and b share memory.
func overlaps(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b))*4 && b0 < a0+uintptr(len(a))*4
}

// layerNormBackwardChunks is LayerNormBackward on at most chunks goroutines (dx must not
// overlap dy or x when chunks > 1).
func layerNormBackwardChunks(chunks int, dx, dgamma, dbeta, dy, x, gamma, mean, rstd []float32, n int) {
	rows := len(x) / n
	if chunks <= 1 || rows < 2 || n < 2 {
		layerNormBackwardRows(dx, dgamma, dbeta, dy, x, gamma, mean, rstd, n)
		return
	}
	g := gamma[:n:n]
	fast := rows8Fast(n)
	parallelChunks(rows, ceilDiv(rows, chunks), func(lo, hi int) {
		// The columns in proportion to the rows (in runs of 16 for the vector kernels):
		// consecutive chunks meet, so every column is summed by exactly one goroutine.
		c0, c1 := lo*n/rows, hi*n/rows
		if fast {
			c0, c1 = c0&^15, c1&^15 // n is a multiple of 16: the last chunk ends at n
		}
		if c0 < c1 {
			dg, db := dgamma[c0:c1:c1], dbeta[c0:c1:c1]
			for i := 0; i < rows; i++ {
				lnbCols(dg, db, dy[i*n+c0:i*n+c1], x[i*n+c0:i*n+c1], mean[i], rstd[i])
			}
		}
		i := lo
		if fast {
			for ; i+8 <= hi; i += 8 {
				layerNormBackward8(dx, nil, nil, dy, x, g, mean, rstd, n, i)
			}
		}
		for ; i+2 <= hi; i += 2 { // two rows at a time, as layerNormBackwardRows
			ra, rb := i*n, (i+1)*n
			xa, xb := x[ra:ra+n:ra+n], x[rb:rb+n:rb+n]
			dya, dyb := dy[ra:ra+n:ra+n], dy[rb:rb+n:rb+n]
			mua, rsa, mub, rsb := mean[i], rstd[i], mean[i+1], rstd[i+1]
			var s1a, s2a, s1b, s2b float64
			for j := range xa {
				xha, xhb := (xa[j]-mua)*rsa, (xb[j]-mub)*rsb
				ga, gb := dya[j]*g[j], dyb[j]*g[j]
				s1a += float64(ga)
				s2a += float64(ga) * float64(xha)
				s1b += float64(gb)
				s2b += float64(gb) * float64(xhb)
			}
			layerNormDx(dx[ra:ra+n:ra+n], dya, xa, g, mua, rsa, s1a, s2a)
			layerNormDx(dx[rb:rb+n:rb+n], dyb, xb, g, mub, rsb, s1b, s2b)
		}
		for ; i < hi; i++ {
			r := i * n
			xr, dyr := x[r:r+n:r+n], dy[r:r+n:r+n]
			s1, s2 := layerNormRowSums(dyr, xr, g, mean[i], rstd[i])
			layerNormDx(dx[r:r+n:r+n], dyr, xr, g, mean[i], rstd[i], s1, s2)
		}
	})
}

// layerNormBackward8 is layerNormBackwardRows on the eight rows [i, i+8) by the vector kernels
// (rows8Fast(n)): their sums by lnbSums8 (which adds their terms to dg and db, unless nil),
// then their dx.
func layerNormBackward8(dx, dg, db, dy, x, g, mean, rstd []float32, n, i int) {
	var s [16]float64
	lnbSums8(&s, dg, db, dy[i*n:], x[i*n:], g, mean[i:], rstd[i:], n)
	for r := range 8 {
		k := (i + r) * n
		lnbDx(dx[k:k+n:k+n], dy[k:k+n], x[k:k+n], g, mean[i+r], rstd[i+r], float32(s[r]/float64(n)), float32(s[8+r]/float64(n)))
	}
}

// layerNormRowSums returns one row's sums s1 = sum_j g[j] and s2 = sum_j g[j]·x̂[j] (g = dy·gamma,
// x̂ = (x - mu)·rs) in float64, over the row in order: layerNormBackwardRow's sums.
func layerNormRowSums(dyr, xr, gamma []float32, mu, rs float32) (s1, s2 float64) {
	dyr, gamma = dyr[:len(xr)], gamma[:len(xr)]
	for j, v := range xr {
		xh := (v - mu) * rs
		gj := dyr[j] * gamma[j]
		s1 += float64(gj)
		s2 += float64(gj) * float64(xh)
	}
	return s1, s2
}

// layerNormDx sets one row of LayerNormBackward's dx from the row's sums s1 = sum_j g[j] and
// s2 = sum_j g[j]·xh[j] (g = dy·gamma).
func layerNormDx(dxr, dyr, xr, g []float32, mu, rs float32, s1, s2 float64) {
	n := len(xr)
	lnbDx(dxr[:n:n], dyr, xr, g, mu, rs, float32(s1/float64(n)), float32(s2/float64(n)))
}

// lnbDxGo is the pure-Go twin of lnbDx: dx[j] = rs·(dy[j]·g[j] - m1 - x̂[j]·m2), x̂[j] =
// (x[j] - mu)·rs, for j < len(dx), with m1 and m2 the row's means s1/n and s2/n (see
// layerNormDx).
func lnbDxGo(dx, dy, x, g []float32, mu, rs, m1, m2 float32) {
	n := len(dx)
	dy, x, g = dy[:n:n], x[:n:n], g[:n:n]
	for j, v := range x {
		xh := (v - mu) * rs
		dx[j] = rs * (dy[j]*g[j] - m1 - xh*m2)
	}
}

// lnbColsGo is the pure-Go twin of lnbCols: one row's terms of dgamma and dbeta,
// dg[j] += dy[j]·x̂[j] and db[j] += dy[j] with x̂[j] = (x[j] - mu)·rs, for j < len(dg).
func lnbColsGo(dg, db, dy, x []float32, mu, rs float32) {
	n := len(dg)
	db, dy, x = db[:n:n], dy[:n:n], x[:n:n]
	for j, v := range x {
		xh := (v - mu) * rs
		d := dy[j]
		dg[j] += d * xh
		db[j] += d
	}
}

// lnbSums8Go is the pure-Go twin of lnbSums8: for the eight rows of n floats at dy and x
// (row r at [r·n:]), s[r] and s[8+r] are the row's sums s1 and s2 of layerNormBackwardRow,
// and with dg not nil the rows' terms are added to dg and db, row after row.
func lnbSums8Go(s *[16]float64, dg, db, dy, x, g, mean, rstd []float32, n int) {
	g = g[:n:n]
	for r := range 8 {
		xr, dyr := x[r*n:(r+1)*n:(r+1)*n], dy[r*n:(r+1)*n:(r+1)*n]
		s[r], s[8+r] = layerNormRowSums(dyr, xr, g, mean[r], rstd[r])
		if dg != nil {
			lnbColsGo(dg, db, dyr, xr, mean[r], rstd[r])
		}
	}
}

// layerNormBackwardRows is LayerNormBackward on one goroutine, row after row, dgamma and dbeta
// summed in the same pass as the row means.
func layerNormBackwardRows(dx, dgamma, dbeta, dy, x, gamma, mean, rstd []float32, n int) {
	g := gamma[:n:n]
	dg := dgamma[:n:n]
	db := dbeta[:n:n]
	rows := len(x) / n
	i := 0
	if rows8Fast(n) {
		// Eight rows at a time with the vector kernels: the sums of each row in its own
		// float64 lane, over the columns in order (lnbSums8), so every sum is still the
		// one-row loop's, bit for bit.
		for ; i+8 <= rows; i += 8 {
			layerNormBackward8(dx, dg, db, dy, x, g, mean, rstd, n, i)
		}
	}
	// Two rows at a time: their four sums are independent chains of float64 additions, where
	// one row's two left the core waiting on their latency (BenchmarkLayerNormBackward,
	// 1024x128 on one core: 292-296 µs a row at a time, 212-229 two at a time). dgamma and
	// dbeta still get row a's term before row b's, so every sum is the one-row loop's, bit for
	// bit.
	for ; i+2 <= rows; i += 2 {
		ra, rb := i*n, (i+1)*n
		xa, xb := x[ra:ra+n:ra+n], x[rb:rb+n:rb+n]
		dya, dyb := dy[ra:ra+n:ra+n], dy[rb:rb+n:rb+n]
		mua, rsa, mub, rsb := mean[i], rstd[i], mean[i+1], rstd[i+1]
		var s1a, s2a, s1b, s2b float64
		for j := range xa {
			xha, xhb := (xa[j]-mua)*rsa, (xb[j]-mub)*rsb
			da, dbv := dya[j], dyb[j]
			ga, gb := da*g[j], dbv*g[j]
			s1a += float64(ga)
			s2a += float64(ga) * float64(xha)
			s1b += float64(gb)
			s2b += float64(gb) * float64(xhb)
			dg[j] += da * xha
			dg[j] += dbv * xhb
			db[j] += da
			db[j] += dbv
		}
		layerNormDx(dx[ra:ra+n:ra+n], dya, xa, g, mua, rsa, s1a, s2a)
		layerNormDx(dx[rb:rb+n:rb+n], dyb, xb, g, mub, rsb, s1b, s2b)
	}
	for ; i < rows; i++ {
		r := i * n
		layerNormBackwardRow(dx[r:r+n:r+n], dg, db, dy[r:r+n:r+n], x[r:r+n:r+n], g, mean[i], rstd[i])
	}
}

// layerNormBackwardRow is layerNormBackwardRows on one row of n = len(xr) elements (the
// reference its two-row loop keeps the bits of).
func layerNormBackwardRow(dxr, dg, db, dyr, xr, g []float32, mu, rs float32) {
	var s1, s2 float64
	for j, v := range xr {
		xh := (v - mu) * rs
		d := dyr[j]
		gj := d * g[j]
		s1 += float64(gj)
		s2 += float64(gj) * float64(xh)
		dg[j] += d * xh
		db[j] += d
	}
	layerNormDx(dxr, dyr, xr, g, mu, rs, s1, s2)
}

// GELUBackward is the backward of the exact GELU given its input x (dx may alias dy):
//
//	dx[i] = dy[i] * (Φ(x) + x·φ(x)),  Φ(x) = (1 + erf(x/√2))/2,  φ(x) = exp(-x²/2)/√(2π)
func GELUBackward(dx, dy, x []float32) {
	geluBackward(dx, dy[:len(dx)], x[:len(dx)])
}

// geluBackwardGo is the pure-Go twin of geluBackward (GELUBackward).
func geluBackwardGo(dx, dy, x []float32) {
	const invSqrt2Pi = 0.3989422804014327 // 1/sqrt(2π)
	x = x[:len(dx)]
	dy = dy[:len(dx)]
	for i, v := range x {
		// Φ and exp(-x²/2) in float32 (erf.go); normCDF returns the exponential when it needed it.
		phi, ex := normCDF(v)
		if ex < 0 {
			ex = expNeg64(0.5 * float64(v) * float64(v))
		}
		dx[i] = dy[i] * (phi + v*invSqrt2Pi*ex)
	}
}

// GELUTanhBackward is the backward of GELUTanh given its input x (dx may alias dy): with
// s = σ(2u) = 1/(1 + e), e = exp(-2u), u = c·(x + 0.044715x³) and c = √(2/π),
//
//	dx[i] = dy[i] · (s + 2x·s·(1 - s)·c·(1 + 3·0.044715x²))
//
// which is 0.5·(1 + t) + 0.5·x·(1 - t²)·u' with t = tanh(u) = 2s - 1; 1 - s is taken as e·s
// where s is near 1, so that it keeps its precision, and the derivative is 0 below
// gelutanhTail (under 1e-34 there).
func GELUTanhBackward(dx, dy, x []float32) {
	const c = 0.7978845608028654 // sqrt(2/pi)
	x = x[:len(dx)]
	dy = dy[:len(dx)]
	var z [gelutanhBlock]float32
	for lo := 0; lo < len(dx); lo += gelutanhBlock {
		hi := min(lo+gelutanhBlock, len(dx))
		xb, e := x[lo:hi], z[:hi-lo]
		gelutanhExp(e, xb)
		for i, v := range xb {
			s := 1 / (1 + e[i])
			var d float32 // 0 in the far negative tail
			if !(v < gelutanhTail) {
				q := 1 - s // 1 - s, exact enough where s <= 1/2; e·s where s is near 1
				if e[i] < 1 {
					q = e[i] * s
				}
				d = s + 2*v*s*q*(c*(1+3*0.044715*v*v))
			}
			dx[lo+i] = dy[lo+i] * d
		}
	}
}

// ReLUBackward is the backward of ReLU given its input x: dx[i] = dy[i] if x[i] > 0, else 0
// (PyTorch's choice at 0). dx may alias dy.
func ReLUBackward(dx, dy, x []float32) {
	x = x[:len(dx)]
	dy = dy[:len(dx)]
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

// TanhBackward is the backward of Tanh given its output y: dx[i] = dy[i] * (1 - y[i]²).
// dx may alias dy.
func TanhBackward(dx, dy, y []float32) {
	y = y[:len(dx)]
	dy = dy[:len(dx)]
	for i, v := range y {
		dx[i] = dy[i] * (1 - v*v)
	}
}

// SoftmaxCrossEntropyBackward is the loss and gradient of one row of logits x[n] with label y:
// it returns -log softmax(x)[y] and writes dx = (softmax(x) - onehot(y))·scale. Reference:
//
//	mx = max_j x[j]; s = sum_j exp(x[j] - mx)
//	loss = log(s) - (x[y] - mx); dx[j] = (exp(x[j] - mx)/s - (j == y ? 1 : 0))·scale
//
// The exponentials are float32 (within 2 ulp of exp), their sum and the logarithm float64.
// dx may alias x.
func SoftmaxCrossEntropyBackward(dx, x []float32, y int, scale float32) float64 {
	x = x[:len(dx)]
	mx := rowMax(x)
	xy := x[y] - mx
	s := expShiftSum(dx, x, mx)
	Scale(dx, float32(1/s)*scale)
	dx[y] = float32(float64(expf(xy))/s-1) * scale
	return math.Log(s) - float64(xy)
}

// rowMaxGo is the pure-Go twin of rowMax: the largest element of x, -Inf for an empty x.
func rowMaxGo(x []float32) float32 {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		if v > mx {
			mx = v
		}
	}
	return mx
}

// expShiftSumGo is the pure-Go twin of expShiftSum: dst[j] = expf(x[j] - shift), and their
// sum in float64 (in order). x may alias dst.
func expShiftSumGo(dst, x []float32, shift float32) float64 {
	x = x[:len(dst)]
	var s float64
	for j, v := range x {
		e := expf(v - shift)
		s += float64(e)
		dst[j] = e
	}
	return s
}

// expf is exp(x) in float32 within 2 ulp (Cephes expf: x = k·ln2 + r, |r| <= ln2/2, a
// degree-6 polynomial for exp(r), then the exponent of 2^k set directly). Results below the
// smallest normal float32 are 0.
//
// It is for reductions over many exponentials (the cross entropy over a vocabulary), where
// math.Exp in float64 would cost more than the matrix products around it.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		c1    = 0.693359375    // ln 2, high part (exact in float32)
		c2    = -2.12194440e-4 // ln 2 - c1
		hi    = 88.72283905206835
		lo    = -87.33654475055310898657 // ln(2^-126)
	)
	switch {
	case x != x:
		return x
	case x > hi:
		return float32(math.Inf(1))
	case x < lo:
		return 0
	}
	// Adding 1.5·2²³ rounds a float32 of magnitude below 2²² to an integer.
	const magic = 12582912
	k := (x*log2e + magic) - magic
	r := x - k*c1 - k*c2
	p := expPoly(r)
	ki := int32(k)
	if ki == 128 {
		// 2^128 overflows float32 although p·2^128 may not.
		return p * 2 * math.Float32frombits(uint32(ki-1+127)<<23)
	}
	return p * math.Float32frombits(uint32(ki+127)<<23)
}
