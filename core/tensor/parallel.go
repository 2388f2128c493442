package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// ParallelFor splits [0, n) into at most GOMAXPROCS contiguous chunks and runs fn on each,
// returning when all are done. With one processor (always so in the browser) it calls fn(0, n)
// on the calling goroutine.
//
// The calling goroutine runs the last chunk itself. ParallelFor allocates nothing in steady
// state beyond what the caller's fn costs: a closure that captures variables is allocated by
// the caller; a method value kept from one call to the next is not.
func ParallelFor(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	parallelChunks(n, (n+workers-1)/workers, fn)
}

// parJob is one parallelChunks call: fn over [0, n) in chunks of chunk, the chunk of index i
// being [i·chunk, min((i+1)·chunk, n)). Worker goroutines claim chunk indices from next.
type parJob struct {
	fn       func(lo, hi int)
	n, chunk int
	next     atomic.Int64
	wg       sync.WaitGroup
	// work is the method value j.worker, bound once: `go j.work()` allocates no closure.
	work func()
}

// parJobs keeps parJobs between calls.
var parJobs = freeList[parJob]{new: func() *parJob {
	j := new(parJob)
	j.work = j.worker
	return j
}}

// worker runs the next unclaimed chunk of j.
func (j *parJob) worker() {
	defer j.wg.Done()
	j.runChunk(int(j.next.Add(1) - 1))
}

// runChunk runs chunk i of j.
func (j *parJob) runChunk(i int) {
	lo := i * j.chunk
	j.fn(lo, min(lo+j.chunk, j.n))
}

// parallelChunks runs fn on the chunks [i·chunk, min((i+1)·chunk, n)) of [0, n), one
// goroutine each, the last one on the calling goroutine, and returns when all are done.
// n and chunk are positive.
func parallelChunks(n, chunk int, fn func(lo, hi int)) {
	count := (n + chunk - 1) / chunk
	if count == 1 {
		fn(0, n)
		return
	}
	j := parJobs.get()
	j.fn, j.n, j.chunk = fn, n, chunk
	j.next.Store(0)
	j.wg.Add(count - 1)
	for range count - 1 {
		go j.work()
	}
	j.runChunk(count - 1)
	j.wg.Wait()
	j.fn = nil // do not keep the caller's closure (and what it holds) alive
	parJobs.put(j)
}

// freeList keeps idle *T for reuse. Unlike a sync.Pool it is not emptied by the garbage
// collector and does not depend on which processor a goroutine runs on, so a steady workload
// allocates no new ones after its first call: it holds as many as were ever in use at once,
// up to maxIdle.
type freeList[T any] struct {
	mu   sync.Mutex
	idle []*T
	new  func() *T
	// maxIdle, if not nil, bounds the number of idle values kept; put leaves the others to
	// the garbage collector.
	maxIdle func() int
}

// get returns an idle *T, or a new one.
func (f *freeList[T]) get() *T {
	f.mu.Lock()
	if n := len(f.idle); n > 0 {
		x := f.idle[n-1]
		f.idle[n-1] = nil
		f.idle = f.idle[:n-1]
		f.mu.Unlock()
		return x
	}
	f.mu.Unlock()
	return f.new()
}

// put makes x available to get again; x must not be used after.
func (f *freeList[T]) put(x *T) {
	keep := -1
	if f.maxIdle != nil {
		keep = f.maxIdle()
	}
	f.mu.Lock()
	if keep < 0 || len(f.idle) < keep {
		f.idle = append(f.idle, x)
	}
	f.mu.Unlock()
}
