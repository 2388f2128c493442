package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSoftmaxCrossEntropyLinearBackward: the fused backward gives the bits of the unfused
// sequence it replaces (SoftmaxCrossEntropyBackward on each row, the column sums, then the
// two products on one goroutine) with every kernel of this CPU, and with blockings so small
// that the odd shapes below cross many depth, row and column blocks; rows left out get no
// gradient, the logits become dlogits, dw is added to (or set) and db added to; on 1, 2 and 3
// goroutines; with the scratch kept between calls left full of NaNs.
func TestSoftmaxCrossEntropyLinearBackward(t *testing.T) {
	kerns := gemmKernels()
	for _, kern := range gemmKernels() {
		tiny := *kern
		tiny.name += "/tiny"
		tiny.kc, tiny.mc, tiny.nc = 5, 2*kern.mr, 3*kern.nr
		kerns = append(kerns, &tiny)
	}
	shapes := []struct{ m, in, out int }{
		{1, 1, 1}, {3, 7, 11}, {9, 33, 257}, {37, 20, 600}, {146, 128, 1000}, {300, 40, 531},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, kern := range kerns {
		for _, sh := range shapes {
			for _, threads := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%dx%dx%d/threads=%d", kern.name, sh.m, sh.in, sh.out, threads), func(t *testing.T) {
					m, in, out := sh.m, sh.in, sh.out
					logits := randSlice(rng, m*out, 3)
					labels := make([]int, m)
					for i := range labels {
						labels[i] = rng.IntN(out)
						if i%5 == 2 && m > 1 {
							labels[i] = -100
						}
					}
					x, w := randSlice(rng, m*in, 1), randSlice(rng, out*in, 0.1)
					dw0, db0 := randSlice(rng, out*in, 1), randSlice(rng, out, 1)
					const k = 0.25

					// The unfused sequence.
					dl := slices.Clone(logits)
					var wantLoss float64
					for i, y := range labels {
						r := dl[i*out : (i+1)*out]
						if y < 0 {
							clear(r)
							continue
						}
						wantLoss += SoftmaxCrossEntropyBackward(r, r, y, k)
					}
					wantDB := slices.Clone(db0)
					sumRowsChunks(1, wantDB, dl, out)
					wantDW, wantDX := slices.Clone(dw0), make([]float32, m*in)
					gemmWith(kern, 1, true, false, out, in, m, 1, dl, out, x, in, 1, wantDW, in)
					gemmWith(kern, 1, false, false, m, in, out, 1, dl, out, w, in, 0, wantDX, in)

					// dw set rather than added to: the product alone, whatever dw held.
					wantSetDW := make([]float32, out*in)
					gemmWith(kern, 1, true, false, out, in, m, 1, dl, out, x, in, 0, wantSetDW, in)

					for _, addDW := range []bool{true, false} {
						gotLogits := slices.Clone(logits)
						gotDW, gotDB := slices.Clone(dw0), slices.Clone(db0)
						wantDW := wantDW
						if !addDW {
							gotDW, wantDW = randSlice(rng, out*in, 1), wantSetDW
						}
						gotDX := randSlice(rng, m*in, 1) // set, not added to
						poisonKeptScratch()
						gotLoss := ceLinearBackwardWith(kern, threads, gotDX, gotDW, gotDB, gotLogits, labels, k, x, w, m, in, out, addDW)

						if math.Float64bits(gotLoss) != math.Float64bits(wantLoss) {
							t.Errorf("addDW %v: loss sum %v, want %v", addDW, gotLoss, wantLoss)
						}
						for _, c := range []struct {
							name      string
							got, want []float32
						}{{"dx", gotDX, wantDX}, {"dw", gotDW, wantDW}, {"db", gotDB, wantDB}, {"dlogits", gotLogits, dl}} {
							if i := firstBitDiff(c.got, c.want); i >= 0 {
								t.Errorf("addDW %v: %s[%d] = %v, want %v bit for bit", addDW, c.name, i, c.got[i], c.want[i])
							}
						}
					}
				})
			}
		}
	}
}

// poisonKeptScratch leaves NaN-filled buffers on the free lists of scratch kept between calls
// (the bias's sums, the packing buffers), so that a call that reads what it has not written
// first gives NaNs.
func poisonKeptScratch() {
	for range 4 {
		sums := make([]float64, 1<<12)
		for i := range sums {
			sums[i] = math.NaN()
		}
		sumBufs.Put(&sums)
		nans := func() []float32 {
			s := make([]float32, 1<<16)
			for i := range s {
				s[i] = float32(math.NaN())
			}
			return s
		}
		gemmBufs.Put(&gemmBuf{a: nans(), b: nans(), tile: nans()})
	}
}

// TestSoftmaxCrossEntropyLinearBackwardNilBias: without db the products are the same.
func TestSoftmaxCrossEntropyLinearBackwardNilBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, in, out := 13, 9, 300
	logits, x, w := randSlice(rng, m*out, 2), randSlice(rng, m*in, 1), randSlice(rng, out*in, 1)
	labels := make([]int, m)
	for i := range labels {
		labels[i] = (i * 37) % out
	}
	dx1, dw1, db1 := make([]float32, m*in), make([]float32, out*in), make([]float32, out)
	dx2, dw2 := make([]float32, m*in), make([]float32, out*in)
	l1 := SoftmaxCrossEntropyLinearBackward(dx1, dw1, db1, slices.Clone(logits), labels, 1, x, w, m, in, out, true)
	l2 := SoftmaxCrossEntropyLinearBackward(dx2, dw2, nil, logits, labels, 1, x, w, m, in, out, true)
	if l1 != l2 || firstBitDiff(dx1, dx2) >= 0 || firstBitDiff(dw1, dw2) >= 0 {
		t.Errorf("without db: loss %v vs %v, or the products differ", l2, l1)
	}
	// Each row of dlogits is a softmax minus a one-hot: it sums to 0, so the column sums do.
	var total float64
	for _, v := range db1 {
		total += float64(v)
	}
	if math.Abs(total) > 1e-5 {
		t.Errorf("the bias gradient sums to %v, want 0", total)
	}
}

// firstBitDiff is the first index where a and b differ in bits (or -1; lengths must match).
func firstBitDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
