package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"
)

// GemmPackedB with a weight packed once gives the bits of Gemm(false, true, …) with the raw
// weight, for every kernel of this build, one goroutine and two, across the blocking's edges
// (k past kc, n past nc, m past mc, ragged tiles), strided operands, and alpha and beta; and
// both stay near the plain triple loop.
func TestGemmPackedB(t *testing.T) {
	tests := []struct {
		m, n, k     int
		lda, ldc    int // 0: dense
		alpha, beta float32
	}{
		{1, 1, 1, 0, 0, 1, 0},
		{3, 5, 7, 0, 0, 1, 0},
		{16, 128, 128, 0, 0, 1, 0},
		{1, 600, 64, 0, 0, 1, 0},     // one row through a decoder-like weight, n past nc
		{17, 100, 300, 0, 0, 0.5, 0}, // k past kc
		{130, 520, 260, 0, 0, 1, 0},  // every dimension past its block
		{9, 33, 40, 45, 37, 2, 0.5},  // strided, beta
		{40, 9, 70, 0, 0, 1, 1},      // splits by rows (m > n)
		// Split by columns with A packed once and shared (packSharedA): a weight past 1 MiB
		// with ragged rows and two depth blocks, then short A over three depth blocks.
		{70, 1100, 300, 310, 1110, 0.5, 0.25},
		{9, 40, 600, 0, 0, 1, 0},
		// Weights of packedAheadMin floats or more (slivers asked for ahead): ragged rows
		// read in place, then packed (alpha), past mc, and rows split.
		{70, 1100, 600, 0, 0, 1, 0},
		{40, 1200, 520, 0, 0, 0.5, 0.5},
		{150, 800, 800, 0, 0, 1, 0},
		{900, 780, 760, 0, 0, 1, 0},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float32 { return randSlice(rng, n, 1) }
	for _, tc := range tests {
		lda, ldc := max(tc.lda, tc.k), max(tc.ldc, tc.n)
		a, w, c0 := fill(tc.m*lda), fill(tc.n*tc.k), fill(tc.m*ldc)
		ref := append([]float32(nil), c0...)
		gemmRef(false, true, tc.m, tc.n, tc.k, tc.alpha, a, lda, w, tc.k, tc.beta, ref, ldc)
		for _, kern := range gemmKernels() {
			pb := packTransB(kern, w, tc.n, tc.k)
			for _, threads := range []int{1, 2, 3} {
				want := append([]float32(nil), c0...)
				gemmWith(kern, threads, false, true, tc.m, tc.n, tc.k, tc.alpha, a, lda, w, tc.k, tc.beta, want, ldc)
				got := append([]float32(nil), c0...)
				gemmPackedWith(threads, tc.m, tc.alpha, a, lda, pb, tc.beta, got, ldc, epilogue{})
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%dx%dx%d %s, %d goroutines: C[%d] = %g packed, %g with Gemm", tc.m, tc.n, tc.k, kern.name, threads, i, got[i], want[i])
					}
					if d := math.Abs(float64(got[i] - ref[i])); d > 1e-4*float64(tc.k) {
						t.Fatalf("%dx%dx%d %s: C[%d] = %g, triple loop %g", tc.m, tc.n, tc.k, kern.name, i, got[i], ref[i])
					}
				}
			}
		}
	}
}

