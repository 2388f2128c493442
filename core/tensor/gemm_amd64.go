//go:build amd64 && !purego

package tensor

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The amd64 micro-kernels are in gemm_amd64.s; the driver around them is the same Go code
// as everywhere (gemm.go), and each is tested against gemmKernelGo2x4 and gemmRef.

// gemmKernel8x32AVX512 computes an 8×32 tile: for i < 8, j < 32:
// c[i*ldc+j] = sum_p a[p*8+i]*b[p*32+j] + beta*c[i*ldc+j] (beta 0: c not read).
//
//go:noescape
func gemmKernel8x32AVX512(kc int, a, b, c *float32, ldc int, beta float32)

// gemmKernel6x16AVX2 is gemmKernel8x32AVX512 for a 6×16 tile with AVX2 and FMA.
//
//go:noescape
func gemmKernel6x16AVX2(kc int, a, b, c *float32, ldc int, beta float32)

// gemmRow1x32AVX512 sets c[j] = sum_p a[p*8]*b[p*32+j] for j < 32: row 0 of
// gemmKernel8x32AVX512's tile with beta 0, bit for bit, without the seven other rows.
//
//go:noescape
func gemmRow1x32AVX512(kc int, a, b, c *float32)

// gemmRow1x16AVX2 is gemmRow1x32AVX512 for gemmKernel6x16AVX2: c[j] = sum_p a[p*6]*b[p*16+j].
//
//go:noescape
func gemmRow1x16AVX2(kc int, a, b, c *float32)

// gemmAsmRow1 wraps an assembly one-row kernel with the bounds checks it lacks.
func gemmAsmRow1(mr, nr int, f func(kc int, a, b, c *float32)) func(kc int, a, b, c []float32) {
	return func(kc int, a, b, c []float32) {
		a = a[:mr*kc]
		b = b[:nr*kc]
		c = c[:nr]
		f(kc, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c))
	}
}

// gemmTranspose8AVX2 sets dst[p*ldd+j] = src[j*lds+p] for j < 8, p < n; n is a multiple of 8.
//
//go:noescape
func gemmTranspose8AVX2(dst, src *float32, ldd, lds, n int)

// gemmTranspose8 is gemmTranspose8AVX2 with the bounds checks it lacks; gemmTranspose8Go is
// its twin.
func gemmTranspose8(dst, src []float32, ldd, lds, n int) {
	if n <= 0 {
		return
	}
	if n%8 != 0 {
		panic("tensor: gemmTranspose8: n is not a multiple of 8")
	}
	dst = dst[:(n-1)*ldd+8]
	src = src[:7*lds+n]
	gemmTranspose8AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), ldd, lds, n)
}

// gemmPackRows32AVX sets dst[s*kb*32+p*32 : +32] = src[p*ldb+s*32 : +32] for p < kb, s < nsl.
//
//go:noescape
func gemmPackRows32AVX(dst, src *float32, ldb, kb, nsl int)

// gemmPackRows16AVX is gemmPackRows32AVX for slivers of 16 columns.
//
//go:noescape
func gemmPackRows16AVX(dst, src *float32, ldb, kb, nsl int)

// gemmPackRows8AVX is gemmPackRows32AVX for slivers of 8 columns.
//
//go:noescape
func gemmPackRows8AVX(dst, src *float32, ldb, kb, nsl int)

// gemmPackRowsAVX is gemmPackRowsGo with AVX moves for runs of 8, 16 and 32 (Go's for the
// others), with the bounds checks the assembly lacks. BenchmarkPackBRows, blocks of a matrix
// in memory (2-vCPU EPYC): 8.5-9.2 and 7.5-8.0 GB/s in Go at ldb 256 and 1024, 19.4-20.3 and
// 15.8-17.7 in assembly.
func gemmPackRowsAVX(dst, src []float32, ldb, kb, nsl, nr int) {
	if kb <= 0 || nsl <= 0 {
		return
	}
	dst = dst[:nsl*nr*kb]
	src = src[:(kb-1)*ldb+nsl*nr]
	switch nr {
	case 32:
		gemmPackRows32AVX(unsafe.SliceData(dst), unsafe.SliceData(src), ldb, kb, nsl)
	case 16:
		gemmPackRows16AVX(unsafe.SliceData(dst), unsafe.SliceData(src), ldb, kb, nsl)
	case 8:
		gemmPackRows8AVX(unsafe.SliceData(dst), unsafe.SliceData(src), ldb, kb, nsl)
	default:
		gemmPackRowsGo(dst, src, ldb, kb, nsl, nr)
	}
}

// gemmKernel8x32AVX512A is gemmKernel8x32AVX512 with A read where it lies, untransposed:
// element (i, p) of the tile's A at a[i*lda+p], for i < 8, p < kc. The same products in the
// same order, so the same bits.
//
// With lines > 0 it also asks (PREFETCHT0) for the lines cache lines from ahead on, three a
// turn of sixteen depth steps and the rest after the last step: gemmMacroA's asking for the
// next sliver of a pre-packed B (gemmAhead), spread over the tile's work.
//
//go:noescape
func gemmKernel8x32AVX512A(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32, ahead *float32, lines int)

// gemmKernel6x16AVX2A is gemmKernel8x32AVX512A for gemmKernel6x16AVX2's 6×16 tile.
//
//go:noescape
func gemmKernel6x16AVX2A(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32)

