//go:build !amd64 || purego

package tensor

// Outside amd64 the kernels below are their pure-Go twins (the SIMD build for wasm has its
// own softmaxRow, layerNormRow, gelu, expShiftSum, rowMax and addCols in ops_simd_wasm.go).

// softmaxRowMask replaces row by the softmax of row + mask (mask nil: of row).
func softmaxRowMask(row, mask []float32) {
	if mask != nil {
		addMask(row, mask)
	}
	softmaxRow(row)
}

// addLayerNormRow sets sum = a + b and normalises it into out (see AddLayerNorm).
func addLayerNormRow(sum, out, a, b, g, beta []float32, eps float32) (mean, rstd float32) {
	Add(sum, a, b)
	return layerNormRow(out, sum, g, beta, eps)
}

// maskScale applies a dropout mask (see MaskScale).
func maskScale(dst, src []float32, keep []uint8, scale float32) { maskScaleGo(dst, src, keep, scale) }

// rows8Fast reports whether rows of n have the eight-row vector kernels of LayerNormBackward
// and SoftmaxBackward: not here.
func rows8Fast(n int) bool { return false }

// lnbSums8 is lnbSums8Go (not called here: rows8Fast is false).
func lnbSums8(s *[16]float64, dg, db, dy, x, g, mean, rstd []float32, n int) {
	lnbSums8Go(s, dg, db, dy, x, g, mean, rstd, n)
}

// lnbDx sets one row of LayerNormBackward's dx (see lnbDxGo).
func lnbDx(dx, dy, x, g []float32, mu, rs, m1, m2 float32) { lnbDxGo(dx, dy, x, g, mu, rs, m1, m2) }

// lnbCols adds one row's terms to dgamma and dbeta (see lnbColsGo).
func lnbCols(dg, db, dy, x []float32, mu, rs float32) { lnbColsGo(dg, db, dy, x, mu, rs) }

// smbSums8 is smbSums8Go (not called here: rows8Fast is false).
func smbSums8(s *[8]float64, dy, y []float32, n int) { smbSums8Go(s, dy, y, n) }

// smbDx sets one row of SoftmaxBackward's dx (see smbDxGo).
func smbDx(dx, dy, y []float32, s float32) { smbDxGo(dx, dy, y, s) }

// pcgFast reports whether PCGKeep has a vector kernel: not here.
var pcgFast = false

// pcgKeepBlocks decides no element here: PCGKeep runs the generator in Go.
func pcgKeepBlocks(keep []uint8, hi, lo *uint64, thr uint32) int { return 0 }
