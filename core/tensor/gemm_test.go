package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// gemmPath is one way of computing a GEMM; every path must agree with the float64 reference
// loop, with gemmRef and with gonum's independent blas32.Gemm.
type gemmPath struct {
	name string
	run  func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// gemmPaths lists the paths to test: every kernel this CPU runs, on 1 to 3 goroutines, and
// Gemm itself; with all, also tiny blockings and the tile shapes of other CPUs' kernels
// (too slow for the largest shapes).
func gemmPaths(all bool) []gemmPath {
	var ps []gemmPath
	add := func(kern *gemmKernel, threads int) {
		ps = append(ps, gemmPath{
			name: fmt.Sprintf("%s/kc=%d,mc=%d,nc=%d/threads=%d", kern.name, kern.kc, kern.mc, kern.nc, threads),
			run: func(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
				gemmWith(kern, threads, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			},
		})
	}
	// tiny gives a kernel blocks so small that small shapes go through every loop of the
	// driver: several depth blocks (the later ones add to C), row blocks and column panels.
	tiny := func(kern *gemmKernel) *gemmKernel {
		t := *kern
		t.kc, t.mc, t.nc = 5, 2*kern.mr, 3*kern.nr
		return &t
	}
	threadCounts := []int{1, 2, 3}
	if runtime.GOARCH == "wasm" {
		threadCounts = threadCounts[:2] // goroutines take turns on one thread: 2 is enough
	}
	for _, kern := range gemmKernels() {
		for _, threads := range threadCounts {
			add(kern, threads)
		}
		if all {
			add(tiny(kern), 1)
			add(tiny(kern), 2)
		}
	}
	if !all {
		return append(ps, gemmPath{name: "Gemm", run: Gemm})
	}
	// The driver with the tile shapes of kernels this CPU may lack (AVX-512 8×32 on a machine
	// without it), run by a plain loop kernel.
	for _, g := range [][2]int{{8, 32}, {6, 16}, {3, 5}} {
		kern := &gemmKernel{name: fmt.Sprintf("loop-%dx%d", g[0], g[1]), mr: g[0], nr: g[1],
			kc: 256, mc: 16 * g[0], nc: 64 * g[1], fn: gemmKernelLoop(g[0], g[1])}
		add(kern, 1)
		add(tiny(kern), 1)
		add(tiny(kern), 2)
		if g[0]%8 == 0 {
			// The packing of the AVX-512 kernel, with the transpose's Go twin.
			withT := *kern
			withT.name += "+transpose8"
			withT.trans8 = gemmTranspose8Go
			add(&withT, 1)
			withT.kc = 13
			add(&withT, 1)
		}
	}
	return append(ps, gemmPath{name: "Gemm", run: Gemm})
}

// gemmKernelLoop is a micro-kernel for any mr×nr tile written as the reference loop.
func gemmKernelLoop(mr, nr int) func(kc int, a, b, c []float32, ldc int, beta float32) {
	return func(kc int, a, b, c []float32, ldc int, beta float32) {
		for i := 0; i < mr; i++ {
			for j := 0; j < nr; j++ {
				var s float32
				for p := 0; p < kc; p++ {
					s += a[p*mr+i] * b[p*nr+j]
				}
				if beta == 0 {
					c[i*ldc+j] = s
				} else {
					c[i*ldc+j] = s + beta*c[i*ldc+j]
				}
			}
		}
	}
}

// gemmGonum runs gonum's blas32.Gemm on the same operands.
func gemmGonum(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	tr := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	blas32.Gemm(tr(transA), tr(transB), alpha,
		blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta,
		blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// gemmProblem is one GEMM with its operands laid out in larger buffers: each matrix starts at
// offset off, rows are pad elements longer than needed, and sentinels fill everything else.
type gemmProblem struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	nanC           bool // C starts as NaN (only meaningful with beta 0)
	a, b, c0       []float32
	lda, ldb, ldc  int
	off            int
	want           []float64 // float64 reference for the [m, n] window
	bound          []float64 // error bound per element: the rounding of k products and sums
}

const gemmSentinel = -777.25

func newGemmProblem(rng *rand.Rand, transA, transB bool, m, n, k int, alpha, beta float32, pad, off int, nanC bool) *gemmProblem {
	p := &gemmProblem{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta, nanC: nanC, off: off}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	p.lda, p.ldb, p.ldc = max(1, ac+pad), max(1, bc+pad), max(1, n+pad)
	fill := func(rows, cols, ld int, val func() float32) []float32 {
		s := make([]float32, off+rows*ld+off)
		for i := range s {
			s[i] = gemmSentinel
		}
		for r := 0; r < rows; r++ {
			for j := 0; j < cols; j++ {
				s[off+r*ld+j] = val()
			}
		}
		return s
	}
	uni := func() float32 { return float32(rng.Float64()*2 - 1) }
	p.a = fill(ar, ac, p.lda, uni)
	p.b = fill(br, bc, p.ldb, uni)
	p.c0 = fill(m, n, p.ldc, func() float32 {
		if nanC {
			return float32(math.NaN())
		}
		return uni()
	})
	// Dense float64 copies of op(A) [m, k] and op(B)ᵀ [n, k] keep the reference loop simple.
	opA := make([]float64, m*k)
	opBT := make([]float64, n*k)
	for i := 0; i < m; i++ {
		for q := 0; q < k; q++ {
			if transA {
				opA[i*k+q] = float64(p.a[off+q*p.lda+i])
			} else {
				opA[i*k+q] = float64(p.a[off+i*p.lda+q])
			}
		}
	}
	for j := 0; j < n; j++ {
		for q := 0; q < k; q++ {
			if transB {
				opBT[j*k+q] = float64(p.b[off+j*p.ldb+q])
			} else {
				opBT[j*k+q] = float64(p.b[off+q*p.ldb+j])
			}
		}
	}
	p.want = make([]float64, m*n)
	p.bound = make([]float64, m*n)
	const u = 1.0 / (1 << 24) // float32 unit roundoff
	for i := 0; i < m; i++ {
		ai := opA[i*k : i*k+k]
		for j := 0; j < n; j++ {
			bj := opBT[j*k : j*k+k]
			var s, sa float64
			for q, av := range ai {
				s += av * bj[q]
				sa += math.Abs(av * bj[q])
			}
			w := float64(alpha) * s
			mag := math.Abs(float64(alpha)) * sa
			if beta != 0 {
				cv := float64(p.c0[off+i*p.ldc+j])
				w += float64(beta) * cv
				mag += math.Abs(float64(beta) * cv)
			}
			p.want[i*n+j] = w
			p.bound[i*n+j] = 2*float64(k+4)*u*mag + 1e-30
		}
	}
	return p
}

func (p *gemmProblem) String() string {
	return fmt.Sprintf("m=%d,n=%d,k=%d,tA=%v,tB=%v,alpha=%v,beta=%v,lda=%d,ldb=%d,ldc=%d,off=%d,nanC=%v",
		p.m, p.n, p.k, p.transA, p.transB, p.alpha, p.beta, p.lda, p.ldb, p.ldc, p.off, p.nanC)
}

// run computes the problem with f into a fresh copy of C and checks the window against the
// float64 reference and everything else against the sentinels. It returns the window.
func (p *gemmProblem) run(t *testing.T, name string, f func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)) []float32 {
	t.Helper()
	c := append([]float32(nil), p.c0...)
	a := append([]float32(nil), p.a...)
	b := append([]float32(nil), p.b...)
	f(p.transA, p.transB, p.m, p.n, p.k, p.alpha, a[p.off:], p.lda, b[p.off:], p.ldb, p.beta, c[p.off:], p.ldc)
	win := make([]float32, p.m*p.n)
	bad := 0
	for idx := range c {
		r, col := (idx-p.off)/p.ldc, (idx-p.off)%p.ldc
		inside := idx >= p.off && r < p.m && col < p.n
		if !inside {
			if math.Float32bits(c[idx]) != math.Float32bits(p.c0[idx]) {
				if bad++; bad <= 5 {
					t.Errorf("%s %v: C[%d] outside the window changed from %v to %v", name, p, idx, p.c0[idx], c[idx])
				}
			}
			continue
		}
		got := c[idx]
		win[r*p.n+col] = got
		want, bound := p.want[r*p.n+col], p.bound[r*p.n+col]
		if d := math.Abs(float64(got) - want); !(d <= bound) {
			if bad++; bad <= 5 {
				t.Errorf("%s %v: C(%d,%d) = %v, want %v (|diff| %.3g > bound %.3g)", name, p, r, col, got, want, d, bound)
			}
		}
	}
	if !equalF32(a, p.a) || !equalF32(b, p.b) {
		t.Errorf("%s %v: A or B was written", name, p)
	}
	return win
}

func equalF32(x, y []float32) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return false
		}
	}
	return true
}

