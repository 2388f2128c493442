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
