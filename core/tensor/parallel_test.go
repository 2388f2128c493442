package tensor

import (
	"fmt"
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
