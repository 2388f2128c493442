//go:build amd64 && !purego

package tensor

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The element-wise and row kernels on amd64: AVX-512F or AVX2 assembly (ops_amd64.s), chosen
// by the CPU's features at run time, else the pure-Go twins of ops.go and ops_backward.go.
// The assembly does lane by lane what its twin does, in the same order and without FMA, so
// that element-wise results are bit-identical to the twin's (TestOpsAsmVsGo); reductions
// differ only in the order of their float64 (for softmaxRowGo, float32) sums. The AVX2
// kernels take whole vectors of 8; the twin finishes the rest of a slice.

// The instruction sets of the kernels.
const (
	opsGo = iota
	opsAVX2
	opsAVX512
)

// opsLevel is the instruction set the kernels use (a variable, so that tests and benchmarks
// can take each path on the same machine).
var opsLevel = func() int {
	switch {
	case cpu.X86.HasAVX512F:
		return opsAVX512
	case cpu.X86.HasAVX2:
		return opsAVX2
	}
	return opsGo
}()

// opsName names the element-wise kernels in use (see Kernels).
func opsName() string {
	return [...]string{opsGo: "go", opsAVX2: "avx2", opsAVX512: "avx512"}[opsLevel]
}

//go:noescape
func geluAVX512(x *float32, n int)

//go:noescape
func geluBackwardAVX512(dx, dy, x *float32, n int)

//go:noescape
func geluDerivAVX512(y, d, x *float32, n int)

//go:noescape
func mulAVX512(dst, a, b *float32, n int)

//go:noescape
func maxAddAVX512(x, mask *float32, n int) float32

//go:noescape
func maskScaleAVX512(dst, src *float32, keep *uint8, n int, scale float32)

//go:noescape
func maskScaleAVX2(dst, src *float32, keep *uint8, n int, scale float32)

//go:noescape
func expSumAVX512(dst, x, mask *float32, n int, shift float32) float64

//go:noescape
func scaleAVX512(x *float32, n int, s float32)

//go:noescape
func sumAVX512(x *float32, n int) float64

//go:noescape
func addSumAVX512(dst, a, b *float32, n int) float64

//go:noescape
func sumSqDevAVX512(x *float32, n int, mu float64) float64

//go:noescape
func layerNormApplyAVX512(out, x, gamma, beta *float32, n int, mean, rstd float32)

//go:noescape
func adamwAVX512(w, m, v, grad *float32, n int, c *AdamWConsts)

//go:noescape
func addColsAVX512(acc *float64, x *float32, n int)

// The AVX2 kernels: as their AVX-512 namesakes, on the first n &^ 7 elements only.

//go:noescape
func geluAVX2(x *float32, n int)

//go:noescape
func geluBackwardAVX2(dx, dy, x *float32, n int)

//go:noescape
func geluDerivAVX2(y, d, x *float32, n int)

//go:noescape
func mulAVX2(dst, a, b *float32, n int)

//go:noescape
func maxAddAVX2(x, mask *float32, n int) float32

//go:noescape
func expSumAVX2(dst, x, mask *float32, n int, shift float32) float64

//go:noescape
func scaleAVX2(x *float32, n int, s float32)

//go:noescape
func sumAVX2(x *float32, n int) float64

//go:noescape
func addSumAVX2(dst, a, b *float32, n int) float64

//go:noescape
func sumSqDevAVX2(x *float32, n int, mu float64) float64

//go:noescape
func layerNormApplyAVX2(out, x, gamma, beta *float32, n int, mean, rstd float32)

//go:noescape
func adamwAVX2(w, m, v, grad *float32, n int, c *AdamWConsts)

//go:noescape
func addColsAVX2(acc *float64, x *float32, n int)

// ptr is the address of s's first element, or nil for an empty or nil s.
func ptr(s []float32) *float32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.SliceData(s)
}

// vec8 is n rounded down to whole AVX2 vectors: the AVX2 kernels' share of n elements.
func vec8(n int) int { return n &^ 7 }

// gelu applies the exact GELU in place (see GELU).
func gelu(x []float32) {
	switch n := len(x); {
	case n == 0:
	case opsLevel == opsAVX512:
		geluAVX512(&x[0], n)
	case opsLevel == opsAVX2:
		k := vec8(n)
		if k > 0 {
			geluAVX2(&x[0], k)
		}
		geluGo(x[k:])
	default:
		geluGo(x)
	}
}

