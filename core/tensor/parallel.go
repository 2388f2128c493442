package tensor

import (
	"runtime"
	"sync"
)

// ParallelFor splits [0, n) into at most GOMAXPROCS contiguous chunks and runs fn on each,
// returning when all are done. With one processor (always so in the browser) it calls fn(0, n)
// on the calling goroutine.
func ParallelFor(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