// With a weight marked streamed (SetStreamed) of packedAheadMin floats or more and enough
// rows, the GEMM asks for every sliver of the packed weight but the first one before the
// kernel first reads it, once each, and for nothing outside the weight; a smaller weight,
// fewer rows or a weight not marked ask for nothing.
// The drivers are checked with a recording prefetch on every kernel of this build, the
// pure-Go one included, one goroutine and two.
func TestGemmPackedAhead(t *testing.T) {
	tests := []struct {
		m, n, k int
		alpha   float32
	}{
		{64, 1100, 600, 1},     // two depth blocks (k past kc), three column blocks
		{70, 1200, 520, 1},     // ragged rows: the full tiles ask, in place or packed
		{40, 1000, 800, 0.5},   // A packed (alpha): gemmMacro asks
		{150, 800, 800, 1},     // past mc: the first row block asks
		{64, 700, 700, 1},      // under packedAheadMin: no asking
		{3, 30522 / 4, 256, 1}, // one tile a sliver: no asking
		{20, 1000, 700, 1},     // two or three tiles a sliver with AVX, ten with Go's 2x4
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range tests {
		a, w := randSlice(rng, tc.m*tc.k, 1), randSlice(rng, tc.n*tc.k, 1)
		for _, base := range gemmKernels() {
			for _, mode := range []int{1, 2, 0} { // goroutines; 0: one, without SetStreamed
				threads, streamed := max(mode, 1), mode > 0
				kern := *base
				var pb *PackedB
				asked := map[int]bool{} // cache-line-sized runs of 16 floats, by their offset
				offset := func(p []float32) int {
					return int(uintptr(unsafe.Pointer(unsafe.SliceData(p)))-uintptr(unsafe.Pointer(unsafe.SliceData(pb.data)))) / 4
				}
				var fail string
				var mu sync.Mutex // the goroutines' strips
				kern.prefetch = func(p []float32) {
					mu.Lock()
					defer mu.Unlock()
					o := offset(p)
					if o < 0 || o+len(p) > len(pb.data) || o%16 != 0 {
						fail = fmt.Sprintf("asked for %d floats at %d of %d: outside the weight or not from a line's start", len(p), o, len(pb.data))
						return
					}
					for i := o; i < o+len(p); i += 16 {
						if asked[i] {
							fail = "asked for a line twice"
						}
						asked[i] = true
					}
				}
				seen := map[int]int{} // the slivers read: their lengths by offset
				// A sliver is read first with all of it asked for, or (the first of each
				// goroutine's strip) none of it.
				unasked := 0
				read := func(b []float32) {
					mu.Lock()
					defer mu.Unlock()
					o := offset(b)
					if seen[o] > 0 {
						return
					}
					seen[o] = len(b)
					n := 0
					for i := o; i < o+len(b); i += 16 {
						if asked[i] {
							n++
						}
					}
					if n == 0 {
						unasked++
					} else if n*16 < len(b) && fail == "" {
						fail = fmt.Sprintf("the sliver at %d read with %d of its %d lines asked for", o, n, len(b)/16)
					}
				}
				if fn := base.fn; fn != nil {
					kern.fn = func(kc int, a, b, c []float32, ldc int, beta float32) { read(b); fn(kc, a, b, c, ldc, beta) }
				}
				if fn := base.fnA; fn != nil {
					kern.fnA = func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32) {
						read(b)
						fn(kc, a, lda, b, c, ldc, beta)
					}
				}
				if fn := base.fnAAhead; fn != nil {
					ask := kern.prefetch // the recording above: the kernel asks as it goes
					kern.fnAAhead = func(kc int, a []float32, lda int, b, c []float32, ldc int, beta float32, ahead []float32) {
						read(b)
						ask(ahead)
						fn(kc, a, lda, b, c, ldc, beta, ahead)
					}
				}
				if fn := base.row1; fn != nil {
					kern.row1 = func(kc int, a, b, c []float32) { read(b); fn(kc, a, b, c) }
				}
				kern.col, kern.colA = nil, nil // tile by tile, as the kernels that ask ahead run
				pb = packTransB(&kern, w, tc.n, tc.k)
				if !streamed {
					if pb.Streamed() {
						t.Fatalf("a weight packed is marked streamed before SetStreamed")
					}
				} else {
					pb.SetStreamed(true)
				}
				want := make([]float32, tc.m*tc.n)
				gemmWith(base, 1, false, true, tc.m, tc.n, tc.k, tc.alpha, a, tc.k, w, tc.k, 0, want, tc.n)
				got := make([]float32, tc.m*tc.n)
				gemmPackedWith(threads, tc.m, tc.alpha, a, tc.k, pb, 0, got, tc.n, epilogue{})
				name := fmt.Sprintf("%dx%dx%d %s, %d goroutines, SetStreamed %v", tc.m, tc.n, tc.k, kern.name, threads, streamed)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: C[%d] = %g, %g without asking ahead", name, i, got[i], want[i])
					}
				}
				if fail != "" {
					t.Fatalf("%s: %s", name, fail)
				}
				if !(streamed && tc.n*tc.k >= packedAheadMin && min(tc.m, kern.mc)/kern.mr >= aheadTiles) {
					if len(asked) != 0 {
						t.Fatalf("%s: asked for %d lines; want none", name, len(asked))
					}
					continue
				}
				// Every sliver is read; all but the first of each goroutine's strip were
				// asked for (each line once, checked above).
				lines := 0
				for o, n := range seen {
					for i := o; i < o+n; i += 16 {
						if asked[i] {
							lines++
						}
					}
				}
				if lines != len(asked) || len(asked) == 0 {
					t.Fatalf("%s: %d lines asked for, %d of them in the %d slivers read", name, len(asked), lines, len(seen))
				}
				if threads == 1 && unasked != 1 || unasked > threads {
					t.Fatalf("%s: %d slivers read without being asked for; want 1 a goroutine", name, unasked)
				}
			}
		}
	}
}

