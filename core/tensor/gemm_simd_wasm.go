//go:build wasm && goexperiment.simd && !purego

package tensor

import "simd"

// The browser's fast path: Go's portable simd package (Go 1.27, GOEXPERIMENT=simd), which the
// wasm backend compiles to 128-bit SIMD (f32x4) instructions. A simd.Float32s holds 4 float32
// lanes there (simdLanes; TestSIMDLanes checks it). The driver is the same as everywhere
// (gemm.go); the scalar twin gemmKernelGo2x4 stays in the list and both are tested against
// gemmRef and gonum.

// simdLanes is the number of float32 lanes of a simd.Float32s in wasm (128-bit vectors).
const simdLanes = 4

// gemmKernelSIMD2x16 computes a 2×16 tile: for i < 2, j < 16:
//
//	c[i*ldc+j] = sum_p a[p*2+i]*b[p*16+j] + beta*c[i*ldc+j]  (beta 0: c not read)
//
// a is a packed A sliver [kc][2], b a packed B sliver [kc][16].
func gemmKernelSIMD2x16(kc int, a, b, c []float32, ldc int, beta float32) {
	if gemmWasmAsm && kc > 0 {
		gemmColSIMD2x16(kc, 1, a, b, c, ldc, beta)
		return
	}
	r0 := (*[16]float32)(c[:16])
	r1 := (*[16]float32)(c[ldc : ldc+16])
	if beta == 0 {
		// The accumulators go straight to C: no round trip through memory on the stack.
		gemmDotSIMD2x16(r0, r1, a[:2*kc], b[:16*kc])
		return
	}
	var acc0, acc1 [16]float32
	gemmDotSIMD2x16(&acc0, &acc1, a[:2*kc], b[:16*kc])
	vb := simd.BroadcastFloat32s(beta)
	for j := 0; j < 16; j += simdLanes {
		x0 := simd.LoadFloat32s(r0[j : j+simdLanes])
		x1 := simd.LoadFloat32s(r1[j : j+simdLanes])
		simd.LoadFloat32s(acc0[j : j+simdLanes]).Add(x0.Mul(vb)).Store(r0[j : j+simdLanes])
		simd.LoadFloat32s(acc1[j : j+simdLanes]).Add(x1.Mul(vb)).Store(r1[j : j+simdLanes])
	}
}

// gemmColSIMD2x16 computes tiles full 2×16 tiles down one column of C (gemmKernel.col): tile t
// is gemmKernelSIMD2x16(kc, a[t·2·kc:], b, c[t·2·ldc:], ldc, beta). With gemmWasmAsm it is one
// call of the hand-written gemmCol2x16Asm (the slices checked here first), else the Go kernel
// tile by tile, its twin.
func gemmColSIMD2x16(kc, tiles int, a, b, c []float32, ldc int, beta float32) {
	if !gemmWasmAsm || kc <= 0 {
		for t := range tiles {
			gemmKernelSIMD2x16(kc, a[t*2*kc:], b, c[t*2*ldc:], ldc, beta)
		}
		return
	}
	if tiles <= 0 {
		return
	}
	a, b = a[:tiles*2*kc], b[:16*kc]
	c = c[:(2*tiles-1)*ldc+16]
	if beta == 0 {
		beta = 0 // -0 as +0: C is not read
	}
	gemmCol2x16Asm(&a[0], &b[0], &c[0], kc, tiles, ldc, beta)
}

