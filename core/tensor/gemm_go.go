package tensor

// Pure-Go micro-kernels: the browser's path, the fallback everywhere, and the twin every
// assembly kernel is tested against. Each keeps its accumulators in scalar locals; Go's amd64
// compiler holds floats in X0-X14 only, so a 2×4 tile (8 accumulators, 2 A and 4 B values)
// is the largest that does not spill there. Larger tiles (4×4, 3×4, 2×8) also measured
// slower in wasm.

// gemmKernelGo2x4 is the reference loop of every micro-kernel, for a 2×4 tile:
//
//	for i < 2, j < 4: C[i*ldc+j] = sum_p a[p*2+i]*b[p*4+j] + beta*C[i*ldc+j]  (beta 0: C not read)
func gemmKernelGo2x4(kc int, a, b, c []float32, ldc int, beta float32) {
	acc := gemmDotGo2x4(a[:2*kc], b[:4*kc])
	r0 := (*[4]float32)(c[:4])
	r1 := (*[4]float32)(c[ldc : ldc+4])
	if beta == 0 {
		*r0 = [4]float32(acc[:4])
		*r1 = [4]float32(acc[4:])
		return
	}
	for j := range 4 {
		r0[j] = acc[j] + beta*r0[j]
		r1[j] = acc[4+j] + beta*r1[j]
	}
}

// gemmDotGo2x4 returns the 2×4 tile of sums over the packed slivers a [kc][2] and b [kc][4].
// It is a function of its own so that nothing but the tile competes for registers in the
// loop (beta kept live across it cost 4x in wasm); the loop reslices instead of indexing, and
// takes two depth steps per turn, which measured fastest both natively and in wasm.
func gemmDotGo2x4(a, b []float32) [8]float32 {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	for len(a) >= 4 && len(b) >= 8 {
		ap := (*[4]float32)(a)
		bp := (*[8]float32)(b)
		a0, a1 := ap[0], ap[1]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a0, a1 = ap[2], ap[3]
		b0, b1, b2, b3 = bp[4], bp[5], bp[6], bp[7]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a = a[4:]
		b = b[8:]
	}
	if len(a) >= 2 && len(b) >= 4 {
		a0, a1 := a[0], a[1]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	return [8]float32{c00, c01, c02, c03, c10, c11, c12, c13}
}

// gemmGo2x4 is the pure-Go kernel with its blocking.
var gemmGo2x4 = &gemmKernel{name: "go-2x4", mr: 2, nr: 4, kc: 256, mc: 128, nc: 512, fn: gemmKernelGo2x4}