// geluBackward sets dx = dy·GELU'(x) (see GELUBackward); dy and x have len(dx) elements.
func geluBackward(dx, dy, x []float32) {
	n := len(dx)
	dy, x = dy[:n], x[:n]
	switch {
	case n == 0:
	case opsLevel == opsAVX512:
		geluBackwardAVX512(&dx[0], &dy[0], &x[0], n)
	case opsLevel == opsAVX2:
		k := vec8(n)
		if k > 0 {
			geluBackwardAVX2(&dx[0], &dy[0], &x[0], k)
		}
		geluBackwardGo(dx[k:], dy[k:], x[k:])
	default:
		geluBackwardGo(dx, dy, x)
	}
}

// geluDeriv sets y = GELU(x) and d = GELU'(x) (see GELUWithDerivative).
func geluDeriv(y, d, x []float32) {
	n := len(x)
	y, d = y[:n], d[:n]
	switch {
	case n == 0:
	case opsLevel == opsAVX512:
		geluDerivAVX512(&y[0], &d[0], &x[0], n)
	case opsLevel == opsAVX2:
		k := vec8(n)
		if k > 0 {
			geluDerivAVX2(&y[0], &d[0], &x[0], k)
		}
		geluDerivGo(y[k:], d[k:], x[k:])
	default:
		geluDerivGo(y, d, x)
	}
}

// maskScale applies a dropout mask (see MaskScale): the assembly on whole vectors (16 or 8
// elements; it reads keep a vector at a time), Go on the rest.
func maskScale(dst, src []float32, keep []uint8, scale float32) {
	n := len(dst)
	k := 0
	switch opsLevel {
	case opsAVX512:
		k = n &^ 15
		if k > 0 {
			maskScaleAVX512(&dst[0], &src[0], &keep[0], k, scale)
		}
	case opsAVX2:
		k = vec8(n)
		if k > 0 {
			maskScaleAVX2(&dst[0], &src[0], &keep[0], k, scale)
		}
	}
	maskScaleGo(dst[k:], src[k:n], keep[k:n], scale)
}

// mul sets dst[i] = a[i]·b[i] (see Mul).
func mul(dst, a, b []float32) {
	switch n := len(dst); {
	case n == 0:
	case opsLevel == opsAVX512:
		a, b = a[:n], b[:n]
		mulAVX512(&dst[0], &a[0], &b[0], n)
	case opsLevel == opsAVX2:
		a, b = a[:n], b[:n]
		k := vec8(n)
		if k > 0 {
			mulAVX2(&dst[0], &a[0], &b[0], k)
		}
		mulGo(dst[k:], a[k:], b[k:])
	default:
		mulGo(dst, a, b)
	}
}

// softmaxRow replaces row by its softmax (see SoftmaxRows).
func softmaxRow(row []float32) { softmaxRowMask(row, nil) }

// softmaxRowMask replaces row by the softmax of row + mask (mask nil: of row); mask has
// len(row) entries.
func softmaxRowMask(row, mask []float32) {
	n := len(row)
	if opsLevel == opsGo || n == 0 {
		softmaxRowMaskGo(row, mask)
		return
	}
	if mask != nil {
		mask = mask[:n]
	}
	mx := maxAdd(row, mask)
	s := expSum(row, row, mask, mx)
	scale(row, 1/float32(s))
}

// maxAdd is the largest row[j] + mask[j] (mask nil: row[j]); -Inf for an empty row.
func maxAdd(row, mask []float32) float32 {
	n := len(row)
	if n == 0 {
		return float32(math.Inf(-1))
	}
	if opsLevel == opsAVX512 {
		return maxAddAVX512(&row[0], ptr(mask), n)
	}
	k := vec8(n)
	mx := float32(math.Inf(-1))
	if k > 0 {
		mx = maxAddAVX2(&row[0], ptr(mask), k)
	}
	for j := k; j < n; j++ {
		v := row[j]
		if mask != nil {
			v += mask[j]
		}
		if v > mx {
			mx = v
		}
	}
	return mx
}

