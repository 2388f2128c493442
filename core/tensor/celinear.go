package tensor

import "fmt"

// SoftmaxCrossEntropyLinearBackward is the backward of logits = x·wᵀ + bias followed by the
// softmax cross entropy of each row of logits [m, out] against labels [m]: the MLM decoder's
// backward with its loss. A negative label leaves its row out. With k the scale of each
// counted row, it overwrites logits with dlogits, which is what
// SoftmaxCrossEntropyBackward(row, row, label, k) writes for a counted row and 0 for one left
// out; it then
//
//	sets    dx [m, in]   = dlogits · w      (w [out, in])
//	adds    dlogitsᵀ · x to dw [out, in]    (x [m, in]; sets dw to it, not reading it, unless addDW)
//	adds    the column sums of dlogits to db [out] (nil: none), as SumRows would
//
// and returns the sum, in row order, of the counted rows' losses. On any number of goroutines
// the bits are those of SoftmaxCrossEntropyBackward on each row, then SumRows and
// LinearBackward(dx, dw, db, …, 0) on one goroutine.
//
// Done one after the other, the bias's sums and each product read all of dlogits from memory
// again: 17.8 MB for Tiny's 146 labelled rows of a 30,522-word vocabulary. Here, on one
// goroutine, the two products run one depth block of dx's at a time (kc classes: Gemm's own
// blocking, so each sum runs over the same blocks in the same order), dw's rows for that block
// just after, so that dw's packing reads from cache the block that dx's packing has just read
// from memory. On several goroutines, each runs that loop on a strip of the products' columns
// (in); when in is too narrow to split, each sums its blocks of classes for db just before it
// adds their rows of dw, and dx's product is split as Gemm splits it.
func SoftmaxCrossEntropyLinearBackward(dx, dw, db, logits []float32, labels []int, k float32, x, w []float32, m, in, out int, addDW bool) float64 {
	return ceLinearBackwardWith(gemmDefault, gemmThreads(out, in, m), dx, dw, db, logits, labels, k, x, w, m, in, out, addDW)
}