// agree checks two windows against each other within the sum of their error bounds.
func (p *gemmProblem) agree(t *testing.T, name, peer string, got, ref []float32) {
	t.Helper()
	for i := range got {
		if d := math.Abs(float64(got[i]) - float64(ref[i])); !(d <= 2*p.bound[i]) {
			t.Errorf("%s vs %s %v: element %d: %v vs %v", name, peer, p, i, got[i], ref[i])
			return
		}
	}
}

type gemmShape struct{ m, n, k int }

type gemmParams struct {
	alpha, beta float32
	pad, off    int
	nanC        bool
}

func checkGemm(t *testing.T, rng *rand.Rand, paths []gemmPath, shapes []gemmShape, params []gemmParams) {
	for _, s := range shapes {
		for _, pr := range params {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					p := newGemmProblem(rng, tA, tB, s.m, s.n, s.k, pr.alpha, pr.beta, pr.pad, pr.off, pr.nanC)
					ref := p.run(t, "gemmRef", gemmRef)
					gon := p.run(t, "gonum", gemmGonum)
					for _, path := range paths {
						got := p.run(t, path.name, path.run)
						p.agree(t, path.name, "gemmRef", got, ref)
						p.agree(t, path.name, "gonum", got, gon)
					}
				}
			}
		}
	}
}

func TestGemmSmallShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := []gemmShape{
		{0, 0, 0}, {0, 3, 2}, {3, 0, 2}, {2, 3, 0}, {1, 1, 1}, {3, 5, 7}, {2, 4, 1}, {8, 32, 3},
		{6, 16, 5}, {9, 33, 2}, {7, 15, 300}, {13, 17, 19}, {31, 37, 41}, {1, 300, 1}, {300, 1, 2},
	}
	params := []gemmParams{
		{alpha: 1, beta: 0, nanC: true},
		{alpha: 1, beta: 1, off: 1},
		{alpha: -0.75, beta: 0.5, pad: 3, off: 3},
		{alpha: 2, beta: 0, pad: 5, off: 1, nanC: true},
		{alpha: 0, beta: 0.5, pad: 1, off: 1},
		{alpha: 0, beta: 0, pad: 2, nanC: true},
	}
	checkGemm(t, rng, gemmPaths(true), shapes, params)
}

func TestGemmLargeShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("large shapes skipped in -short mode")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	params := []gemmParams{{alpha: 1.5, beta: 0.5, pad: 3, off: 3}}
	checkGemm(t, rng, gemmPaths(true), []gemmShape{{257, 65, 129}}, params)
	checkGemm(t, rng, gemmPaths(false), []gemmShape{{65, 300, 520}, {128, 768, 768}}, params)
	checkGemm(t, rng, gemmPaths(false), []gemmShape{{257, 65, 129}}, []gemmParams{{alpha: 1, beta: 0, pad: 1, off: 1, nanC: true}})
}

// TestGemmHeadSlice multiplies one attention head's columns of [S, H] matrices, as
// bert's self-attention does: A and B are strided views (lda = ldb = H) that end before the
// full rows of the underlying slice.
func TestGemmHeadSlice(t *testing.T) {
	const S, H, d = 19, 48, 16
	rng := rand.New(rand.NewPCG(5, 6))
	q := make([]float32, S*H)
	kk := make([]float32, S*H)
	for i := range q {
		q[i] = float32(rng.Float64()*2 - 1)
		kk[i] = float32(rng.Float64()*2 - 1)
	}
	for head := 0; head < H/d; head++ {
		off := head * d
		want := make([]float32, S*S)
		gemmRef(false, true, S, S, d, 0.25, q[off:], H, kk[off:], H, 0, want, S)
		for _, path := range gemmPaths(true) {
			got := make([]float32, S*S)
			path.run(false, true, S, S, d, 0.25, q[off:], H, kk[off:], H, 0, got, S)
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5 {
					t.Fatalf("%s head %d: element %d: %v, want %v", path.name, head, i, got[i], want[i])
				}
			}
		}
	}
}