// expSum sets dst[j] = expf(x[j] + mask[j] - shift) (mask nil: expf(x[j] - shift)) and
// returns their sum in float64; x and mask have len(dst) elements, x may alias dst.
func expSum(dst, x, mask []float32, shift float32) float64 {
	n := len(dst)
	if n == 0 {
		return 0
	}
	if opsLevel == opsAVX512 {
		return expSumAVX512(&dst[0], &x[0], ptr(mask), n, shift)
	}
	k := vec8(n)
	var s float64
	if k > 0 {
		s = expSumAVX2(&dst[0], &x[0], ptr(mask), k, shift)
	}
	for j := k; j < n; j++ {
		v := x[j]
		if mask != nil {
			v += mask[j]
		}
		e := expf(v - shift)
		s += float64(e)
		dst[j] = e
	}
	return s
}

// expShiftSum sets dst[j] = expf(x[j] - shift) and returns their sum in float64; x has
// len(dst) elements and may alias dst.
func expShiftSum(dst, x []float32, shift float32) float64 {
	if opsLevel == opsGo {
		return expShiftSumGo(dst, x, shift)
	}
	return expSum(dst, x[:len(dst)], nil, shift)
}

// rowMax is the largest element of x (-Inf for an empty x).
func rowMax(x []float32) float32 {
	if opsLevel == opsGo {
		return rowMaxGo(x)
	}
	return maxAdd(x, nil)
}

//go:noescape
func addAVX512(dst, a, b *float32, n int)

//go:noescape
func addAVX2(dst, a, b *float32, n int)

// add sets dst[i] = a[i] + b[i] (see Add); a and b are at least as long as dst.
func add(dst, a, b []float32) {
	switch n := len(dst); {
	case n == 0:
	case opsLevel == opsAVX512:
		a, b = a[:n], b[:n]
		addAVX512(&dst[0], &a[0], &b[0], n)
	case opsLevel == opsAVX2:
		a, b = a[:n], b[:n]
		k := vec8(n)
		if k > 0 {
			addAVX2(&dst[0], &a[0], &b[0], k)
		}
		addGo(dst[k:], a[k:], b[k:])
	default:
		addGo(dst, a, b)
	}
}

// scale multiplies x by s in place (see Scale).
func scale(x []float32, s float32) {
	switch n := len(x); {
	case n == 0:
	case opsLevel == opsAVX512:
		scaleAVX512(&x[0], n, s)
	case opsLevel == opsAVX2:
		k := vec8(n)
		if k > 0 {
			scaleAVX2(&x[0], k, s)
		}
		scaleGo(x[k:], s)
	default:
		scaleGo(x, s)
	}
}

// sumSqDev is the sum of (float64(x[i]) - mu)² in float64.
func sumSqDev(x []float32, mu float64) float64 {
	n := len(x)
	if n == 0 {
		return 0
	}
	if opsLevel == opsAVX512 {
		return sumSqDevAVX512(&x[0], n, mu)
	}
	k := vec8(n)
	var ss float64
	if k > 0 {
		ss = sumSqDevAVX2(&x[0], k, mu)
	}
	for _, v := range x[k:] {
		d := float64(v) - mu
		ss += d * d
	}
	return ss
}

// sumSquares is the sum of x[i]² in float64 (see SumSquares).
func sumSquares(x []float32) float64 {
	if opsLevel == opsGo {
		return sumSquaresGo(x)
	}
	return sumSqDev(x, 0)
}

// layerNormRow normalises row[n] into out[n] (see LayerNorm) and returns the mean and rstd.
func layerNormRow(out, row, g, b []float32, eps float32) (mean, rstd float32) {
	n := len(row)
	if opsLevel == opsGo || n == 0 {
		return layerNormRowGo(out, row, g, b, eps)
	}
	var s float64
	if opsLevel == opsAVX512 {
		s = sumAVX512(&row[0], n)
	} else {
		k := vec8(n)
		if k > 0 {
			s = sumAVX2(&row[0], k)
		}
		for _, v := range row[k:] {
			s += float64(v)
		}
	}
	return layerNormFinish(out, row, g, b, eps, s/float64(n))
}

// addLayerNormRow sets sum = a + b and normalises it into out (see AddLayerNorm).
func addLayerNormRow(sum, out, a, b, g, beta []float32, eps float32) (mean, rstd float32) {
	n := len(sum)
	if opsLevel == opsGo || n == 0 {
		return addLayerNormRowGo(sum, out, a, b, g, beta, eps)
	}
	a, b = a[:n], b[:n]
	var s float64
	if opsLevel == opsAVX512 {
		s = addSumAVX512(&sum[0], &a[0], &b[0], n)
	} else {
		k := vec8(n)
		if k > 0 {
			s = addSumAVX2(&sum[0], &a[0], &b[0], k)
		}
		for j := k; j < n; j++ {
			sum[j] = a[j] + b[j]
			s += float64(sum[j])
		}
	}
	return layerNormFinish(out, sum, g, beta, eps, s/float64(n))
}