// ceLinearBackwardWith is SoftmaxCrossEntropyLinearBackward with a given GEMM kernel on up to
// threads goroutines.
func ceLinearBackwardWith(kern *gemmKernel, threads int, dx, dw, db, logits []float32, labels []int, k float32, x, w []float32, m, in, out int, addDW bool) float64 {
	if m <= 0 || in <= 0 || out <= 0 {
		panic(fmt.Sprintf("tensor.SoftmaxCrossEntropyLinearBackward: size m=%d in=%d out=%d", m, in, out))
	}
	if len(labels) != m || len(logits) < m*out || len(dx) < m*in || len(dw) < out*in || len(x) < m*in || len(w) < out*in || (db != nil && len(db) < out) {
		panic(fmt.Sprintf("tensor.SoftmaxCrossEntropyLinearBackward: short operand for m=%d in=%d out=%d", m, in, out))
	}
	for _, y := range labels {
		if y >= out {
			panic(fmt.Sprintf("tensor.SoftmaxCrossEntropyLinearBackward: label %d of %d classes", y, out))
		}
	}
	var acc []float64 // db's sums
	if db != nil {
		buf := sumBufs.Get()
		defer sumBufs.Put(buf)
		acc = zeroSums(buf, out)
	}
	// x is the B operand of every block of dw's product: packed once, on a packing buffer
	// kept between calls (gemmBufs, as sumBufs keeps the bias's sums).
	pbuf := gemmBufs.Get()
	defer gemmBufs.Put(pbuf)
	px := packBInto(kern, pbuf.b, x, false, in, m)
	pbuf.b = px.data
	dwBeta := float32(0)
	if addDW {
		dwBeta = 1
	}
	// dwBlock adds the rows [p0, p0+kb) of dlogitsᵀ · x to dw (or sets them), columns [c0, c1):
	// those of Gemm(true, false, out, in, m, …), the same sums.
	dwBlock := func(p0, kb, c0, c1 int) {
		gemmSerial(kern, true, false, kb, c1-c0, m, 1, logits[p0:], out, nil, 0, px, c0, dwBeta, dw[p0*in+c0:], in, epilogue{})
	}
	// blockSums adds the classes [p0, p0+kb) of d logits to db's sums, over the rows in order
	// (SumRows's sums).
	blockSums := func(p0, kb int) {
		a := acc[p0 : p0+kb]
		for i := range m {
			addCols(a, logits[i*out+p0:i*out+p0+kb])
		}
	}
	// products runs both products on columns [c0, c1) of dx and dw, one depth block of dx's
	// (kc classes: Gemm's own blocking, so each sum runs over the same blocks in the same
	// order) at a time, dw's rows for the block just after, so that dw's packing reads from
	// cache the block that dx's has just read from memory. Then it sums for db the blocks b
	// for which sums(b) (nil: none), from cache too: summed before the products, each of the
	// block's 146 rows (Tiny's) came from memory a kilobyte at a time, 122 KB apart, and the
	// sums took 11% of the CPU time of the backward on two threads (6.87 -> 6.61 ms a call at
	// Tiny's shape, alternating).
	products := func(c0, c1 int, sums func(b int) bool) {
		for b, p0 := 0, 0; p0 < out; b, p0 = b+1, p0+kern.kc {
			kb := min(kern.kc, out-p0)
			beta := float32(1)
			if p0 == 0 {
				beta = 0
			}
			// dx += d[:, p0:p0+kb] · w[p0:p0+kb]: the depth block p0 of Gemm(false, false, m,
			// in, out, …).
			gemmSerial(kern, false, false, m, c1-c0, kb, 1, logits[p0:], out, w[p0*in+c0:], in, nil, 0, beta, dx[c0:], in, epilogue{})
			dwBlock(p0, kb, c0, c1)
			if acc != nil && sums != nil && sums(b) {
				blockSums(p0, kb)
			}
		}
	}
	var sum float64
	if threads < 2 {
		// d logits, row by row in place (each row is read from memory once, and summed for db
		// while it is in cache), as SoftmaxCrossEntropyBackward and SumRows give it.
		for i, y := range labels {
			d := logits[i*out : (i+1)*out]
			if y < 0 {
				clear(d)
			} else {
				sum += SoftmaxCrossEntropyBackward(d, d, y, k)
			}
			if acc != nil {
				addCols(acc, d)
			}
		}
		products(0, in, nil)
	} else {
		// The rows of d logits split over the goroutines, then the products.
		losses := make([]float64, m)
		ParallelFor(m, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d := logits[i*out : (i+1)*out]
				if labels[i] < 0 {
					clear(d)
				} else {
					losses[i] = SoftmaxCrossEntropyBackward(d, d, labels[i], k)
				}
			}
		})
		for i, y := range labels {
			if y >= 0 {
				sum += losses[i]
			}
		}
		if chunk := ceilDiv(ceilDiv(in, threads), kern.nr) * kern.nr; chunk < in {
			// Each goroutine runs products on a strip of the columns (in whole tiles): each
			// block of d logits is read by every goroutine at about the same time (from memory
			// once, then from the shared cache), and none packs a row of w that another packs
			// (dx's product split by its rows as Gemm splits it packed all of w, 15.6 MB for
			// Tiny, on every goroutine: 1.43x on two threads). Splitting the columns leaves
			// every sum as it is. Strip s sums the blocks s, s+strips, … for db.
			strips := ceilDiv(in, chunk)
			parallelChunks(in, chunk, func(c0, c1 int) {
				s := c0 / chunk
				products(c0, c1, func(b int) bool { return b%strips == s })
			})
		} else {
			// Each goroutine sums its blocks of classes for db just before it adds their rows
			// of dw; dx's product, whose depth is the classes, is split as Gemm splits it.
			blocks := ceilDiv(out, kern.kc)
			parallelChunks(blocks, ceilDiv(blocks, threads), func(b0, b1 int) {
				for p0 := b0 * kern.kc; p0 < min(b1*kern.kc, out); p0 += kern.kc {
					kb := min(kern.kc, out-p0)
					if acc != nil {
						blockSums(p0, kb)
					}
					dwBlock(p0, kb, 0, in)
				}
			})
			gemmWith(kern, threads, false, false, m, in, out, 1, logits, out, w, in, 0, dx, in)
		}
	}
	if db != nil {
		for j, v := range acc {
			db[j] += float32(v)
		}
	}
	return sum
}
