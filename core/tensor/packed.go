package tensor

import "fmt"

// PackedB is a linear layer's weight w [n, k] (the B operand of C = A·wᵀ, as Linear reads it)
// packed once into the slivers that the GEMM's micro-kernel reads. Gemm packs its B operand on
// every call, and for a weight that packing is a transposition: about half the time of the
// products of a short sequence (Tiny/16), and for a few masked rows through the MLM decoder
// [V, H] far more than the products themselves. A PackedB skips it. It is packed for the kernel
// Gemm uses on this machine (gemmDefault), holds ⌈n/nr⌉·nr·k floats, and GemmPackedB with it
// gives the same bits as Gemm(false, true, …) with w.
type PackedB struct {
	N, K int // w's shape: n outputs, k inputs
	kern *gemmKernel
	data []float32
	// off[b] is where depth block b (op(B) rows b·kc … b·kc+kb−1) starts in data: its
	// slivers cover all n columns, kb·nr floats each, zero padded past n.
	off []int
	// ahead: the GEMM asks for each next sliver while the kernel runs on the current one
	// (kernels with a prefetch). See SetStreamed.
	ahead bool
}

// packedAheadMin is the size (floats) from which SetStreamed has a PackedB's slivers asked for
// ahead: 2 MiB, more than a core's L2, and BERT-Base's smallest weight (768x768).
const packedAheadMin = 768 * 768

// PackTransB packs w [n, k] (row-major) as the B operand of A·wᵀ for GemmPackedB and
// LinearPacked.
func PackTransB(w []float32, n, k int) *PackedB {
	return packTransB(gemmDefault, w, n, k)
}

func packTransB(kern *gemmKernel, w []float32, n, k int) *PackedB {
	return packB(kern, w, true, n, k)
}

// packB packs op(B) [k, n] for kern: w [n, k] (B = wᵀ) when trans, else b [k, n] itself, both
// row-major.
func packB(kern *gemmKernel, b []float32, trans bool, n, k int) *PackedB {
	return packBInto(kern, nil, b, trans, n, k)
}

// packBInto is packB on buf's storage when it holds enough floats, else on new storage (the
// PackedB's data either way).
func packBInto(kern *gemmKernel, buf, b []float32, trans bool, n, k int) *PackedB {
	if n <= 0 || k <= 0 {
		panic(fmt.Sprintf("tensor: packing B: size %dx%d", n, k))
	}
	ld := n
	if trans {
		gemmCheck("B", b, n, k, k)
		ld = k
	} else {
		gemmCheck("B", b, k, n, n)
	}
	nr := kern.nr
	np := ceilDiv(n, nr) * nr
	pb := &PackedB{N: n, K: k, kern: kern, data: grow(buf, np*k)}
	for pc := 0; pc < k; pc += kern.kc {
		pb.off = append(pb.off, pc*np)
	}
	// Slivers [s0, s1) of every depth block: columns s0·nr … s1·nr−1 of op(B).
	packSlivers := func(s0, s1 int) {
		j0, j1 := s0*nr, min(s1*nr, n)
		for b0, o := range pb.off {
			pc := b0 * kern.kc
			kb := min(kern.kc, k-pc)
			gemmPackB(kern, pb.data[o+j0*kb:o+s1*nr*kb], trans, b, ld, pc, j0, kb, j1-j0, nr)
		}
	}
	// A model's load packs every matrix: split the large ones by slivers across the cores
	// (the same floats land in the same places either way).
	if n*k >= 1<<16 {
		ParallelFor(np/nr, packSlivers)
	} else {
		packSlivers(0, np/nr)
	}
	return pb
}

// SetStreamed marks pb as a weight that comes from memory at each use, as each of a model's
// weights does when they are more than the caches hold (BERT-Base reads 340 MB of them a
// forward): GemmPackedB then asks for each next sliver of it while the kernel runs on the
// current one, when pb holds packedAheadMin floats or more and the kernel can ask (128 rows of
// Base on one thread, a forward: 113-119 -> 100-105 ms). Not for a weight that stays in the
// caches between uses, such as one multiplied over and over: there asking costs 2-4%
// (BenchmarkGemmPackedFromMemory, "near"), and 10% on Tiny's small weights. The bits are the
// same either way.
func (pb *PackedB) SetStreamed(on bool) {
	pb.ahead = on && pb.N*pb.K >= packedAheadMin
}

// Streamed reports whether GemmPackedB asks for pb's slivers ahead (SetStreamed).
func (pb *PackedB) Streamed() bool { return pb.ahead }

// Unpack writes the weight pb was packed from back into w [N, K] (row-major), exactly: the
// packing only moves floats. A model that keeps only its packed weights (bert.Model's
// PackWeightsInPlace) gets its raw layout back this way when something needs it.
func (pb *PackedB) Unpack(w []float32) {
	n, k, nr, kc := pb.N, pb.K, pb.kern.nr, pb.kern.kc
	if len(w) < n*k {
		panic(fmt.Sprintf("tensor.PackedB.Unpack: %d floats for a %dx%d weight", len(w), n, k))
	}
	for b, o := range pb.off {
		pc := b * kc
		kb := min(kc, k-pc)
		// Sliver js holds element (p, j) of op(B) = wᵀ at js·kb + p·nr + j−js.
		for js := 0; js < n; js += nr {
			d := pb.data[o+js*kb : o+(js+nr)*kb]
			for j := js; j < min(js+nr, n); j++ {
				row := w[j*k+pc : j*k+pc+kb]
				for p := range row {
					row[p] = d[p*nr+j-js]
				}
			}
		}
	}
}

