package tensor

import (
	"fmt"
	"runtime"
)

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, as BLAS sgemm does:
// op(A) is [m, k] (A stored [m, k] with row stride lda, or [k, m] when transA), op(B) is
// [k, n] (B stored [k, n] with row stride ldb, or [n, k] when transB), C is [m, n] with
// row stride ldc. beta 0 overwrites C without reading it (NaNs in C do not survive).
// Elements of C outside the [m, n] window (between rows, when ldc > n) are not touched.
//
// Reference loop:
//
//	for i < m, j < n: C[i*ldc+j] = alpha*sum_p opA(i,p)*opB(p,j) + beta*C[i*ldc+j]
//
// The work is done by a packed, cache-blocked driver around a register-tiled micro-kernel:
// AVX-512 or AVX2+FMA assembly on amd64 when the CPU has it, pure Go elsewhere (and in the
// browser); large products are split over up to GOMAXPROCS goroutines natively.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmWith(gemmDefault, gemmThreads(m, n, k), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmRef is the plain triple loop that every other GEMM path is tested against.
func gemmRef(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}

// MatMul computes C[m, n] = A[m, k] · B[k, n] (dense, contiguous).
func MatMul(c, a, b []float32, m, k, n int) {
	Gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
}

// MatMulTransB computes C[m, n] = A[m, k] · B[n, k]ᵀ: a linear layer with a PyTorch weight [out, in].
func MatMulTransB(c, a, b []float32, m, k, n int) {
	Gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n)
}

// MatMulTransA computes C[m, n] = A[k, m]ᵀ · B[k, n]: weight gradients in backward.
func MatMulTransA(c, a, b []float32, m, k, n int) {
	Gemm(true, false, m, n, k, 1, a, m, b, n, 0, c, n)
}

// Linear computes y[m, out] = x[m, in] · w[out, in]ᵀ + bias[out] (bias may be nil), as torch.nn.Linear.
//
// The bias is added in the product's output pass: each goroutine adds it to its own strip of y
// just after computing it (MatMulTransB then AddBias, bit for bit, in one fork-join).
func Linear(y, x, w, bias []float32, m, in, out int) {
	var ep epilogue
	if bias != nil {
		ep.bias = bias[:out]
	}
	gemmWithEp(gemmDefault, gemmThreads(m, out, in), false, true, m, out, in, 1, x, in, w, in, 0, y, out, ep)
}

// gemmKernel is one micro-kernel with the blocking that suits it. fn computes the full
// mr×nr tile C = A·B + beta·C from a packed A sliver (kc steps of mr values, zero padded)
// and a packed B sliver (kc steps of nr values, zero padded); beta 0 must not read C.
// c holds at least (mr-1)*ldc+nr elements.
type gemmKernel struct {
	name   string
	mr, nr int
	// kc: depth of one packed block (A and B slivers of kc steps stay in L1);
	// mc: rows of A packed at once (mc×kc stays in L2), a multiple of mr;
	// nc: columns of B packed at once (kc×nc stays in L2), a multiple of nr.
	kc, mc, nc int
	fn         func(kc int, a, b, c []float32, ldc int, beta float32)
	// trans8, when not nil, is a fast gemmTranspose8Go for packing (the kernel's machine has it).
	trans8 func(dst, src []float32, ldd, lds, n int)
	// row1, when not nil, computes row 0 of fn's tile with beta 0 into c[:nr], bit for bit,
	// without the other rows: gemmMacro uses it for a tile with one row of A (a single masked
	// word through the MLM decoder spent most of its time on rows of padding).
	row1 func(kc int, a, b, c []float32)
	// col, when not nil, computes tiles full tiles down one column of C with fn's bits: tile t
	// from the A sliver a[t·mr·kc:] and b into c[t·mr·ldc:] (one call where a call per tile
	// costs, as in wasm).
	col func(kc, tiles int, a, b, c []float32, ldc int, beta float32)
	// packRows2, when not nil, sets dst[2p] = r0[p] and dst[2p+1] = r1[p] for p < len(r0)
	// (len(r1) == len(r0), len(dst) == 2·len(r0)): gemmPackA's loop for a sliver of two rows
	// with alpha 1, where the kernel's build has a faster one (wasm SIMD: gemmPackRows2Asm).
	packRows2 func(dst, r0, r1 []float32)
	// fnA, when not nil, is fn with A read where it lies instead of from a packed sliver: A
	// untransposed, row i of the tile at a[i*lda:] (kc values), the same bits as fn. gemmSerial
	// then does not pack A (alpha 1) for the tiles with all mr rows.
	fnA func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32)
	// fnAAhead, where the kernel has it, is fnA (untransposed) that also asks for the cache
	// lines of ahead while it works, spread over its depth steps, where prefetch(ahead) before
	// fnA asks for them all at once, a call and 32 PREFETCHT0 in a row before each tile
	// (BenchmarkGemmPackedFromMemory's far/ahead rows 234-246 -> 240-252 GFLOP/s; the
	// BERT-Base/128 forward on one thread, six alternating runs, median 98.4 -> 95.2 ms).
	fnAAhead func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32, ahead []float32)
	// fnAT, when not nil, is fn with a transposed A read where it lies: depth step p of the
	// tile's A at a[p*lda:] (mr values), the same bits as fn. gemmSerial then does not pack a
	// transposed A (alpha 1) for the tiles with all mr rows.
	fnAT func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32)
	// colA, when not nil, computes tiles full tiles down one column of C with A read where it
	// lies (untransposed: tile t's row i at a[(t·mr+i)·lda:]; transposed: depth step p of tile
	// t at a[p·lda+t·mr:]), fn's bits, in one call (col's counterpart, for wasm). gemmSerial
	// then does not pack A (alpha 1) for the tiles with all mr rows.
	colA func(kc, tiles int, a []float32, lda int, transA bool, b, c []float32, ldc int, beta float32)
	// packRows, when not nil, is a fast gemmPackRowsGo (the full slivers of an untransposed
	// B and of a transposed A) where the kernel's machine has one.
	packRows func(dst, src []float32, ldb, kb, nsl, nr int)
	// prefetch, when not nil, asks for the cache lines of its slice without waiting for
	// them: the macro loops ask for a large pre-packed B's next sliver while the tiles of the
	// current one run (PackedB.SetStreamed), tile by tile (a kernel with col or colA would
	// leave its shares unasked).
	prefetch func(p []float32)
}

