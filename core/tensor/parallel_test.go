package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
)

// counter counts, for each index, the calls of ParallelFor's fn that covered it.
type counter struct{ hits []atomic.Int32 }

func (c *counter) add(lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

// TestParallelFor checks that every index is covered exactly once, for several sizes and
// processor counts, and that a call with a method value kept between calls allocates nothing.
func TestParallelFor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 5, 16, 17, 100} {
			t.Run(fmt.Sprintf("procs=%d/n=%d", procs, n), func(t *testing.T) {
				c := &counter{hits: make([]atomic.Int32, n)}
				add := c.add
				ParallelFor(n, add)
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 1 {
						t.Fatalf("index %d covered %d times", i, h)
					}
				}
				if allocs := testing.AllocsPerRun(20, func() { ParallelFor(n, add) }); allocs >= 1 {
					t.Errorf("%v allocations per call", allocs)
				}
			})
		}
	}
}

// ParallelEach runs every index exactly once, on any number of processors.
func TestParallelEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 7, 100} {
			hits := make([]atomic.Int32, n)
			ParallelEach(n, func(i int) { hits[i].Add(1) })
			for i := range hits {
				if h := hits[i].Load(); h != 1 {
					t.Fatalf("procs %d n %d: index %d run %d times", procs, n, i, h)
				}
			}
		}
	}
}

// A ParallelFor made from inside another one's chunk, and ParallelFor calls made by several
// goroutines at once, each cover their indices exactly once: only one call at a time hands
// out work to the helpers, the others run their chunks themselves (and cannot deadlock).
func TestParallelForNestedAndConcurrent(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			const outer, inner = 6, 50
			c := &counter{hits: make([]atomic.Int32, outer*inner)}
			ParallelFor(outer, func(lo, hi int) {
				for o := lo; o < hi; o++ {
					ParallelFor(inner, func(a, b int) { c.add(o*inner+a, o*inner+b) })
				}
			})
			done := make(chan *counter)
			for range 4 {
				go func() {
					c := &counter{hits: make([]atomic.Int32, 1000)}
					for range 50 {
						ParallelFor(len(c.hits), c.add)
					}
					done <- c
				}()
			}
			for range 4 {
				cc := <-done
				for i := range cc.hits {
					if h := cc.hits[i].Load(); h != 50 {
						t.Fatalf("concurrent calls: index %d covered %d times in 50 calls", i, h)
					}
				}
			}
			for i := range c.hits {
				if h := c.hits[i].Load(); h != 1 {
					t.Fatalf("nested calls: index %d covered %d times", i, h)
				}
			}
		})
	}
}

// AddLayerNorm and LayerNorm split their rows over goroutines from addLNParallelMin values:
// the outputs, means and 1/std equal those of the rows computed one by one, with one processor
// and with several, on a row count that does not divide evenly.
func TestAddLayerNormParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const rows, n = 301, 130 // 39,130 values: above addLNParallelMin
	if rows*n < addLNParallelMin {
		t.Fatal("the test's shape no longer reaches the parallel path")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	fill := func(k int) []float32 { return randSlice(rng, k, 1) }
	a, b, g, bt := fill(rows*n), fill(rows*n), fill(n), fill(n)
	wantSum, wantOut := make([]float32, rows*n), make([]float32, rows*n)
	wantMean, wantRstd := make([]float32, rows), make([]float32, rows)
	for i := range rows {
		r := i * n
		wantMean[i], wantRstd[i] = addLayerNormRow(wantSum[r:r+n], wantOut[r:r+n], a[r:r+n], b[r:r+n], g, bt, 1e-12)
	}
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		sum, out := make([]float32, rows*n), make([]float32, rows*n)
		mean, rstd := make([]float32, rows), make([]float32, rows)
		AddLayerNorm(sum, out, a, b, g, bt, n, 1e-12, mean, rstd)
		for i := range out {
			if math.Float32bits(out[i]) != math.Float32bits(wantOut[i]) || math.Float32bits(sum[i]) != math.Float32bits(wantSum[i]) {
				t.Fatalf("procs %d: value %d: sum %g out %g, row by row %g %g", procs, i, sum[i], out[i], wantSum[i], wantOut[i])
			}
		}
		for i := range mean {
			if mean[i] != wantMean[i] || rstd[i] != wantRstd[i] {
				t.Fatalf("procs %d: row %d: mean %g rstd %g, row by row %g %g", procs, i, mean[i], rstd[i], wantMean[i], wantRstd[i])
			}
		}
		if allocs := testing.AllocsPerRun(10, func() { AddLayerNorm(sum, out, a, b, g, bt, n, 1e-12, mean, rstd) }); allocs >= 1 {
			t.Errorf("procs %d: %v allocations per call", procs, allocs)
		}
		// LayerNorm of the sum: the second half of each row's AddLayerNorm.
		clear(out)
		clear(mean)
		clear(rstd)
		LayerNorm(out, wantSum, g, bt, n, 1e-12, mean, rstd)
		for i := range out {
			if math.Float32bits(out[i]) != math.Float32bits(wantOut[i]) {
				t.Fatalf("procs %d: LayerNorm value %d: %g, row by row %g", procs, i, out[i], wantOut[i])
			}
		}
		for i := range mean {
			if mean[i] != wantMean[i] || rstd[i] != wantRstd[i] {
				t.Fatalf("procs %d: LayerNorm row %d: mean %g rstd %g, row by row %g %g", procs, i, mean[i], rstd[i], wantMean[i], wantRstd[i])
			}
		}
		if allocs := testing.AllocsPerRun(10, func() { LayerNorm(out, wantSum, g, bt, n, 1e-12, mean, rstd) }); allocs >= 1 {
			t.Errorf("procs %d: LayerNorm: %v allocations per call", procs, allocs)
		}
	}
}

// A chunk that panics on the calling goroutine leaves the helpers free: after the panic is
// recovered, the next call still hands out work (and covers every index once). With one
// processor the caller claims the first chunk before the helper runs at all, so the panic is
// the caller's (a panic on a helper would end the process, as one in a goroutine does).
func TestParallelForAfterPanic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	var ran atomic.Int32
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the chunk's panic did not reach the caller")
			}
		}()
		parallelChunks(2, 1, func(lo, hi int) {
			if lo == 0 {
				panic("chunk failed")
			}
			ran.Add(1)
		})
	}()
	if parBusy.Load() {
		t.Fatal("the helpers are still marked busy after the panic")
	}
	if ran.Load() != 1 {
		t.Fatalf("the helper's chunk ran %d times, want 1 (finished before the panic went on)", ran.Load())
	}
	c := &counter{hits: make([]atomic.Int32, 100)}
	parallelChunks(len(c.hits), 30, c.add)
	for i := range c.hits {
		if h := c.hits[i].Load(); h != 1 {
			t.Fatalf("index %d covered %d times", i, h)
		}
	}
}