// GemmPackedB computes C[m, n] = alpha·A[m, k]·wᵀ + beta·C (row strides lda and ldc) for the
// weight w that pb was packed from: Gemm(false, true, m, n, k, alpha, a, lda, w, k, beta, c,
// ldc) without packing w, with the same result bit for bit.
func GemmPackedB(m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int) {
	gemmPackedWith(gemmThreads(m, pb.N, pb.K), m, alpha, a, lda, pb, beta, c, ldc, epilogue{})
}

// LinearPacked computes y[m, n] = x[m, k]·wᵀ + bias[n] (bias may be nil) with w packed in pb:
// Linear without packing the weight.
func LinearPacked(y, x []float32, pb *PackedB, bias []float32, m int) {
	LinearPackedAct(y, x, pb, bias, m, nil)
}

// LinearPackedAct computes y[m, n] = act(x[m, k]·wᵀ + bias[n]) with w packed in pb; bias and
// act may be nil, and act must be element-wise (GELU, Tanh: any split of y gives the same
// bits). The output pass is fused: each goroutine adds the bias to its own strip of y and
// applies act to it just after computing it, while the strip is still in cache, so the whole
// layer is one fork-join, with the same bits as LinearPacked followed by act(y).
func LinearPackedAct(y, x []float32, pb *PackedB, bias []float32, m int, act func([]float32)) {
	ep := epilogue{bias: bias, act: act}
	if bias != nil {
		ep.bias = bias[:pb.N]
	}
	gemmPackedWith(gemmThreads(m, pb.N, pb.K), m, 1, x, pb.K, pb, 0, y, pb.N, ep)
}

// epilogue is what a GEMM does to each block of C once it is computed (see gemmSerial): add
// bias[j] to column j, then apply act (each may be nil).
type epilogue struct {
	bias []float32
	act  func([]float32)
}

// cols is e for the columns of C from c0 on: what a strip of them, as its own C, runs.
func (e epilogue) cols(c0 int) epilogue {
	if e.bias != nil {
		e.bias = e.bias[c0:]
	}
	return e
}

// apply runs e on columns [c0, c1) of rows [0, m) of c (row stride ldc).
func (e epilogue) apply(c []float32, ldc, m, c0, c1 int) {
	if e.bias == nil && e.act == nil {
		return
	}
	for i := range m {
		row := c[i*ldc+c0 : i*ldc+c1]
		if e.bias != nil {
			add(row, row, e.bias[c0:c1])
		}
		if e.act != nil {
			e.act(row)
		}
	}
}

// packedSplitN reports whether a GemmPackedB of m×n×k splits C by columns (each goroutine then
// packs all of A, and reads its share of the packed weight) rather than by rows (each packs
// its rows of A and reads all of the weight). Rows are better while the weight is small
// enough to stay in cache for the second reader (Mini's layers, at most 1 MiB: 12% less time
// a forward on 2 cores); beyond, reading it twice from memory costs more than packing A
// twice (Base's 768×768 layers: 15% more time by rows). Short A (under 8 tiles) goes by
// columns.
func packedSplitN(m, n, k, mr int) bool {
	return n >= m && (n*k > 1<<18 || m < 8*mr)
}

// gemmPackedWith is GemmPackedB on a given number of goroutines, split as gemmWith splits,
// each strip followed by ep.
func gemmPackedWith(threads, m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int, ep epilogue) {
	n, k, kern := pb.N, pb.K, pb.kern
	if m < 0 {
		panic(fmt.Sprintf("tensor.GemmPackedB: negative size m=%d", m))
	}
	gemmCheck("C", c, m, n, ldc)
	if m == 0 {
		return
	}
	if alpha == 0 {
		gemmScale(m, n, beta, c, ldc)
		return
	}
	gemmCheck("A", a, m, k, lda)
	if threads < 2 {
		gemmSerial(kern, false, true, m, n, k, alpha, a, lda, nil, 0, pb, 0, beta, c, ldc, ep)
		return
	}
	j := gemmJobs.Get()
	*j = gemmJob{kern: kern, transB: true, m: m, n: n, k: k, alpha: alpha,
		a: a, lda: lda, pb: pb, beta: beta, c: c, ldc: ldc, splitN: packedSplitN(m, n, k, kern.mr), ep: ep, strip: j.strip}
	size, unit := m, kern.mr
	if j.splitN {
		size, unit = n, kern.nr
	}
	parallelChunks(size, ceilDiv(ceilDiv(size, threads), unit)*unit, j.strip)
	*j = gemmJob{strip: j.strip}
	gemmJobs.Put(j)
}