func TestGemmWrappers(t *testing.T) {
	const m, k, n = 5, 7, 3
	rng := rand.New(rand.NewPCG(7, 8))
	rnd := func(size int) []float32 {
		s := make([]float32, size)
		for i := range s {
			s[i] = float32(rng.Float64()*2 - 1)
		}
		return s
	}
	a, b, bT, aT, bias := rnd(m*k), rnd(k*n), rnd(n*k), rnd(k*m), rnd(n)
	check := func(name string, got, want []float32) {
		t.Helper()
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-5 {
				t.Errorf("%s: element %d: %v, want %v", name, i, got[i], want[i])
				return
			}
		}
	}
	got, want := make([]float32, m*n), make([]float32, m*n)
	MatMul(got, a, b, m, k, n)
	gemmRef(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
	check("MatMul", got, want)
	MatMulTransB(got, a, bT, m, k, n)
	gemmRef(false, true, m, n, k, 1, a, k, bT, k, 0, want, n)
	check("MatMulTransB", got, want)
	MatMulTransA(got, aT, b, m, k, n)
	gemmRef(true, false, m, n, k, 1, aT, m, b, n, 0, want, n)
	check("MatMulTransA", got, want)
	Linear(got, a, bT, bias, m, k, n)
	gemmRef(false, true, m, n, k, 1, a, k, bT, k, 0, want, n)
	AddBias(want, bias, n)
	check("Linear", got, want)
	Linear(got, a, bT, nil, m, k, n)
	gemmRef(false, true, m, n, k, 1, a, k, bT, k, 0, want, n)
	check("Linear without bias", got, want)
}

// Linear's bias, added by each goroutine to its strip of y (the GEMM's output pass), gives the
// bits of MatMulTransB then AddBias, for every kernel, on 1-3 goroutines, split by rows and by
// columns, over ragged tiles and depth blocks.
func TestLinearBiasInStrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range []struct{ m, in, out int }{{1, 1, 1}, {3, 5, 7}, {40, 9, 70}, {70, 300, 9}, {130, 260, 520}, {128, 64, 256}} {
		x, w, bias := randSlice(rng, sh.m*sh.in, 1), randSlice(rng, sh.out*sh.in, 1), randSlice(rng, sh.out, 1)
		for _, kern := range gemmKernels() {
			want := make([]float32, sh.m*sh.out)
			gemmWith(kern, 1, false, true, sh.m, sh.out, sh.in, 1, x, sh.in, w, sh.in, 0, want, sh.out)
			AddBias(want, bias, sh.out)
			for threads := 1; threads <= 3; threads++ {
				got := randSlice(rng, sh.m*sh.out, 1) // overwritten: beta is 0
				gemmWithEp(kern, threads, false, true, sh.m, sh.out, sh.in, 1, x, sh.in, w, sh.in, 0, got, sh.out, epilogue{bias: bias})
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%dx%dx%d %s, %d goroutines: y[%d] = %g, want %g", sh.m, sh.in, sh.out, kern.name, threads, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func TestGemmPanicsOnShortSlices(t *testing.T) {
	ok := make([]float32, 12)
	cases := []struct {
		name    string
		a, b, c []float32
		m, n, k int
	}{
		{"short A", ok[:5], ok, ok, 2, 3, 3},
		{"short B", ok, ok[:8], ok, 2, 3, 3},
		{"short C", ok, ok, ok[:5], 2, 3, 3},
		{"negative", ok, ok, ok, -1, 3, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			Gemm(false, false, tc.m, tc.n, tc.k, 1, tc.a, max(1, tc.k), tc.b, max(1, tc.n), 0, tc.c, max(1, tc.n))
		})
	}
}

// TestGemmNoAllocs checks that packing buffers and the goroutines' job are reused: a call,
// on one goroutine or split over several, allocates nothing in steady state.
func TestGemmNoAllocs(t *testing.T) {
	const m, k, n = 33, 70, 45
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, kern := range gemmKernels() {
		for _, threads := range []int{1, 2, 3} {
			allocs := testing.AllocsPerRun(20, func() {
				gemmWith(kern, threads, false, true, m, n, k, 1, a, k, b, k, 0, c, n)
			})
			if allocs >= 1 {
				t.Errorf("%s, %d goroutines: %v allocations per call", kern.name, threads, allocs)
			}
		}
	}
}

// TestGemmKernelsTile compares each micro-kernel with the reference loop on random packed
// slivers, for every beta mode, with ldc larger than the tile.
func TestGemmKernelsTile(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, kern := range gemmKernels() {
		if kern.mc%kern.mr != 0 || kern.nc%kern.nr != 0 {
			t.Errorf("%s: mc %d is not a multiple of mr %d or nc %d of nr %d", kern.name, kern.mc, kern.mr, kern.nc, kern.nr)
		}
		for _, kc := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 33, 256} {
			for _, beta := range []float32{0, 1, -0.5} {
				mr, nr, ldc := kern.mr, kern.nr, kern.nr+3
				a := make([]float32, mr*kc)
				b := make([]float32, nr*kc)
				for i := range a {
					a[i] = float32(rng.Float64()*2 - 1)
				}
				for i := range b {
					b[i] = float32(rng.Float64()*2 - 1)
				}
				c := make([]float32, mr*ldc)
				for i := range c {
					c[i] = float32(rng.Float64()*2 - 1)
					if beta == 0 {
						c[i] = float32(math.NaN())
					}
				}
				c0 := append([]float32(nil), c...)
				kern.fn(kc, a, b, c, ldc, beta)
				for i := 0; i < mr; i++ {
					for j := 0; j < ldc; j++ {
						got := c[i*ldc+j]
						if j >= nr {
							if math.Float32bits(got) != math.Float32bits(c0[i*ldc+j]) {
								t.Fatalf("%s kc=%d beta=%v: C(%d,%d) outside the tile written", kern.name, kc, beta, i, j)
							}
							continue
						}
						var s, sa float64
						for p := 0; p < kc; p++ {
							s += float64(a[p*mr+i]) * float64(b[p*nr+j])
							sa += math.Abs(float64(a[p*mr+i]) * float64(b[p*nr+j]))
						}
						if beta != 0 {
							s += float64(beta) * float64(c0[i*ldc+j])
							sa += math.Abs(float64(beta) * float64(c0[i*ldc+j]))
						}
						if d := math.Abs(float64(got) - s); !(d <= 2*float64(kc+3)*sa/(1<<24)+1e-30) {
							t.Fatalf("%s kc=%d beta=%v: C(%d,%d) = %v, want %v", kern.name, kc, beta, i, j, got, s)
						}
					}
				}
			}
		}
	}
}