// gemmTranspose8Go sets dst[p*ldd+j] = src[j*lds+p] for j < 8, p < n: eight rows of src
// become eight columns of dst.
func gemmTranspose8Go(dst, src []float32, ldd, lds, n int) {
	for j := 0; j < 8; j++ {
		row := src[j*lds:][:n]
		for p, v := range row {
			dst[p*ldd+j] = v
		}
	}
}

// Kernels names the kernels this build runs on this CPU: the GEMM micro-kernel (such as
// "avx512-8x32") and the element-wise and row kernels' instruction set (avx512, avx2,
// wasm-simd or go), for benchmark reports.
func Kernels() string {
	return "gemm " + gemmDefault.name + ", element-wise " + opsName()
}

// gemmDefault is the kernel Gemm uses: the fastest one this CPU runs (see gemmKernels).
// Tests call gemmWith with each kernel instead of changing it.
var gemmDefault = gemmKernels()[0]

// gemmParallelMin is the smallest m·n·k that Gemm splits over goroutines. Starting a worker
// and waiting for it measured 8 µs median, 21 µs at the 90th percentile (2-core VM); at
// 1<<23 multiply-adds one goroutine takes about 250 µs (AVX2), so the split gains when a
// second core is free and costs under 10% when it is not. BERT-Base's 128-token linear
// layers (75M) are split; attention heads (1M) and BERT-Tiny's layers are not.
const gemmParallelMin = 1 << 23

