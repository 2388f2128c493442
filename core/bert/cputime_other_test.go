//go:build !unix

package bert_test

// cpuSeconds is -1 where the process's CPU time is not known (the benchmarks then leave out
// their cpu-ms/op metric).
func cpuSeconds() float64 { return -1 }