// gemmDotSIMD2x16 stores into c0 and c1 the two rows of the 2×16 tile of sums over the packed
// slivers a [kc][2] and b [kc][16]. Eight accumulators, four B vectors and two
// broadcast A values use 14 of the wasm backend's 16 vector registers (4×16 and 8×8 tiles
// spilled and ran slower). wasm SIMD has no fused multiply-add: Mul then Add. It is the twin of
// the hand-written gemmCol2x16Asm (1.4-1.7x faster in Node, measured interleaved in one
// process), which TestGemmColSIMD2x16 compares with it bit for bit. The loop reslices and
// converts to array pointers so that no bounds check is left inside it, and takes two depth
// steps per turn.
func gemmDotSIMD2x16(c0, c1 *[16]float32, a, b []float32) {
	var c00, c01, c02, c03, c10, c11, c12, c13 simd.Float32s
	for len(a) >= 4 && len(b) >= 32 {
		ap := (*[4]float32)(a)
		bp := (*[32]float32)(b)
		b0 := simd.LoadFloat32s(bp[0:4])
		b1 := simd.LoadFloat32s(bp[4:8])
		b2 := simd.LoadFloat32s(bp[8:12])
		b3 := simd.LoadFloat32s(bp[12:16])
		a0 := simd.BroadcastFloat32s(ap[0])
		a1 := simd.BroadcastFloat32s(ap[1])
		c00 = c00.Add(a0.Mul(b0))
		c01 = c01.Add(a0.Mul(b1))
		c02 = c02.Add(a0.Mul(b2))
		c03 = c03.Add(a0.Mul(b3))
		c10 = c10.Add(a1.Mul(b0))
		c11 = c11.Add(a1.Mul(b1))
		c12 = c12.Add(a1.Mul(b2))
		c13 = c13.Add(a1.Mul(b3))
		b0 = simd.LoadFloat32s(bp[16:20])
		b1 = simd.LoadFloat32s(bp[20:24])
		b2 = simd.LoadFloat32s(bp[24:28])
		b3 = simd.LoadFloat32s(bp[28:32])
		a0 = simd.BroadcastFloat32s(ap[2])
		a1 = simd.BroadcastFloat32s(ap[3])
		c00 = c00.Add(a0.Mul(b0))
		c01 = c01.Add(a0.Mul(b1))
		c02 = c02.Add(a0.Mul(b2))
		c03 = c03.Add(a0.Mul(b3))
		c10 = c10.Add(a1.Mul(b0))
		c11 = c11.Add(a1.Mul(b1))
		c12 = c12.Add(a1.Mul(b2))
		c13 = c13.Add(a1.Mul(b3))
		a = a[4:]
		b = b[32:]
	}
	if len(a) >= 2 && len(b) >= 16 {
		ap := (*[2]float32)(a)
		bp := (*[16]float32)(b)
		b0 := simd.LoadFloat32s(bp[0:4])
		b1 := simd.LoadFloat32s(bp[4:8])
		b2 := simd.LoadFloat32s(bp[8:12])
		b3 := simd.LoadFloat32s(bp[12:16])
		a0 := simd.BroadcastFloat32s(ap[0])
		a1 := simd.BroadcastFloat32s(ap[1])
		c00 = c00.Add(a0.Mul(b0))
		c01 = c01.Add(a0.Mul(b1))
		c02 = c02.Add(a0.Mul(b2))
		c03 = c03.Add(a0.Mul(b3))
		c10 = c10.Add(a1.Mul(b0))
		c11 = c11.Add(a1.Mul(b1))
		c12 = c12.Add(a1.Mul(b2))
		c13 = c13.Add(a1.Mul(b3))
	}
	c00.Store(c0[0:4])
	c01.Store(c0[4:8])
	c02.Store(c0[8:12])
	c03.Store(c0[12:16])
	c10.Store(c1[0:4])
	c11.Store(c1[4:8])
	c12.Store(c1[8:12])
	c13.Store(c1[12:16])
}

// gemmCol2x16Asm is gemmColSIMD2x16 in WebAssembly (gemm_simd_wasm.s), for tiles >= 1 and kc
// >= 1 on slices already checked; beta +0 does not read C.
//
//go:noescape
func gemmCol2x16Asm(a, b, c *float32, kc, tiles, ldc int, beta float32)

// gemmCol2x16StridedAsm is gemmCol2x16Asm with A read where it lies (gemm_simd_wasm.s): depth
// step p of tile t takes its two values at a + t·atile + p·astep and arow bytes further.
//
//go:noescape
func gemmCol2x16StridedAsm(a, b, c *float32, kc, tiles, ldc int, beta float32, arow, astep, atile int)

// gemmColASIMD2x16 is gemmKernel.colA: tiles full 2×16 tiles down one column of C with A read
// where it lies, untransposed (tile t's rows 2t and 2t+1 at a[(2t+i)·lda:]) or transposed
// (depth step p of tile t at a[p·lda+2t:], its two values side by side), bit for bit
// gemmColSIMD2x16 on the packed slivers. Without gemmWasmAsm (its twin in the tests) each
// tile's sliver is packed and the Go kernel runs.
func gemmColASIMD2x16(kc, tiles int, a []float32, lda int, transA bool, b, c []float32, ldc int, beta float32) {
	if tiles <= 0 || kc <= 0 {
		return
	}
	arow, astep, atile := lda, 1, 2*lda // in floats
	if transA {
		arow, astep, atile = 1, lda, 2
	}
	a = a[:(tiles-1)*atile+(kc-1)*astep+arow+1]
	b = b[:16*kc]
	c = c[:(2*tiles-1)*ldc+16]
	if !gemmWasmAsm {
		sl := make([]float32, 2*kc)
		for t := range tiles {
			for p := range kc {
				sl[2*p], sl[2*p+1] = a[t*atile+p*astep], a[t*atile+p*astep+arow]
			}
			gemmKernelSIMD2x16(kc, sl, b, c[t*2*ldc:], ldc, beta)
		}
		return
	}
	if beta == 0 {
		beta = 0 // -0 as +0: C is not read
	}
	gemmCol2x16StridedAsm(&a[0], &b[0], &c[0], kc, tiles, ldc, beta, 4*arow, 4*astep, 4*atile)
}