// gemmThreads is the number of goroutines Gemm uses for an m×n×k product.
func gemmThreads(m, n, k int) int {
	if runtime.GOARCH == "wasm" {
		// js/wasm has one thread: goroutines would only take turns.
		return 1
	}
	if m*n*k < gemmParallelMin {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// gemmBuf holds one goroutine's packing buffers; gemmBufs keeps them between calls.
type gemmBuf struct {
	a, b []float32
	tile []float32
}

// gemmBufs keeps as many packing buffers as goroutines ever packed at once, up to two per
// processor (under 700 KB each with the blockings of gemmKernels). A free list, not a
// sync.Pool: the buffers survive garbage collections, and a goroutine that moved to another
// processor finds one.
var gemmBufs = FreeList[gemmBuf]{
	New:     func() *gemmBuf { return new(gemmBuf) },
	MaxIdle: func() int { return 2 * runtime.GOMAXPROCS(0) },
}

// grow returns s with length n, reusing its storage when it is large enough.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// gemmCheck panics with a clear message when a slice cannot hold the matrix it stands for:
// the assembly kernels must never see a short slice.
func gemmCheck(name string, s []float32, rows, cols, ld int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("tensor.Gemm: %s: negative size %dx%d", name, rows, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols {
		panic(fmt.Sprintf("tensor.Gemm: %s: stride %d < %d columns", name, ld, cols))
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		panic(fmt.Sprintf("tensor.Gemm: %s: len %d < %d for %dx%d with stride %d", name, len(s), need, rows, cols, ld))
	}
}

// gemmWith is Gemm with a given kernel and number of goroutines.
func gemmWith(kern *gemmKernel, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmWithEp(kern, threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue{})
}

// gemmWithEp is gemmWith with ep run on each strip of C after it is computed.
func gemmWithEp(kern *gemmKernel, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, ep epilogue) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("tensor.Gemm: negative size m=%d n=%d k=%d", m, n, k))
	}
	gemmCheck("C", c, m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		gemmScale(m, n, beta, c, ldc)
		ep.apply(c, ldc, m, 0, n)
		return
	}
	if transA {
		gemmCheck("A", a, k, m, lda)
	} else {
		gemmCheck("A", a, m, k, lda)
	}
	if transB {
		gemmCheck("B", b, n, k, ldb)
	} else {
		gemmCheck("B", b, k, n, ldb)
	}
	if threads < 2 {
		gemmSerial(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, nil, 0, beta, c, ldc, ep)
		return
	}
	// Split the longer side of C into one strip per goroutine, in whole tiles; each strip is an
	// independent GEMM with its own packing buffers. The calling goroutine takes the last one.
	j := gemmJobs.Get()
	*j = gemmJob{kern: kern, transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha,
		a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, splitN: n >= m, ep: ep, strip: j.strip}
	size, unit := m, kern.mr
	if j.splitN {
		size, unit = n, kern.nr
	}
	parallelChunks(size, ceilDiv(ceilDiv(size, threads), unit)*unit, j.strip)
	*j = gemmJob{strip: j.strip} // keep no operand alive
	gemmJobs.Put(j)
}

// gemmJob is one multi-goroutine gemmWith call, split into strips of C's rows (or columns,
// when splitN) that parallelChunks hands to its goroutines.
type gemmJob struct {
	kern           *gemmKernel
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	pb             *PackedB // B packed once (GemmPackedB), in place of b
	ep             epilogue // run on each block of C once it is computed
	splitN         bool
	// strip is the method value j.runStrip, bound once: passing it allocates nothing.
	strip func(s0, s1 int)
}

// gemmJobs keeps gemmJobs between calls.
var gemmJobs = FreeList[gemmJob]{New: func() *gemmJob {
	j := new(gemmJob)
	j.strip = j.runStrip
	return j
}}

