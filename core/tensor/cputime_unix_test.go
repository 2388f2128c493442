//go:build unix

package tensor

import "syscall"

// cpuSeconds is the CPU time (user and system) this process has used so far: on a shared
// machine a benchmark's CPU time per operation varies far less than its wall time, which
// counts the time other processes held the cores.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