// TestGemmTranspose8 compares each kernel's packing transpose with gemmTranspose8Go.
func TestGemmTranspose8(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kern := range gemmKernels() {
		if kern.trans8 == nil {
			continue
		}
		for _, n := range []int{0, 8, 16, 24, 256} {
			for _, ld := range [][2]int{{8, n}, {16, n + 3}, {32, n + 1}, {6 + 8, 777}} {
				ldd, lds := ld[0], max(ld[1], n)
				src := make([]float32, 7*lds+n+5)
				for i := range src {
					src[i] = float32(rng.Float64())
				}
				size := 8
				if n > 0 {
					size = (n-1)*ldd + 8 + 3
				}
				want := make([]float32, size)
				got := make([]float32, size)
				for i := range want {
					want[i] = gemmSentinel
					got[i] = gemmSentinel
				}
				gemmTranspose8Go(want, src[1:], ldd, lds, n)
				kern.trans8(got, src[1:], ldd, lds, n)
				if !equalF32(got, want) {
					t.Errorf("%s: n=%d ldd=%d lds=%d: transpose differs from gemmTranspose8Go", kern.name, n, ldd, lds)
				}
			}
		}
	}
}

// unwritten is a packing destination of n floats, each -1: every element must be written.
func unwritten(n int) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = -1
	}
	return d
}

// checkSlivers fails t unless packed holds want(s, p, x) bit for bit at s*w*kb + p*w + x for
// every sliver s of width w and depth kb (p < kb, x < w).
func checkSlivers(t *testing.T, name string, packed []float32, w, kb int, want func(s, p, x int) float32) {
	t.Helper()
	for s := 0; s < len(packed)/(w*kb); s++ {
		for p := 0; p < kb; p++ {
			for x := 0; x < w; x++ {
				if got, wt := packed[s*w*kb+p*w+x], want(s, p, x); math.Float32bits(got) != math.Float32bits(wt) {
					t.Fatalf("%s: sliver %d (p %d, %d) = %g, want %g", name, s, p, x, got, wt)
				}
			}
		}
	}
}

