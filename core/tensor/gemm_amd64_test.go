//go:build amd64 && !purego

package tensor

import (
	"math"
	"math/rand/v2"
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

// A kernel's one-row variant (row1) gives the bits of row 0 of its full tile, for depths
// from 1 to past the unrolled loop's turns and up to kc, on slivers whose other rows hold
// values (which must not leak in), and with NaN and Inf in A and B propagating as they do.
func TestGemmRow1(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kern := range gemmKernels() {
		if kern.row1 == nil {
			continue
		}
		mr, nr := kern.mr, kern.nr
		for _, kc := range []int{1, 2, 3, 4, 5, 7, 8, 9, 63, 255, 256} {
			a, b := randSlice(rng, mr*kc, 1), randSlice(rng, nr*kc, 1)
			if kc == 9 {
				a[4*mr] = float32(math.Inf(1))
				b[2*nr+3] = float32(math.NaN())
			}
			full := make([]float32, mr*nr)
			kern.fn(kc, a, b, full, nr, 0)
			row := randSlice(rng, nr, 1) // overwritten
			kern.row1(kc, a, b, row)
			for j := range row {
				if math.Float32bits(row[j]) != math.Float32bits(full[j]) {
					t.Fatalf("%s kc=%d: row1 c[%d] = %g, the full kernel's row 0 %g", kern.name, kc, j, row[j], full[j])
				}
			}
		}
	}
}
