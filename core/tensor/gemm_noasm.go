//go:build (!amd64 && !(wasm && goexperiment.simd)) || purego

package tensor

// gemmKernels lists the micro-kernels this build can run, fastest first.
func gemmKernels() []*gemmKernel {
	return []*gemmKernel{gemmGo2x4}
}