// layerNormFinish is layerNormRowGo after the mean mu of row: the variance, then the
// normalised row into out.
func layerNormFinish(out, row, g, b []float32, eps float32, mu float64) (mean, rstd float32) {
	n := len(row)
	out, g, b = out[:n], g[:n], b[:n]
	rs := 1 / math.Sqrt(sumSqDev(row, mu)/float64(n)+float64(eps))
	m32, rs32 := float32(mu), float32(rs)
	k := n
	if opsLevel == opsAVX512 {
		layerNormApplyAVX512(&out[0], &row[0], &g[0], &b[0], n, m32, rs32)
	} else {
		k = vec8(n)
		if k > 0 {
			layerNormApplyAVX2(&out[0], &row[0], &g[0], &b[0], k, m32, rs32)
		}
	}
	for j := k; j < n; j++ {
		out[j] = (row[j]-m32)*rs32*g[j] + b[j]
	}
	return m32, rs32
}

// adamw is one AdamW update of w, m and v by g (see AdamW); all have len(g) elements.
func adamw(w, m, v, g []float32, c *AdamWConsts) {
	n := len(g)
	w, m, v = w[:n], m[:n], v[:n]
	switch {
	case n == 0:
	case opsLevel == opsAVX512:
		adamwAVX512(&w[0], &m[0], &v[0], &g[0], n, c)
	case opsLevel == opsAVX2:
		k := vec8(n)
		if k > 0 {
			adamwAVX2(&w[0], &m[0], &v[0], &g[0], k, c)
		}
		adamwGo(w[k:], m[k:], v[k:], g[k:], c)
	default:
		adamwGo(w, m, v, g, c)
	}
}

// addCols sets acc[j] += float64(x[j]) for j < len(x) (see SumRows); acc has len(x) elements.
func addCols(acc []float64, x []float32) {
	n := len(x)
	acc = acc[:n]
	switch {
	case n == 0:
	case opsLevel == opsAVX512:
		addColsAVX512(&acc[0], &x[0], n)
	case opsLevel == opsAVX2:
		k := vec8(n)
		if k > 0 {
			addColsAVX2(&acc[0], &x[0], k)
		}
		addColsGo(acc[k:], x[k:])
	default:
		addColsGo(acc, x)
	}
}

//go:noescape
func lnbSums8AVX512(s *float64, dg, db, dy, x, gamma, mean, rstd *float32, n int)

//go:noescape
func lnbDxAVX512(dx, dy, x, gamma *float32, n int, mu, rs, m1, m2 float32)

//go:noescape
func lnbColsAVX512(dg, db, dy, x *float32, n int, mu, rs float32)

//go:noescape
func lnbSums4AVX2(s *float64, dg, db, dy, x, gamma, mean, rstd *float32, n int)

//go:noescape
func lnbDxAVX2(dx, dy, x, gamma *float32, n int, mu, rs, m1, m2 float32)

//go:noescape
func lnbColsAVX2(dg, db, dy, x *float32, n int, mu, rs float32)

// rows8Fast reports whether rows of n have the eight-row vector kernels of LayerNormBackward
// (lnbSums8, lnbDx, lnbCols) and SoftmaxBackward (smbSums8, smbDx): AVX-512 with n a multiple
// of 16, or AVX2 with n a multiple of 8 (every hidden size of the BERT family, and sequences
// of 16, 32, … tokens).
func rows8Fast(n int) bool {
	switch opsLevel {
	case opsAVX512:
		return n > 0 && n%16 == 0
	case opsAVX2:
		return n > 0 && n%8 == 0
	}
	return false
}

// lnbSums8 is lnbSums8Go by the assembly: rows8Fast(n) must hold. With AVX2 the eight rows go
// as two runs of four, rows 0-3 first, so that dg and db still get the rows in order.
func lnbSums8(s *[16]float64, dg, db, dy, x, g, mean, rstd []float32, n int) {
	dy, x, g, mean, rstd = dy[:8*n], x[:8*n], g[:n], mean[:8], rstd[:8]
	var pg, pb *float32
	if dg != nil {
		dg, db = dg[:n], db[:n]
		pg, pb = &dg[0], &db[0]
	}
	if opsLevel == opsAVX512 {
		lnbSums8AVX512(&s[0], pg, pb, &dy[0], &x[0], &g[0], &mean[0], &rstd[0], n)
		return
	}
	var t [8]float64 // s1 and s2 of four rows
	for h := 0; h < 8; h += 4 {
		lnbSums4AVX2(&t[0], pg, pb, &dy[h*n], &x[h*n], &g[0], &mean[h], &rstd[h], n)
		copy(s[h:h+4], t[:4])
		copy(s[8+h:8+h+4], t[4:])
	}
}