// stridedOperand stores an [r, c] operand row-major, or its transpose [c, r] when trans, with
// rows 3 floats longer than the matrix (the stride matters), element i of the storage
// fill(i); it returns the storage, its row stride and element (x, y) of the operand.
func stridedOperand(r, c int, trans bool, fill func(i int) float32) ([]float32, int, func(x, y int) float32) {
	rows, ld := r, c+3
	if trans {
		rows, ld = c, r+3
	}
	d := make([]float32, rows*ld)
	for i := range d {
		d[i] = fill(i)
	}
	return d, ld, func(x, y int) float32 {
		if trans {
			return d[y*ld+x]
		}
		return d[x*ld+y]
	}
}

// TestGemmPackB checks the packing of B against its definition, for every sliver width the
// kernels use (4, 16, 32; 8 takes the generic path) whether or not this CPU runs that kernel:
// sliver s holds op(B)(p0+p, j0+s*nr+j) at s*nr*kb + p*nr + j, zero past nb.
func TestGemmPackB(t *testing.T) {
	for _, nr := range []int{4, 8, 16, 32} {
		for _, transB := range []bool{false, true} {
			for _, sz := range []struct{ k, n, p0, j0, kb, nb int }{
				{1, 1, 0, 0, 1, 1},
				{7, 5, 0, 0, 7, 5},
				{40, 70, 3, 5, 33, 64},
				{300, 97, 10, 1, 256, 96},
				{64, 200, 0, 8, 64, 192},
			} {
				b, ldb, opB := stridedOperand(sz.k, sz.n, transB, func(i int) float32 { return float32(i%1009) + 0.5 })
				slivers := ceilDiv(sz.nb, nr)
				// The pure-Go packing with and without the 8x8 transpose, and each kernel's own
				// (its machine's transpose and row packing).
				packers := append([]*gemmKernel{{name: "go"}, {name: "go-trans8", trans8: gemmTranspose8Go}}, gemmKernels()...)
				for _, pk := range packers {
					dst := unwritten(slivers * nr * sz.kb)
					gemmPackB(pk, dst, transB, b, ldb, sz.p0, sz.j0, sz.kb, sz.nb, nr)
					checkSlivers(t, fmt.Sprintf("nr %d transB %v packing %s %+v", nr, transB, pk.name, sz), dst, nr, sz.kb, func(s, p, j int) float32 {
						if col := s*nr + j; col < sz.nb {
							return opB(sz.p0+p, sz.j0+col)
						}
						return 0
					})
				}
			}
		}
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

// TestGemmSplitSameBits checks that a product split over goroutines gives the bits of one
// goroutine, for C split by rows and by columns (each strip packing the operand it shares with
// the others on its own), transposed or not, over several depth, row and column blocks: the
// training step's gradients must not depend on the number of threads.
func TestGemmSplitSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	shapes := []gemmShape{{37, 11, 23}, {11, 37, 23}, {70, 45, 600}, {45, 70, 600}, {146, 128, 700}, {300, 33, 9}}
	for _, kern := range gemmKernels() {
		small := *kern
		small.kc, small.mc, small.nc = 7, 2*kern.mr, 2*kern.nr
		for _, kn := range []*gemmKernel{kern, &small} {
			for _, s := range shapes {
				for _, tA := range []bool{false, true} {
					for _, tB := range []bool{false, true} {
						p := newGemmProblem(rng, tA, tB, s.m, s.n, s.k, 1.25, 0.5, 2, 1, false)
						want := slices.Clone(p.c0)
						gemmWith(kn, 1, tA, tB, s.m, s.n, s.k, p.alpha, p.a[p.off:], p.lda, p.b[p.off:], p.ldb, p.beta, want[p.off:], p.ldc)
						for _, threads := range []int{2, 3} {
							got := slices.Clone(p.c0)
							gemmWith(kn, threads, tA, tB, s.m, s.n, s.k, p.alpha, p.a[p.off:], p.lda, p.b[p.off:], p.ldb, p.beta, got[p.off:], p.ldc)
							if !equalF32(got, want) {
								t.Errorf("%s kc=%d %v transA=%v transB=%v: %d goroutines differ from one", kn.name, kn.kc, s, tA, tB, threads)
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmKernelA: the kernels that read A in place (fnA untransposed, fnAT transposed, colA
// both, a column of tiles at a time) give, bit for bit, the products of the same kernel reading
// packed slivers, on shapes whose rows end in a partial group, whose columns end in a partial
// sliver and whose depth crosses blocks (the kernel's blocking and a tiny one), for every
// alpha, beta and transposition (alpha ≠ 1 still packs).
func TestGemmKernelA(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var tested int
	for _, kern := range gemmKernels() {
		if kern.fnA == nil && kern.fnAT == nil && kern.colA == nil {
			continue
		}
		tiny := *kern
		tiny.name += "/tiny"
		tiny.kc, tiny.mc, tiny.nc = 5, 2*kern.mr, 3*kern.nr
		for _, k := range []*gemmKernel{kern, &tiny} {
			packed := *k
			packed.fnA, packed.fnAT, packed.colA = nil, nil, nil
			for _, sh := range []struct{ m, n, k int }{{8, 32, 1}, {9, 33, 7}, {17, 70, 300}, {130, 65, 40}, {3, 100, 20}, {16, 40, 103}} {
				for _, transA := range []bool{false, true} {
					for _, ab := range [][2]float32{{1, 0}, {1, 1}, {1, 0.5}, {0.5, 0}} {
						alpha, beta := ab[0], ab[1]
						lda := sh.k + 3
						if transA {
							lda = sh.m + 3
						}
						rows := sh.m
						if transA {
							rows = sh.k
						}
						a := randSlice(rng, rows*lda, 1)
						b := randSlice(rng, sh.k*sh.n, 1)
						c0 := randSlice(rng, sh.m*(sh.n+2), 1)
						want, got := slices.Clone(c0), slices.Clone(c0)
						gemmWith(&packed, 1, transA, false, sh.m, sh.n, sh.k, alpha, a, lda, b, sh.n, beta, want, sh.n+2)
						gemmWith(k, 1, transA, false, sh.m, sh.n, sh.k, alpha, a, lda, b, sh.n, beta, got, sh.n+2)
						if i := firstBitDiff(got, want); i >= 0 {
							t.Errorf("%s %+v transA %v alpha %v beta %v: c[%d] = %v, want %v", k.name, sh, transA, alpha, beta, i, got[i], want[i])
						}
						tested++
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no kernel of this CPU reads A in place")
	}
}

// gemmPackA puts alpha·op(A)(i, p) at s·mr·kb + p·mr + i of sliver s, zeros past the block's
// rows, bit for bit (one product a float), for every packer (the pure-Go loops, the 8x8
// transpose in Go and each kernel's own), untransposed and transposed, alpha 1 and not.
func TestGemmPackA(t *testing.T) {
	for _, mr := range []int{2, 6, 8} {
		for _, transA := range []bool{false, true} {
			for _, alpha := range []float32{1, 0.125, -0.3, 3} {
				for _, sz := range []struct{ m, k, i0, p0, mb, kb int }{
					{1, 1, 0, 0, 1, 1},
					{9, 7, 0, 0, 9, 7},
					{40, 70, 3, 5, 33, 64},
					{130, 300, 2, 10, 128, 256},
					{16, 64, 0, 0, 16, 61},
				} {
					a, lda, opA := stridedOperand(sz.m, sz.k, transA, func(i int) float32 { return float32(i%1013)*0.37 - 150 })
					slivers := ceilDiv(sz.mb, mr)
					packers := append([]*gemmKernel{{name: "go", mr: mr}, {name: "go-trans8", mr: mr, trans8: gemmTranspose8Go}}, gemmKernels()...)
					for _, pk := range packers {
						if pk.mr != mr {
							continue
						}
						dst := unwritten(slivers * mr * sz.kb)
						gemmPackA(pk, dst, transA, a, lda, sz.i0, sz.p0, sz.mb, sz.kb, alpha)
						checkSlivers(t, fmt.Sprintf("%s mr %d transA %v alpha %g %+v", pk.name, mr, transA, alpha, sz), dst, mr, sz.kb, func(s, p, i int) float32 {
							if r := s*mr + i; r < sz.mb {
								return alpha * opA(sz.i0+r, sz.p0+p)
							}
							return 0
						})
					}
				}
			}
		}
	}
}