// runStrip computes the strip [s0, s1) of C's rows, or of its columns when j.splitN.
func (j *gemmJob) runStrip(s0, s1 int) {
	sb := s1 - s0
	if j.pb != nil {
		if j.splitN {
			gemmSerial(j.kern, false, true, j.m, sb, j.k, j.alpha, j.a, j.lda, nil, 0, j.pb, s0, j.beta, j.c[s0:], j.ldc, j.ep.cols(s0))
		} else {
			gemmSerial(j.kern, false, true, sb, j.n, j.k, j.alpha, j.a[s0*j.lda:], j.lda, nil, 0, j.pb, 0, j.beta, j.c[s0*j.ldc:], j.ldc, j.ep)
		}
		return
	}
	if j.splitN {
		bs := j.b[s0:]
		if j.transB {
			bs = j.b[s0*j.ldb:]
		}
		gemmSerial(j.kern, j.transA, j.transB, j.m, sb, j.k, j.alpha, j.a, j.lda, bs, j.ldb, nil, 0, j.beta, j.c[s0:], j.ldc, j.ep.cols(s0))
		return
	}
	as := j.a[s0:]
	if !j.transA {
		as = j.a[s0*j.lda:]
	}
	gemmSerial(j.kern, j.transA, j.transB, sb, j.n, j.k, j.alpha, as, j.lda, j.b, j.ldb, nil, 0, j.beta, j.c[s0*j.ldc:], j.ldc, j.ep)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// gemmScale sets C = beta·C on the [m, n] window (C = 0 when beta is 0, NaNs included).
func gemmScale(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// gemmSerial runs the blocked algorithm (BLIS loop order jc, pc, ic, jr, ir) on one goroutine.
// Sizes are positive and the slices already checked. With pb (GemmPackedB), B is not packed
// here: C's columns [0, n) are pb's columns [col0, col0+n) (col0 a multiple of nr).
//
// ep runs on each mc×nc block of C as soon as its last depth block is done, while the block
// is in cache (run on the whole of C afterwards, a bias and an activation read and wrote a
// 4 MiB product again from memory: 2% of a Mini training step). It sees the same sums, so
// the bits are those of ep on the finished C.
func gemmSerial(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, pb *PackedB, col0 int, beta float32, c []float32, ldc int, ep epilogue) {
	buf := gemmBufs.Get()
	defer gemmBufs.Put(buf)
	mr, nr := kern.mr, kern.nr
	kcMax := min(kern.kc, k)
	mcMax := min(kern.mc, ceilDiv(m, mr)*mr)
	buf.a = grow(buf.a, mcMax*kcMax)
	if pb == nil {
		buf.b = grow(buf.b, min(kern.nc, ceilDiv(n, nr)*nr)*kcMax)
	}
	buf.tile = grow(buf.tile, mr*nr)
	// Whether A is read where it lies (alpha 1, the kernel able to). Transposed, depth steps
	// 4 KiB apart (or a multiple) share their cache sets: the tile's kc lines of A then thrash
	// L1 and L2 between its reuses (dYᵀ·X of a 1,024- or 3,072-wide layer measured 4-10% slower
	// read in place than packed).
	inPlace := alpha == 1 && (kern.fnA != nil || kern.colA != nil)
	if transA {
		inPlace = alpha == 1 && (kern.fnAT != nil || kern.colA != nil) && lda%1024 != 0
	}
	for jc := 0; jc < n; jc += kern.nc {
		nb := min(kern.nc, n-jc)
		for blk, pc := 0, 0; pc < k; blk, pc = blk+1, pc+kern.kc {
			kb := min(kern.kc, k-pc)
			pbs := buf.b
			if pb != nil {
				pbs = pb.data[pb.off[blk]+(col0+jc)*kb:]
			} else {
				gemmPackB(kern, buf.b, transB, b, ldb, pc, jc, kb, nb, nr)
			}
			bet := beta
			if pc > 0 {
				bet = 1 // later depth blocks add to what the first one stored
			}
			last := pc+kb == k
			// A pre-packed B comes from memory on the first row block (the later ones find
			// it in L2): ask for each next sliver while the current one's tiles run, and at
			// the panel's end for the first sliver of the panel that comes next.
			// Only with aheadTiles tiles or more down each sliver (the calls below).
			ahead := pb != nil && pb.ahead && kern.prefetch != nil
			var after []float32
			if ahead {
				after = gemmNextPanel(kern, pb, col0, n, k, jc, pc)
			}
			for ic := 0; ic < m; ic += kern.mc {
				mb := min(kern.mc, m-ic)
				aoff := ic*lda + pc
				if transA {
					aoff = pc*lda + ic
				}
				if inPlace {
					// A read where it lies: only a last group of fewer than mr rows is packed
					// (its sliver padded with zeros).
					full := mb / mr * mr
					if full > 0 {
						gemmMacroA(kern, transA, kb, full, nb, a[aoff:], lda, pbs, buf.tile, c[ic*ldc+jc:], ldc, bet, ahead && full >= aheadTiles*mr, after)
					}
					if full < mb {
						gemmPackA(kern, buf.a, transA, a, lda, ic+full, pc, mb-full, kb, alpha)
						gemmMacro(kern, kb, mb-full, nb, buf.a, pbs, buf.tile, c[(ic+full)*ldc+jc:], ldc, bet, false, after)
					}
				} else {
					gemmPackA(kern, buf.a, transA, a, lda, ic, pc, mb, kb, alpha)
					gemmMacro(kern, kb, mb, nb, buf.a, pbs, buf.tile, c[ic*ldc+jc:], ldc, bet, ahead && mb >= aheadTiles*mr, after)
				}
				ahead = false
				if last {
					ep.apply(c[ic*ldc:], ldc, mb, jc, jc+nb)
				}
			}
		}
	}
}

// gemmMacro multiplies a packed mb×kb block of A by a packed kb×nb panel of B into C, one
// mr×nr tile at a time. Edge tiles are computed into tile and copied out, so the kernel only
// ever sees full tiles and nothing outside the [mb, nb] window of C is written.
//
// With ahead (kern.prefetch not nil), each tile's call first asks for its share of the next
// sliver of B (gemmAhead): pb's next, or after (which may be nil) past pb's last.
func gemmMacro(kern *gemmKernel, kb, mb, nb int, pa, pb, tile, c []float32, ldc int, beta float32, ahead bool, after []float32) {
	mr, nr := kern.mr, kern.nr
	fn := kern.fn
	tiles := ceilDiv(mb, mr)
	for j := 0; j < nb; j += nr {
		bs := pb[j*kb : (j+nr)*kb]
		nrr := min(nr, nb-j)
		i := 0
		if kern.col != nil && nrr == nr && mb >= mr {
			i = mb / mr * mr
			kern.col(kb, mb/mr, pa, bs, c[j:], ldc, beta)
		}
		for ; i < mb; i += mr {
			if ahead {
				if p := gemmAhead(pb, after, j, nr, kb, nb, i/mr, tiles); len(p) > 0 {
					kern.prefetch(p)
				}
			}
			as := pa[i*kb : (i+mr)*kb]
			mrr := min(mr, mb-i)
			if mrr == mr && nrr == nr {
				fn(kb, as, bs, c[i*ldc+j:], ldc, beta)
				continue
			}
			if mrr == 1 && kern.row1 != nil {
				if nrr == nr && beta == 0 {
					kern.row1(kb, as, bs, c[i*ldc+j:]) // straight into C: no copy
					continue
				}
				kern.row1(kb, as, bs, tile)
			} else {
				fn(kb, as, bs, tile, nr, 0)
			}
			tileOut(c[i*ldc+j:], ldc, tile, nr, mrr, nrr, beta)
		}
	}
}

// tileOut stores the top-left mrr×nrr of an edge tile computed into tile (row stride nr, beta
// 0) into C: C = tile + beta·C.
func tileOut(c []float32, ldc int, tile []float32, nr, mrr, nrr int, beta float32) {
	for ii := 0; ii < mrr; ii++ {
		dst := c[ii*ldc:][:nrr]
		src := tile[ii*nr:][:nrr]
		if beta == 0 {
			copy(dst, src)
			continue
		}
		for jj, v := range src {
			dst[jj] = v + beta*dst[jj]
		}
	}
}

// aheadTiles is the fewest tiles down a sliver with which gemmSerial asks for a pre-packed
// B's next sliver ahead (PackedB.SetStreamed): with one or two, each call asked for the
// whole next sliver at once, and those bursts slowed the few rows of the MLM decoder (1 and
// 3 rows over Mini's and Base's [30522, H] from memory) by 25-100%; 32 rows gained 15%.
const aheadTiles = 4

// gemmAhead is the share of tile t (of tiles down sliver j's column) of the sliver of B that
// comes after sliver j: pb[(j+nr)*kb : (j+2*nr)*kb] in the packed panel pb, or after past
// the panel's last sliver. The shares are runs of whole cache lines, so that the column's
// tiles ask for all of the sliver between them; a share past its end is empty.
func gemmAhead(pb, after []float32, j, nr, kb, nb, t, tiles int) []float32 {
	next := after
	if j+nr < nb {
		next = pb[(j+nr)*kb : (j+2*nr)*kb]
	}
	share := ceilDiv(ceilDiv(len(next), tiles), 16) * 16
	lo := min(t*share, len(next))
	return next[lo:min(lo+share, len(next))]
}

// gemmNextPanel is the first sliver of the panel of the pre-packed pb that gemmSerial reads
// after the one of its columns [jc, jc+nc) and depth block [pc, pc+kc) (with its columns
// [0, n) at pb's [col0, col0+n) and depth k): the next depth block's, else the next column
// block's first; nil after the last.
func gemmNextPanel(kern *gemmKernel, pb *PackedB, col0, n, k, jc, pc int) []float32 {
	blk, col := pc/kern.kc+1, col0+jc
	if pc+kern.kc >= k {
		if jc+kern.nc >= n {
			return nil
		}
		blk, col = 0, col+kern.nc
	}
	kb := min(kern.kc, k-blk*kern.kc)
	lo := pb.off[blk] + col*kb
	return pb.data[lo : lo+kern.nr*kb]
}

// gemmMacroA is gemmMacro with A's mb×kb block read where it lies (element (i, p) at
// a[i*lda+p], or a[p*lda+i] when transA; mb a multiple of mr) instead of from a packed block:
// by kern.colA a column of tiles at a time where the kernel has it, else tile by tile by
// kern.fnA (kern.fnAT when transA).
//
// ahead and after are gemmMacro's (tile by tile only).
func gemmMacroA(kern *gemmKernel, transA bool, kb, mb, nb int, a []float32, lda int, pb, tile, c []float32, ldc int, beta float32, ahead bool, after []float32) {
	mr, nr := kern.mr, kern.nr
	rowStep := lda // from one tile's A to the next one's
	if transA {
		rowStep = 1
	}
	if kern.colA != nil {
		for j := 0; j < nb; j += nr {
			bs := pb[j*kb : (j+nr)*kb]
			if nb-j >= nr {
				kern.colA(kb, mb/mr, a, lda, transA, bs, c[j:], ldc, beta)
				continue
			}
			for i := 0; i < mb; i += mr {
				kern.colA(kb, 1, a[i*rowStep:], lda, transA, bs, tile, nr, 0)
				tileOut(c[i*ldc+j:], ldc, tile, nr, mr, nb-j, beta)
			}
		}
		return
	}
	fnA, fnAAhead := kern.fnA, kern.fnAAhead
	if transA {
		fnA, fnAAhead = kern.fnAT, nil
	}
	tiles := mb / mr
	for j := 0; j < nb; j += nr {
		bs := pb[j*kb : (j+nr)*kb]
		nrr := min(nr, nb-j)
		for i := 0; i < mb; i += mr {
			var p []float32 // the share of the next sliver this tile asks for
			if ahead {
				p = gemmAhead(pb, after, j, nr, kb, nb, i/mr, tiles)
			}
			as := a[i*rowStep:]
			if len(p) > 0 && nrr == nr && fnAAhead != nil {
				fnAAhead(kb, as, lda, bs, c[i*ldc+j:], ldc, beta, p)
				continue
			}
			if len(p) > 0 {
				kern.prefetch(p)
			}
			if nrr == nr {
				fnA(kb, as, lda, bs, c[i*ldc+j:], ldc, beta)
				continue
			}
			fnA(kb, as, lda, bs, tile, nr, 0)
			tileOut(c[i*ldc+j:], ldc, tile, nr, mr, nrr, beta)
		}
	}
}

// gemmPackA packs alpha·op(A)[i0:i0+mb, p0:p0+kb] into slivers of mr = kern.mr rows (with
// kern's trans8 and packRows2 where it has them): sliver s holds element (i, p) at
// s*mr*kb + p*mr + i; rows past mb are zero.
func gemmPackA(kern *gemmKernel, dst []float32, transA bool, a []float32, lda, i0, p0, mb, kb int, alpha float32) {
	trans8, mr := kern.trans8, kern.mr
	if transA && alpha == 1 && (mr == 8 || mr == 6 || mr == 2) && mb >= mr {
		// op(A)(i, p) = a[p*lda+i]: depth step p is a contiguous run of the block's rows. Step
		// by step, each run is read once from start to end and dealt out to the full slivers.
		// The sliver-by-sliver order below read each cache line of A once per sliver it feeds,
		// in kb streams lda apart: packing was 55% of the tied decoder's dYᵀ·X in a Tiny
		// training step, and this order took that GEMM from 12.6 to 9.9 ms (AVX-512) and from
		// 131 to 106 ms (wasm SIMD), medians of alternating calls. The partial sliver, if
		// any, is packed below.
		full := mb / mr * mr
		rows := kern.packRows
		if rows == nil {
			rows = gemmPackRowsGo
		}
		rows(dst, a[p0*lda+i0:], lda, kb, full/mr, mr)
		if full == mb {
			return
		}
		gemmPackA(kern, dst[full*kb:], transA, a, lda, i0+full, p0, mb-full, kb, alpha)
		return
	}
	for is := 0; is < mb; is += mr {
		d := dst[is*kb : (is+mr)*kb]
		rows := min(mr, mb-is)
		if transA {
			// op(A)(i, p) = a[p*lda+i]: each depth step is a contiguous run of rows. Full
			// slivers of the assembly kernels' heights move as fixed-size arrays of at most
			// 16 bytes (vector moves, no bounds checks per element): the loop below cost 5%
			// of a pre-training step, in the weight gradients' dYᵀ·X. A larger array would
			// be a call of runtime.memmove per step (the compiler cannot rule out that the
			// two overlap), which cost as much again.
			if rows == mr && alpha == 1 {
				switch mr {
				case 8:
					for p := 0; p < kb; p++ {
						o, r := d[p*8:][:8:8], a[(p0+p)*lda+i0+is:][:8:8]
						*(*[4]float32)(o) = *(*[4]float32)(r)
						*(*[4]float32)(o[4:]) = *(*[4]float32)(r[4:])
					}
					continue
				case 6:
					for p := 0; p < kb; p++ {
						o, r := d[p*6:][:6:6], a[(p0+p)*lda+i0+is:][:6:6]
						*(*[4]float32)(o) = *(*[4]float32)(r)
						*(*[2]float32)(o[4:]) = *(*[2]float32)(r[4:])
					}
					continue
				case 2:
					// The wasm and pure-Go kernels' height, element by element (wasm moves
					// even a small array with a call of runtime.memmove): the loop below
					// took 13% of a wasm SIMD training step.
					off := p0*lda + i0 + is
					for p := 0; p < kb; p++ {
						o, r := (*[2]float32)(d[2*p:]), (*[2]float32)(a[off:])
						o[0], o[1] = r[0], r[1]
						off += lda
					}
					continue
				}
			}
			for p := 0; p < kb; p++ {
				src := a[(p0+p)*lda+i0+is:][:rows]
				dp := d[p*mr : p*mr+mr]
				for i, v := range src {
					dp[i] = alpha * v
				}
				clear(dp[rows:])
			}
			continue
		}
		// op(A)(i, p) = a[i*lda+p]: rows are contiguous, the sliver interleaves them. Two rows
		// at a time halve the passes over the sliver (it measured 2x faster in wasm).
		i := 0
		// With alpha, a full sliver is moved the same way and then scaled as a whole (the same
		// product alpha·v for each element): the scaled Q of attention's Q·Kᵀ took 4 of the 14
		// µs of a BERT-Base head's product, two rows at a time below.
		if trans8 != nil && mr%8 == 0 && (alpha == 1 || rows == mr) {
			n8 := kb &^ 7
			for ; i+8 <= rows; i += 8 {
				trans8(d[i:], a[(i0+is+i)*lda+p0:], mr, lda, n8)
				for ii := i; ii < i+8; ii++ {
					for p := n8; p < kb; p++ {
						d[p*mr+ii] = a[(i0+is+ii)*lda+p0+p]
					}
				}
			}
			if alpha != 1 {
				scale(d[:mr*kb], alpha)
			}
		}
		for ; i+2 <= rows; i += 2 {
			r0 := a[(i0+is+i)*lda+p0:][:kb]
			r1 := a[(i0+is+i+1)*lda+p0:][:kb]
			if kern.packRows2 != nil && mr == 2 && alpha == 1 {
				kern.packRows2(d[:2*kb], r0, r1)
				continue
			}
			for p := range r0 {
				dp := (*[2]float32)(d[p*mr+i:])
				dp[0], dp[1] = alpha*r0[p], alpha*r1[p]
			}
		}
		for ; i < rows; i++ {
			src := a[(i0+is+i)*lda+p0:][:kb]
			for p, v := range src {
				d[p*mr+i] = alpha * v
			}
		}
		if rows < mr {
			for p := 0; p < kb; p++ {
				clear(d[p*mr+rows : p*mr+mr])
			}
		}
	}
}

// gemmPackBRows is gemmPackB for an untransposed B, where op(B)(p, j) = b[p*ldb+j]: each
// depth step of a sliver is a contiguous run of nr columns of one row. Runs of the kernels'
// widths (4, 16, 32) move element by element with fixed bounds: a copy() per run is a memmove
// call, which cost more than the move (packing measured 1.6-1.9x slower that way).
func gemmPackBRows(rows func(dst, src []float32, ldb, kb, nsl, nr int), dst, b []float32, ldb, p0, j0, kb, nb, nr int) {
	if (nr == 32 || nr == 16) && nb >= nr {
		full := nb / nr * nr
		if rows == nil {
			rows = gemmPackRowsGo
		}
		rows(dst, b[p0*ldb+j0:], ldb, kb, full/nr, nr)
		if full < nb { // the last, partial sliver
			gemmPackBRows(rows, dst[full*kb:], b, ldb, p0, j0+full, kb, nb-full, nr)
		}
		return
	}
	for js := 0; js < nb; js += nr {
		d := dst[js*kb : (js+nr)*kb]
		src := b[p0*ldb+j0+js:]
		cols := min(nr, nb-js)
		switch {
		case cols == 4 && nr == 4:
			for p := 0; p < kb; p++ {
				o, r := d[p*4:][:4:4], src[p*ldb:][:4:4]
				o[0], o[1], o[2], o[3] = r[0], r[1], r[2], r[3]
			}
		default:
			for p := 0; p < kb; p++ {
				o := d[p*nr : p*nr+nr]
				copy(o, src[p*ldb:][:cols])
				clear(o[cols:])
			}
		}
	}
}

// gemmPackRowsGo sets dst[s*kb*nr+p*nr : +nr] = src[p*ldb+s*nr : +nr] for p < kb, s < nsl,
// nr 2, 6, 8, 16 or 32: the full slivers of an untransposed B (gemmPackBRows) and of a
// transposed A (gemmPackA), where each depth step of a sliver is a contiguous run of a row.
// Depth step by depth step: each row of the block is read once from start to end and dealt
// out to the slivers, so that the source streams from memory in order. Sliver by sliver read
// a piece of nr floats of each of kb rows a sliver: kb streams a row apart that the
// prefetchers do not follow (BenchmarkPackBRows, blocks of a matrix in memory: natively
// 2.7-3.9 GB/s at ldb 256 and 6.8-7.5 at ldb 1024 that way, 11.9-12.6 and 8.2-9.1 this way; in
// wasm about the same both ways, 2.3-3.7 and 3.1-3.8; for A, packing was 55% of the tied
// decoder's dYᵀ·X in a Tiny training step, and this order took that GEMM from 12.6 to 9.9 ms
// with AVX-512 and from 131 to 106 ms in wasm SIMD). Runs move as fixed-size arrays: a copy()
// per run is a call of runtime.memmove, which cost more than the move (1.6-1.9x slower).
// Runs of 16 and 32 go element by element: copies of [4]float32 were as fast natively and
// half as fast in wasm; runs of 2 too, as wasm moves even a small array with memmove.
func gemmPackRowsGo(dst, src []float32, ldb, kb, nsl, nr int) {
	full := nsl * nr
	for p := 0; p < kb; p++ {
		r := src[p*ldb:][:full:full]
		switch nr {
		case 32, 16:
			for js := 0; js < full; js += nr {
				o, s := dst[js*kb+p*nr:][:16:16], r[js:][:16:16]
				o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
				o[8], o[9], o[10], o[11], o[12], o[13], o[14], o[15] = s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]
				if nr == 32 {
					o, s := dst[js*kb+p*nr+16:][:16:16], r[js+16:][:16:16]
					o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
					o[8], o[9], o[10], o[11], o[12], o[13], o[14], o[15] = s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]
				}
			}
		case 8:
			for js := 0; js < full; js += 8 {
				o, s := dst[js*kb+p*8:][:8:8], r[js:][:8:8]
				*(*[4]float32)(o) = *(*[4]float32)(s)
				*(*[4]float32)(o[4:]) = *(*[4]float32)(s[4:])
			}
		case 6:
			for js := 0; js < full; js += 6 {
				o, s := dst[js*kb+p*6:][:6:6], r[js:][:6:6]
				*(*[4]float32)(o) = *(*[4]float32)(s)
				*(*[2]float32)(o[4:]) = *(*[2]float32)(s[4:])
			}
		case 2:
			for js := 0; js < full; js += 2 {
				o, s := (*[2]float32)(dst[js*kb+p*2:]), (*[2]float32)(r[js:])
				o[0], o[1] = s[0], s[1]
			}
		default:
			panic(fmt.Sprintf("tensor: gemmPackRowsGo: runs of %d", nr))
		}
	}
}

