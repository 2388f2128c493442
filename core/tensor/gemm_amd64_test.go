//go:build amd64 && !purego

package tensor

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestGemmKernelSelection checks that every assembly kernel the CPU can run is in the list
// the other tests walk, fastest first, and says which ones this machine cannot test.
func TestGemmKernelSelection(t *testing.T) {
	want := []*gemmKernel{}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX2 {
		want = append(want, gemmAVX512)
	} else {
		t.Logf("%s not tested here: the CPU lacks AVX-512F", gemmAVX512.name)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		want = append(want, gemmAVX2)
	} else {
		t.Logf("%s not tested here: the CPU lacks AVX2 or FMA", gemmAVX2.name)
	}
	want = append(want, gemmGo2x4)
	got := gemmKernels()
	if len(got) != len(want) {
		t.Fatalf("gemmKernels() has %d kernels, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("gemmKernels()[%d] = %s, want %s", i, got[i].name, want[i].name)
		}
	}
	for _, k := range []*gemmKernel{gemmAVX512, gemmAVX2} {
		if k.mc%k.mr != 0 || k.nc%k.nr != 0 {
			t.Errorf("%s: blocking mc %d, nc %d is not a whole number of %dx%d tiles", k.name, k.mc, k.nc, k.mr, k.nr)
		}
	}
	if gemmDefault != want[0] {
		t.Errorf("Gemm uses %s, want %s", gemmDefault.name, want[0].name)
	}
}
