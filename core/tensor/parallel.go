package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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

// ParallelEach runs fn(i) for every i in [0, n) on up to GOMAXPROCS goroutines, each taking
// the next index as it finishes one (so that items of unequal cost share out: put the
// costliest first), and returns when all are done. With one processor it runs them in order
// on the calling goroutine.
func ParallelEach(n int, fn func(i int)) {
	if runtime.GOMAXPROCS(0) <= 1 || n <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	parallelChunks(n, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			fn(i)
		}
	})
}

// parJob is one parallelChunks call: fn over [0, n) in chunks of chunk, the chunk of index i
// being [i·chunk, min((i+1)·chunk, n)). The caller and the helpers it hands the job to claim
// chunk indices from next until none is left.
type parJob struct {
	fn              func(lo, hi int)
	n, chunk, count int
	next            atomic.Int64
	// helping counts the helpers that hold the job: each lowers it after its last use of the
	// job, and the caller reuses the job only once it is zero.
	helping atomic.Int32
}

// run claims and runs chunks of j until none is left.
func (j *parJob) run() {
	for {
		i := int(j.next.Add(1) - 1)
		if i >= j.count {
			return
		}
		lo := i * j.chunk
		j.fn(lo, min(lo+j.chunk, j.n))
	}
}

// parJobs keeps parJobs between calls.
var parJobs = FreeList[parJob]{New: func() *parJob { return new(parJob) }}

// helper is a goroutine that runs the chunks of the jobs handed to it. After a job it spins
// for helperSpin, ready for the next one (a forward pass runs one parallel operation after
// another, a few microseconds apart, and waking a parked goroutine takes tens of
// microseconds), then parks until the next job.
type helper struct{ jobs chan *parJob }

// helperSpin is how long a helper waits for its next job before it parks.
const helperSpin = 200 * time.Microsecond

var (
	// helpers are the helper goroutines started so far (they live as long as the process).
	helpersMu sync.Mutex
	helpers   []*helper
	// parBusy is set while a parallelChunks call uses the helpers: a call made meanwhile (by
	// one of its chunks, or by another goroutine) runs its chunks on its own goroutine.
	parBusy atomic.Bool
)

// loop runs h's jobs.
func (h *helper) loop() {
	for {
		var j *parJob
		select {
		case j = <-h.jobs:
		default:
			j = h.await()
		}
		j.run()
		j.helping.Add(-1)
	}
}

// await spins for helperSpin, then parks, until a job comes. It spins on the channel alone,
// yielding the processor only now and then (runtime.Gosched takes the scheduler's lock, which
// the goroutine handing out jobs would then contend for).
func (h *helper) await() *parJob {
	start := time.Now()
	for i := 1; ; i++ {
		select {
		case j := <-h.jobs:
			return j
		default:
		}
		if i%spinYield == 0 {
			if time.Since(start) > helperSpin {
				return <-h.jobs
			}
			runtime.Gosched()
		}
	}
}

// spinYield is how many turns a spinning loop takes between yields of its processor, so that
// with one processor the goroutine it waits for still runs.
const spinYield = 256

// startHelpers returns n helpers, starting the ones missing.
func startHelpers(n int) []*helper {
	helpersMu.Lock()
	defer helpersMu.Unlock()
	for len(helpers) < n {
		h := &helper{jobs: make(chan *parJob, 1)}
		helpers = append(helpers, h)
		go h.loop()
	}
	return helpers[:n]
}

// parallelChunks runs fn on the chunks [i·chunk, min((i+1)·chunk, n)) of [0, n) and returns
// when all are done. The calling goroutine runs chunks too, with up to count−1 helpers; one
// call at a time uses the helpers (one fork and one join per call), and a call made while
// another does, such as one from inside a chunk, runs all its chunks itself: the same chunks,
// so the same results. n and chunk are positive.
func parallelChunks(n, chunk int, fn func(lo, hi int)) {
	count := (n + chunk - 1) / chunk
	if count == 1 || !parBusy.CompareAndSwap(false, true) {
		for lo := 0; lo < n; lo += chunk {
			fn(lo, min(lo+chunk, n))
		}
		return
	}
	// One helper per other processor at most: the chunks beyond are claimed by whoever is
	// free.
	hs := startHelpers(min(count, runtime.GOMAXPROCS(0)) - 1)
	j := parJobs.Get()
	// The caller runs the last chunk first (as ParallelFor promises), and the helpers claim the
	// others from the first on: with as many chunks as goroutines, helper i runs chunk i and
	// the caller the last, the same split call after call, so that the rows one operation
	// writes tend to be read by the next on the same core.
	j.fn, j.n, j.chunk, j.count = fn, n, chunk, count-1
	j.next.Store(0)
	j.helping.Store(int32(len(hs)))
	for _, h := range hs {
		h.jobs <- j // never blocks: a helper's channel is empty between calls
	}
	finished := false
	defer func() {
		if !finished {
			// A chunk of the caller panicked: let the helpers finish theirs and free the
			// helpers for later calls, as the panic goes on up (to a recover, maybe).
			j.wait()
			parBusy.Store(false)
		}
	}()
	lo := (count - 1) * chunk
	fn(lo, min(lo+chunk, n))
	j.run() // the chunks no helper has claimed yet (a parked helper wakes slowly)
	j.wait()
	finished = true
	j.fn = nil // do not keep the caller's closure (and what it holds) alive
	parJobs.Put(j)
	parBusy.Store(false)
}

// wait returns when no helper holds j any more. The helpers finish the chunks they claimed;
// waiting by spinning is short, as the chunks are about the same size.
func (j *parJob) wait() {
	for i := 1; j.helping.Load() != 0; i++ {
		if i%spinYield == 0 {
			runtime.Gosched()
		}
	}
}

// FreeList keeps idle *T for reuse (the engine's packing buffers and parallel jobs, the
// training passes' work buffers). Unlike a sync.Pool it is not emptied by the garbage
// collector and does not depend on which processor a goroutine runs on, so a steady workload
// allocates no new ones after its first call: it holds as many as were ever in use at once,
// up to MaxIdle. The zero value is not ready: New must be set.
type FreeList[T any] struct {
	mu   sync.Mutex
	idle []*T
	// New makes a value when none is idle.
	New func() *T
	// MaxIdle, if not nil, bounds the number of idle values kept; Put leaves the others to
	// the garbage collector.
	MaxIdle func() int
}

// Get returns an idle *T, or a new one.
func (f *FreeList[T]) Get() *T {
	f.mu.Lock()
	if n := len(f.idle); n > 0 {
		x := f.idle[n-1]
		f.idle[n-1] = nil
		f.idle = f.idle[:n-1]
		f.mu.Unlock()
		return x
	}
	f.mu.Unlock()
	return f.New()
}

// Put makes x available to Get again; x must not be used after.
func (f *FreeList[T]) Put(x *T) {
	keep := -1
	if f.MaxIdle != nil {
		keep = f.MaxIdle()
	}
	f.mu.Lock()
	if keep < 0 || len(f.idle) < keep {
		f.idle = append(f.idle, x)
	}
	f.mu.Unlock()
}