// gemmPackRows2Asm interleaves two rows of kb >= 1 floats into dst (gemm_simd_wasm.s).
//
//go:noescape
func gemmPackRows2Asm(dst, r0, r1 *float32, kb int)

// packRows2Asm is gemmKernel.packRows2 by gemmPackRows2Asm, with the slices checked first.
func packRows2Asm(dst, r0, r1 []float32) {
	kb := len(r0)
	if kb == 0 {
		return
	}
	r1, dst = r1[:kb], dst[:2*kb]
	gemmPackRows2Asm(&dst[0], &r0[0], &r1[0], kb)
}

// gemmWasmAsm selects gemmCol2x16Asm in gemmKernelSIMD2x16 and gemmColSIMD2x16 (tests compare
// both ways).
var gemmWasmAsm = true

// gemmRow1SIMD2x16 sets c[j] = sum_p a[p*2]*b[p*16+j] for j < 16: row 0 of
// gemmKernelSIMD2x16's tile with beta 0, the same products added in the same order (so the
// same bits), without row 1 (gemmKernel.row1).
func gemmRow1SIMD2x16(kc int, a, b, c []float32) {
	a = a[:2*kc]
	b = b[:16*kc]
	var c00, c01, c02, c03 simd.Float32s
	for len(a) >= 2 && len(b) >= 16 {
		bp := (*[16]float32)(b)
		x := simd.BroadcastFloat32s(a[0])
		c00 = c00.Add(x.Mul(simd.LoadFloat32s(bp[0:4])))
		c01 = c01.Add(x.Mul(simd.LoadFloat32s(bp[4:8])))
		c02 = c02.Add(x.Mul(simd.LoadFloat32s(bp[8:12])))
		c03 = c03.Add(x.Mul(simd.LoadFloat32s(bp[12:16])))
		a = a[2:]
		b = b[16:]
	}
	r := (*[16]float32)(c[:16])
	c00.Store(r[0:4])
	c01.Store(r[4:8])
	c02.Store(r[8:12])
	c03.Store(r[12:16])
}

// packRowsSIMD is gemmPackRowsGo with 128-bit moves for runs of 16 floats (the SIMD kernel's B
// slivers): four v128 loads and stores where gemmPackRowsGo moves sixteen floats one by one.
// Other runs are gemmPackRowsGo's.
func packRowsSIMD(dst, src []float32, ldb, kb, nsl, nr int) {
	if nr != 16 {
		gemmPackRowsGo(dst, src, ldb, kb, nsl, nr)
		return
	}
	full := nsl * 16
	for p := 0; p < kb; p++ {
		r := src[p*ldb:][:full:full]
		for js := 0; js < full; js += 16 {
			o, s := dst[js*kb+p*16:][:16:16], r[js:][:16:16]
			simd.LoadFloat32s(s[0:4]).Store(o[0:4])
			simd.LoadFloat32s(s[4:8]).Store(o[4:8])
			simd.LoadFloat32s(s[8:12]).Store(o[8:12])
			simd.LoadFloat32s(s[12:16]).Store(o[12:16])
		}
	}
}

// gemmSIMD2x16 is the wasm SIMD kernel with its blocking: a B sliver (16×256 floats, 16 KiB)
// and an A sliver stay in L1, the packed A block (128×256) and B panel (256×512) in L2.
var gemmSIMD2x16 = &gemmKernel{name: "simd-2x16", mr: 2, nr: 16, kc: 256, mc: 128, nc: 512, fn: gemmKernelSIMD2x16,
	row1: gemmRow1SIMD2x16, col: gemmColSIMD2x16, packRows2: packRows2Asm, packRows: packRowsSIMD,
	colA: gemmColASIMD2x16}

// gemmKernels lists the micro-kernels this build can run, fastest first: the SIMD kernel, then
// its pure-Go twin.
func gemmKernels() []*gemmKernel {
	return []*gemmKernel{gemmSIMD2x16, gemmGo2x4}
}