// gemmPackB packs op(B)[p0:p0+kb, j0:j0+nb] into slivers of nr columns (with kern's trans8
// and packRows where it has them): sliver s holds element (p, j) at s*nr*kb + p*nr + j;
// columns past nb are zero.
func gemmPackB(kern *gemmKernel, dst []float32, transB bool, b []float32, ldb, p0, j0, kb, nb, nr int) {
	if !transB {
		gemmPackBRows(kern.packRows, dst, b, ldb, p0, j0, kb, nb, nr)
		return
	}
	trans8 := kern.trans8
	for js := 0; js < nb; js += nr {
		d := dst[js*kb : (js+nr)*kb]
		cols := min(nr, nb-js)
		// op(B)(p, j) = b[j*ldb+p]: a transpose, by blocks of 8×8 where the machine has one;
		// else four rows of b at a time write four consecutive floats of each depth step.
		j := 0
		if trans8 != nil {
			n8 := kb &^ 7
			for ; j+8 <= cols; j += 8 {
				trans8(d[j:], b[(j0+js+j)*ldb+p0:], nr, ldb, n8)
				for jj := j; jj < j+8; jj++ {
					for p := n8; p < kb; p++ {
						d[p*nr+jj] = b[(j0+js+jj)*ldb+p0+p]
					}
				}
			}
		}
		for ; j+4 <= cols; j += 4 {
			r0 := b[(j0+js+j)*ldb+p0:][:kb]
			r1 := b[(j0+js+j+1)*ldb+p0:][:kb]
			r2 := b[(j0+js+j+2)*ldb+p0:][:kb]
			r3 := b[(j0+js+j+3)*ldb+p0:][:kb]
			for p := range r0 {
				dp := (*[4]float32)(d[p*nr+j:])
				dp[0], dp[1], dp[2], dp[3] = r0[p], r1[p], r2[p], r3[p]
			}
		}
		for ; j < cols; j++ {
			src := b[(j0+js+j)*ldb+p0:][:kb]
			for p, v := range src {
				d[p*nr+j] = v
			}
		}
		if cols < nr {
			for p := 0; p < kb; p++ {
				clear(d[p*nr+cols : p*nr+nr])
			}
		}
	}
}