// gemmKernel8x32AVX512AT is gemmKernel8x32AVX512 with A read where it lies, transposed:
// element (i, p) of the tile's A at a[p*lda+i], for i < 8, p < kc (depth step p's eight values
// contiguous, as in a packed sliver). The same products in the same order, so the same bits.
//
//go:noescape
func gemmKernel8x32AVX512AT(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32)

// gemmKernel6x16AVX2AT is gemmKernel8x32AVX512AT for gemmKernel6x16AVX2's 6×16 tile.
//
//go:noescape
func gemmKernel6x16AVX2AT(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32)

// gemmAsmKernelA wraps an assembly kernel that reads A in place, with the bounds checks it
// lacks: A's tile spans mr rows of kc values (untransposed) or kc rows of mr values (transA).
func gemmAsmKernelA(mr, nr int, transA bool, f func(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32)) func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32) {
	return func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32) {
		rows, cols := mr, kc
		if transA {
			rows, cols = kc, mr
		}
		a = a[:(rows-1)*lda+cols]
		b = b[:nr*kc]
		c = c[:(mr-1)*ldc+nr]
		f(kc, unsafe.SliceData(a), lda, unsafe.SliceData(b), unsafe.SliceData(c), ldc, beta)
	}
}

// gemmAsmKernelAAhead wraps an assembly kernel that reads A in place (untransposed) and asks
// for the cache lines of ahead as it goes (see gemmKernel8x32AVX512A): as gemmKernel's fnAAhead,
// and as its fnA asking for nothing (ahead nil).
func gemmAsmKernelAAhead(mr, nr int, f func(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32, ahead *float32, lines int)) (fnA func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32), fnAAhead func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32, ahead []float32)) {
	fnAAhead = func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32, ahead []float32) {
		a = a[:(mr-1)*lda+kc]
		b = b[:nr*kc]
		c = c[:(mr-1)*ldc+nr]
		f(kc, unsafe.SliceData(a), lda, unsafe.SliceData(b), unsafe.SliceData(c), ldc, beta, unsafe.SliceData(ahead), (len(ahead)+15)/16)
	}
	fnA = func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32) {
		fnAAhead(kc, a, lda, b, c, ldc, beta, nil)
	}
	return fnA, fnAAhead
}

// gemmPrefetchLines asks for the lines cache lines from p on (PREFETCHT0).
//
//go:noescape
func gemmPrefetchLines(p *float32, lines int)

// gemmPrefetch asks for the cache lines of p (a pre-packed B's next sliver, read from memory
// next); it only hints, nothing waits on it. PREFETCHT0 measured a little faster than T1 on
// BERT-Base's forward (100-101 against 102-104 ms).
func gemmPrefetch(p []float32) {
	if len(p) > 0 {
		gemmPrefetchLines(unsafe.SliceData(p), (len(p)+15)/16)
	}
}

// gemmAsmKernel wraps an assembly kernel: the slicing checks that the packed slivers and the
// C tile are in bounds, which the assembly does not.
func gemmAsmKernel(mr, nr int, f func(kc int, a, b, c *float32, ldc int, beta float32)) func(kc int, a, b, c []float32, ldc int, beta float32) {
	return func(kc int, a, b, c []float32, ldc int, beta float32) {
		a = a[:mr*kc]
		b = b[:nr*kc]
		c = c[:(mr-1)*ldc+nr]
		f(kc, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, beta)
	}
}

var (
	// The AVX-512 kernel reading A in place, asking for nothing and asking ahead.
	gemmAVX512A, gemmAVX512AAhead = gemmAsmKernelAAhead(8, 32, gemmKernel8x32AVX512A)

	// Blocking for Zen 5 (48 KiB L1d, 1 MiB L2): the B sliver (32×256 floats, 32 KiB for
	// AVX-512) and an A sliver fit L1, the packed A block (mc×256) and B panel (256×512,
	// 512 KiB) fit L2. nc 512 rather than 2048 measured 20% faster on 128x768x3072 (AVX2).
	gemmAVX512 = &gemmKernel{name: "avx512-8x32", mr: 8, nr: 32, kc: 256, mc: 128, nc: 512,
		fn: gemmAsmKernel(8, 32, gemmKernel8x32AVX512), trans8: gemmTranspose8,
		row1: gemmAsmRow1(8, 32, gemmRow1x32AVX512), packRows: gemmPackRowsAVX,
		fnA: gemmAVX512A, fnAT: gemmAsmKernelA(8, 32, true, gemmKernel8x32AVX512AT),
		fnAAhead: gemmAVX512AAhead,
		prefetch: gemmPrefetch}
	gemmAVX2 = &gemmKernel{name: "avx2-6x16", mr: 6, nr: 16, kc: 256, mc: 144, nc: 512,
		fn: gemmAsmKernel(6, 16, gemmKernel6x16AVX2), trans8: gemmTranspose8,
		row1: gemmAsmRow1(6, 16, gemmRow1x16AVX2), packRows: gemmPackRowsAVX,
		fnA: gemmAsmKernelA(6, 16, false, gemmKernel6x16AVX2A), fnAT: gemmAsmKernelA(6, 16, true, gemmKernel6x16AVX2AT),
		prefetch: gemmPrefetch}
)

// gemmKernels lists the micro-kernels this CPU can run, fastest first; the pure-Go kernel is
// always last.
func gemmKernels() []*gemmKernel {
	var ks []*gemmKernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX2 { // AVX2: the packing transpose
		ks = append(ks, gemmAVX512)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, gemmAVX2)
	}
	return append(ks, gemmGo2x4)
}