// lnbDx sets one row of LayerNormBackward's dx (see lnbDxGo).
func lnbDx(dx, dy, x, g []float32, mu, rs, m1, m2 float32) {
	n := len(dx)
	if !rows8Fast(n) {
		lnbDxGo(dx, dy, x, g, mu, rs, m1, m2)
		return
	}
	dy, x, g = dy[:n], x[:n], g[:n]
	if opsLevel == opsAVX512 {
		lnbDxAVX512(&dx[0], &dy[0], &x[0], &g[0], n, mu, rs, m1, m2)
		return
	}
	lnbDxAVX2(&dx[0], &dy[0], &x[0], &g[0], n, mu, rs, m1, m2)
}

// lnbCols adds one row's terms to dgamma and dbeta (see lnbColsGo).
func lnbCols(dg, db, dy, x []float32, mu, rs float32) {
	n := len(dg)
	if !rows8Fast(n) {
		lnbColsGo(dg, db, dy, x, mu, rs)
		return
	}
	db, dy, x = db[:n], dy[:n], x[:n]
	if opsLevel == opsAVX512 {
		lnbColsAVX512(&dg[0], &db[0], &dy[0], &x[0], n, mu, rs)
		return
	}
	lnbColsAVX2(&dg[0], &db[0], &dy[0], &x[0], n, mu, rs)
}

//go:noescape
func smbSums8AVX512(s *float64, dy, y *float32, n int)

//go:noescape
func smbDxAVX512(dx, dy, y *float32, n int, s float32)

//go:noescape
func smbSums4AVX2(s *float64, dy, y *float32, n int)

//go:noescape
func smbDxAVX2(dx, dy, y *float32, n int, s float32)

// smbSums8 is smbSums8Go by the assembly: rows8Fast(n) must hold.
func smbSums8(s *[8]float64, dy, y []float32, n int) {
	dy, y = dy[:8*n], y[:8*n]
	if opsLevel == opsAVX512 {
		smbSums8AVX512(&s[0], &dy[0], &y[0], n)
		return
	}
	smbSums4AVX2(&s[0], &dy[0], &y[0], n)
	smbSums4AVX2(&s[4], &dy[4*n], &y[4*n], n)
}

// smbDx sets one row of SoftmaxBackward's dx (see smbDxGo).
func smbDx(dx, dy, y []float32, s float32) {
	n := len(dx)
	if !rows8Fast(n) {
		smbDxGo(dx, dy, y, s)
		return
	}
	dy, y = dy[:n], y[:n]
	if opsLevel == opsAVX512 {
		smbDxAVX512(&dx[0], &dy[0], &y[0], n, s)
		return
	}
	smbDxAVX2(&dx[0], &dy[0], &y[0], n, s)
}

//go:noescape
func pcgKeep16AVX512(keep *uint8, lanes *uint64, blocks int, jump *uint64, thr uint32)

// pcgFast reports whether pcgKeep16AVX512 runs here (its 64-bit products need AVX-512 DQ).
var pcgFast = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// pcgKeepBlocks runs PCGKeep's whole blocks of 16 elements by the AVX-512 kernel where the CPU
// has it, from the state (hi, lo) already stepped to, and returns how many elements it
// decided, with (hi, lo) then at the state of the next draw (stepped to).
func pcgKeepBlocks(keep []uint8, hi, lo *uint64, thr uint32) int {
	blocks := len(keep) / 16
	if !pcgFast || opsLevel != opsAVX512 || blocks == 0 {
		return 0
	}
	var lanes [16]uint64
	h, l := *hi, *lo
	for r := range 8 {
		lanes[r], lanes[8+r] = h, l
		h, l = pcgStep(h, l)
	}
	pcgKeep16AVX512(&keep[0], &lanes[0], blocks, &pcgJump8[0], thr)
	*hi, *lo = lanes[0], lanes[8]
	return 16 * blocks
}