// Unpack gives back the packed weight bit for bit, for every kernel of this build, across
// ragged slivers and depth blocks (k past kc), and leaves nothing past N×K touched.
func TestPackedBUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][2]int{{1, 1}, {3, 7}, {17, 5}, {33, 300}, {100, 600}, {1100, 257}} {
		n, k := s[0], s[1]
		w := randSlice(rng, n*k, 1)
		for _, kern := range gemmKernels() {
			pb := packTransB(kern, w, n, k)
			got := make([]float32, n*k+3)
			got[n*k], got[n*k+1], got[n*k+2] = 7, 8, 9
			pb.Unpack(got)
			for i := range w {
				if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
					t.Fatalf("%dx%d %s: w[%d] = %g unpacked, %g packed", n, k, kern.name, i, got[i], w[i])
				}
			}
			if got[n*k] != 7 || got[n*k+1] != 8 || got[n*k+2] != 9 {
				t.Fatalf("%dx%d %s: Unpack wrote past the weight: %v", n, k, kern.name, got[n*k:])
			}
		}
	}
}

// LinearPacked equals Linear bit for bit, bias and all.
func TestLinearPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const m, in, out = 7, 96, 50
	x, w, b := make([]float32, m*in), make([]float32, out*in), make([]float32, out)
	for _, s := range [][]float32{x, w, b} {
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
	}
	want, got := make([]float32, m*out), make([]float32, m*out)
	MatMulTransB(want, x, w, m, in, out)
	AddBias(want, b, out)
	LinearPacked(got, x, PackTransB(w, out, in), b, m)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("y[%d] = %g packed, %g with MatMulTransB and AddBias", i, got[i], want[i])
		}
	}
}

// LinearPackedAct, whose goroutines each add the bias and apply the activation to their own
// strip (by columns, or by rows when m > n), gives the bits of Linear followed by the
// activation over all of y, for one to three goroutines, with and without a bias, and the
// activation nil, GELU and Tanh, on shapes whose strips end inside a vector.
func TestLinearPackedAct(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	fill := func(n int) []float32 { return randSlice(rng, n, 1) }
	acts := []struct {
		name string
		f    func([]float32)
	}{{"none", nil}, {"gelu", GELU}, {"tanh", Tanh}}
	for _, sh := range []struct{ m, in, out int }{{1, 5, 3}, {7, 96, 50}, {16, 128, 512}, {130, 70, 37}, {33, 64, 200}} {
		x, w, b := fill(sh.m*sh.in), fill(sh.out*sh.in), fill(sh.out)
		pb := PackTransB(w, sh.out, sh.in)
		for _, bias := range [][]float32{nil, b} {
			for _, act := range acts {
				want := make([]float32, sh.m*sh.out)
				MatMulTransB(want, x, w, sh.m, sh.in, sh.out)
				if bias != nil {
					AddBias(want, bias, sh.out)
				}
				if act.f != nil {
					act.f(want)
				}
				for threads := 1; threads <= 3; threads++ {
					got := fill(sh.m * sh.out) // overwritten: beta is 0
					ep := epilogue{bias: bias, act: act.f}
					gemmPackedWith(threads, sh.m, 1, x, sh.in, pb, 0, got, sh.out, ep)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%dx%dx%d bias %v act %s, %d goroutines: y[%d] = %g, want %g",
								sh.m, sh.in, sh.out, bias != nil, act.name, threads, i, got[i], want[i])
						}
					}
				}
				got := make([]float32, sh.m*sh.out)
				LinearPackedAct(got, x, pb, bias, sh.m, act.f)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("LinearPackedAct %dx%dx%d: y[%d] = %g, want %g", sh.m, sh.in, sh.out, i, got[i], want[i])
					}
				}
			}
		}
	}
}
