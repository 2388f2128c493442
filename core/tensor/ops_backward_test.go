package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randSlice(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(scale * rng.NormFloat64())
	}
	return x
}

// checkAddCols runs addCols on x into a copy of acc0 [len(x)] and fails unless it gives
// addColsGo's sums exactly and writes nothing past the end (the kernels' twin test).
func checkAddCols(t *testing.T, x []float32, acc0 []float64) {
	t.Helper()
	n := len(x)
	acc := append(append(make([]float64, 0, n+1), acc0...), 42)
	want := append([]float64(nil), acc0...)
	addCols(acc[:n], x)
	addColsGo(want, x)
	for i := range want {
		if acc[i] != want[i] {
			t.Fatalf("addCols n=%d [%d]: %g, Go twin %g", n, i, acc[i], want[i])
		}
	}
	if acc[n] != 42 {
		t.Fatalf("addCols n=%d wrote past acc", n)
	}
}

// closeTo reports the first element where |got - want| > atol + rtol·|want|.
func closeTo(got, want []float64, atol, rtol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > atol+rtol*math.Abs(want[i]) || math.IsNaN(got[i]) {
			return fmt.Errorf("element %d: %g, want %g", i, got[i], want[i])
		}
	}
	return nil
}

func f64s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// fdGrad is the gradient of sum(w ⊙ f(x)) with respect to x by central differences, f in float64.
func fdGrad(f func(x []float64) []float64, x []float32, w []float32) []float64 {
	const h = 1e-6
	xs := f64s(x)
	g := make([]float64, len(x))
	dot := func() float64 {
		var s float64
		for i, v := range f(xs) {
			s += float64(w[i]) * v
		}
		return s
	}
	for i := range xs {
		o := xs[i]
		xs[i] = o + h
		p := dot()
		xs[i] = o - h
		m := dot()
		xs[i] = o
		g[i] = (p - m) / (2 * h)
	}
	return g
}

func TestLinearBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range []struct{ m, in, out int }{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 48, 40}} {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.in, s.out), func(t *testing.T) {
			x, w, dy := randSlice(rng, s.m*s.in, 1), randSlice(rng, s.out*s.in, 1), randSlice(rng, s.m*s.out, 1)
			dw0, db0, dx0 := randSlice(rng, s.out*s.in, 1), randSlice(rng, s.out, 1), randSlice(rng, s.m*s.in, 1)
			for _, beta := range []float32{0, 1} {
				dw, db, dx := append([]float32(nil), dw0...), append([]float32(nil), db0...), append([]float32(nil), dx0...)
				LinearBackward(dx, dw, db, dy, x, w, s.m, s.in, s.out, beta)
				wantDW, wantDB, wantDX := f64s(dw0), f64s(db0), make([]float64, s.m*s.in)
				for r := 0; r < s.m; r++ {
					for o := 0; o < s.out; o++ {
						g := float64(dy[r*s.out+o])
						wantDB[o] += g
						for i := 0; i < s.in; i++ {
							wantDW[o*s.in+i] += g * float64(x[r*s.in+i])
							wantDX[r*s.in+i] += g * float64(w[o*s.in+i])
						}
					}
				}
				if beta == 1 {
					for i := range wantDX {
						wantDX[i] += float64(dx0[i])
					}
				}
				for _, c := range []struct {
					name      string
					got, want []float64
				}{{"dw", f64s(dw), wantDW}, {"db", f64s(db), wantDB}, {"dx", f64s(dx), wantDX}} {
					if err := closeTo(c.got, c.want, 1e-4, 1e-4); err != nil {
						t.Errorf("beta %g: %s: %v", beta, c.name, err)
					}
				}
			}
		})
	}
}

// TestElementwiseBackward compares each activation's backward with finite differences of its
// float64 forward, and checks that dx may alias dy.
func TestElementwiseBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	tests := []struct {
		name    string
		fwd     func(u float64) float64
		bwd     func(dx, dy, x []float32)
		fromOut bool // the backward takes the forward output, not its input
		fwd32   func(x []float32)
	}{
		{"gelu", func(u float64) float64 { return 0.5 * u * (1 + math.Erf(u/math.Sqrt2)) }, GELUBackward, false, GELU},
		{"gelu_tanh", func(u float64) float64 {
			return 0.5 * u * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(u+0.044715*u*u*u)))
		}, GELUTanhBackward, false, GELUTanh},
		{"relu", func(u float64) float64 { return math.Max(u, 0) }, ReLUBackward, false, ReLU},
		{"tanh", math.Tanh, TanhBackward, true, Tanh},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := randSlice(rng, 257, 2.5)
			dy := randSlice(rng, len(x), 1)
			want := fdGrad(func(x []float64) []float64 {
				y := make([]float64, len(x))
				for i, u := range x {
					y[i] = tc.fwd(u)
				}
				return y
			}, x, dy)
			arg := x
			if tc.fromOut {
				arg = append([]float32(nil), x...)
				tc.fwd32(arg)
			}
			dx := make([]float32, len(x))
			tc.bwd(dx, dy, arg)
			if err := closeTo(f64s(dx), want, 1e-5, 1e-5); err != nil {
				t.Error(err)
			}
			alias := append([]float32(nil), dy...)
			tc.bwd(alias, alias, arg)
			if err := closeTo(f64s(alias), f64s(dx), 0, 0); err != nil {
				t.Errorf("dx aliasing dy: %v", err)
			}
		})
	}
}

func TestSoftmaxBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{1, 2, 7, 33} {
		rows := 3
		x := randSlice(rng, rows*n, 3)
		mask := make([]float32, n)
		if n > 2 {
			mask[n-1] = -math.MaxFloat32 // a padded key: no gradient
		}
		dy := randSlice(rng, rows*n, 1)
		y := append([]float32(nil), x...)
		SoftmaxRows(y, n, mask)
		want := fdGrad(func(x []float64) []float64 {
			y := make([]float64, len(x))
			for r := 0; r < len(x); r += n {
				mx := math.Inf(-1)
				for j := 0; j < n; j++ {
					mx = math.Max(mx, x[r+j]+float64(mask[j]))
				}
				var z float64
				for j := 0; j < n; j++ {
					y[r+j] = math.Exp(x[r+j] + float64(mask[j]) - mx)
					z += y[r+j]
				}
				for j := 0; j < n; j++ {
					y[r+j] /= z
				}
			}
			return y
		}, x, dy)
		dx := append([]float32(nil), dy...)
		SoftmaxBackward(dx, dx, y, n)
		if err := closeTo(f64s(dx), want, 1e-5, 1e-4); err != nil {
			t.Errorf("n %d: %v", n, err)
		}
		if n > 2 {
			for r := 0; r < rows; r++ {
				if dx[r*n+n-1] != 0 {
					t.Errorf("n %d: masked entry gets gradient %g", n, dx[r*n+n-1])
				}
			}
		}
	}
}

func TestLayerNormBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, c := range []struct {
		n   int
		eps float32
	}{{2, 1e-12}, {7, 1e-12}, {64, 1e-5}, {129, 1e-12}} {
		rows, n := 3, c.n
		x := randSlice(rng, rows*n, 2)
		for i := range x {
			x[i] += 5 // a mean far from 0
		}
		gamma, beta, dy := randSlice(rng, n, 1), randSlice(rng, n, 1), randSlice(rng, rows*n, 1)
		y, mean, rstd := make([]float32, rows*n), make([]float32, rows), make([]float32, rows)
		LayerNorm(y, x, gamma, beta, n, c.eps, mean, rstd)
		norm := func(x []float64, g []float64) []float64 {
			y := make([]float64, len(x))
			for r := 0; r < len(x); r += n {
				var mu, v float64
				for j := 0; j < n; j++ {
					mu += x[r+j]
				}
				mu /= float64(n)
				for j := 0; j < n; j++ {
					v += (x[r+j] - mu) * (x[r+j] - mu)
				}
				rs := 1 / math.Sqrt(v/float64(n)+float64(c.eps))
				for j := 0; j < n; j++ {
					y[r+j] = (x[r+j]-mu)*rs*g[j] + float64(beta[j])
				}
			}
			return y
		}
		wantDX := fdGrad(func(x []float64) []float64 { return norm(x, f64s(gamma)) }, x, dy)
		wantDG := make([]float64, n)
		wantDB := make([]float64, n)
		for r := 0; r < rows; r++ {
			for j := 0; j < n; j++ {
				wantDB[j] += float64(dy[r*n+j])
			}
		}
		// d gamma by finite differences too (x fixed, gamma varying).
		xs := f64s(x)
		gs := f64s(gamma)
		for j := 0; j < n; j++ {
			const h = 1e-6
			dot := func() float64 {
				var s float64
				for i, v := range norm(xs, gs) {
					s += float64(dy[i]) * v
				}
				return s
			}
			o := gs[j]
			gs[j] = o + h
			p := dot()
			gs[j] = o - h
			m := dot()
			gs[j] = o
			wantDG[j] = (p - m) / (2 * h)
		}
		dx, dg, db := make([]float32, rows*n), make([]float32, n), make([]float32, n)
		LayerNormBackward(dx, dg, db, dy, x, gamma, mean, rstd, n)
		for _, r := range []struct {
			name      string
			got, want []float64
		}{{"dx", f64s(dx), wantDX}, {"dgamma", f64s(dg), wantDG}, {"dbeta", f64s(db), wantDB}} {
			if err := closeTo(r.got, r.want, 1e-4, 1e-4); err != nil {
				t.Errorf("n %d: %s: %v", n, r.name, err)
			}
		}
		// Aliasing dx and dy gives the same dx; parameter gradients accumulate.
		alias := append([]float32(nil), dy...)
		LayerNormBackward(alias, dg, db, alias, x, gamma, mean, rstd, n)
		if err := closeTo(f64s(alias), f64s(dx), 0, 0); err != nil {
			t.Errorf("n %d: dx aliasing dy: %v", n, err)
		}
		for j := range wantDB {
			wantDB[j] *= 2
		}
		if err := closeTo(f64s(db), wantDB, 1e-4, 1e-4); err != nil {
			t.Errorf("n %d: dbeta does not accumulate: %v", n, err)
		}
	}
}

func TestSumRows(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6}
	dst := []float32{10, 20, 30}
	SumRows(dst, x, 3)
	want := []float64{15, 27, 39}
	if err := closeTo(f64s(dst), want, 0, 0); err != nil {
		t.Error(err)
	}
}

// SumRows and LayerNormBackward split over goroutines give the bits of one goroutine, on odd and
// tiny shapes, rows of a multiple of 16 (the vector kernels' columns split in runs of 16, some
// goroutines with none) and past backwardParallelMin, with gradients that already hold values
// (they accumulate); and LayerNormBackward with dx aliasing dy (the MLM head's call) stays
// right on a size that would be split.
func TestBackwardChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	same := func(what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s[%d] = %g, one goroutine %g", what, i, got[i], want[i])
			}
		}
	}
	for _, sh := range []struct{ rows, n int }{{1, 1}, {2, 2}, {3, 7}, {5, 129}, {7, 3}, {65, 64}, {128, 256}, {300, 130}, {300, 16}, {40, 48}} {
		x := randSlice(rng, sh.rows*sh.n, 2)
		dy := randSlice(rng, sh.rows*sh.n, 1)
		gamma, beta := randSlice(rng, sh.n, 1), randSlice(rng, sh.n, 1)
		y, mean, rstd := make([]float32, len(x)), make([]float32, sh.rows), make([]float32, sh.rows)
		LayerNorm(y, x, gamma, beta, sh.n, 1e-12, mean, rstd)
		dg0, db0, acc0 := randSlice(rng, sh.n, 1), randSlice(rng, sh.n, 1), randSlice(rng, sh.n, 1)
		wantDx := make([]float32, len(x))
		wantDg, wantDb := append([]float32(nil), dg0...), append([]float32(nil), db0...)
		layerNormBackwardRows(wantDx, wantDg, wantDb, dy, x, gamma, mean, rstd, sh.n)
		wantSum := append([]float32(nil), acc0...)
		sumRowsChunks(1, wantSum, dy, sh.n)
		for chunks := 1; chunks <= 4; chunks++ {
			dx := make([]float32, len(x))
			dg, db := append([]float32(nil), dg0...), append([]float32(nil), db0...)
			layerNormBackwardChunks(chunks, dx, dg, db, dy, x, gamma, mean, rstd, sh.n)
			what := fmt.Sprintf("%dx%d, %d chunks: ", sh.rows, sh.n, chunks)
			same(what+"dx", dx, wantDx)
			same(what+"dgamma", dg, wantDg)
			same(what+"dbeta", db, wantDb)
			sum := append([]float32(nil), acc0...)
			sumRowsChunks(chunks, sum, dy, sh.n)
			same(what+"SumRows", sum, wantSum)
		}
		if len(x) >= backwardParallelMin {
			d := append([]float32(nil), dy...) // dx aliases dy
			dg, db := append([]float32(nil), dg0...), append([]float32(nil), db0...)
			LayerNormBackward(d, dg, db, d, x, gamma, mean, rstd, sh.n)
			same(fmt.Sprintf("%dx%d aliased: dx", sh.rows, sh.n), d, wantDx)
			same(fmt.Sprintf("%dx%d aliased: dgamma", sh.rows, sh.n), dg, wantDg)
		}
	}
}

// ulps is the distance between two float32 values in units in the last place.
func ulps(a, b float32) int64 {
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < ib {
		return ib - ia
	}
	return ia - ib
}

func TestExpf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var worst int64
	var at float32
	check := func(x float32) {
		want := float32(math.Exp(float64(x)))
		if u := ulps(expf(x), want); u > worst {
			worst, at = u, x
		}
	}
	for range 1_000_000 {
		check(float32(rng.Float64()*176 - 87.3))
	}
	for _, x := range []float32{0, -0, 1, -1, 1e-30, -1e-30, 88.7, 88.72283, -87.33654, -20, 20} {
		check(x)
	}
	t.Logf("worst: %d ulp at %g", worst, at)
	if worst > 2 {
		t.Errorf("expf(%g) = %g, exp = %g: %d ulp", at, expf(at), math.Exp(float64(at)), worst)
	}
	for _, c := range []struct{ x, want float32 }{
		{float32(math.Inf(1)), float32(math.Inf(1))}, {89, float32(math.Inf(1))},
		{float32(math.Inf(-1)), 0}, {-100, 0}, {-math.MaxFloat32, 0},
	} {
		if got := expf(c.x); got != c.want {
			t.Errorf("expf(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if got := expf(float32(math.NaN())); got == got {
		t.Errorf("expf(NaN) = %g", got)
	}
}

func TestSoftmaxCrossEntropyBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{1, 2, 5, 2000} {
		x := randSlice(rng, n, 4)
		y := rng.IntN(n)
		const scale = 0.25
		mx := math.Inf(-1)
		for _, v := range x {
			mx = math.Max(mx, float64(v))
		}
		var s float64
		for _, v := range x {
			s += math.Exp(float64(v) - mx)
		}
		wantLoss := math.Log(s) - (float64(x[y]) - mx)
		want := make([]float64, n)
		for j, v := range x {
			want[j] = math.Exp(float64(v)-mx) / s * scale
		}
		want[y] -= scale
		dx := make([]float32, n)
		loss := SoftmaxCrossEntropyBackward(dx, x, y, scale)
		if math.Abs(loss-wantLoss) > 1e-6*math.Max(1, wantLoss) {
			t.Errorf("n %d: loss %.9g, want %.9g", n, loss, wantLoss)
		}
		if err := closeTo(f64s(dx), want, 1e-8, 1e-5); err != nil {
			t.Errorf("n %d: %v", n, err)
		}
		alias := append([]float32(nil), x...)
		if l := SoftmaxCrossEntropyBackward(alias, alias, y, scale); l != loss {
			t.Errorf("n %d: aliasing changed the loss: %g, %g", n, l, loss)
		}
		if err := closeTo(f64s(alias), f64s(dx), 0, 0); err != nil {
			t.Errorf("n %d: dx aliasing x: %v", n, err)
		}
	}
}

// TestLayerNormBackwardRowPairs: the two-row loop of layerNormBackwardRows, and its eight-row
// vector kernels where the CPU has them (rows of a multiple of 16), give, bit for bit, the dx,
// dgamma and dbeta of the one-row loop run row after row, for row counts below, at and past a
// group of eight with every remainder of the two-row loop.
func TestLayerNormBackwardRowPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, rows := range []int{1, 2, 3, 4, 7, 8, 9, 11, 16, 26} {
		for _, n := range []int{1, 5, 16, 128, 144} {
			x, dy, gamma := randSlice(rng, rows*n, 2), randSlice(rng, rows*n, 1), randSlice(rng, n, 1)
			if rows%2 == 0 {
				// Magnitudes 2^±20 apart: the float64 sums then round at most steps, so that
				// only the same order of additions gives the same bits.
				for i := range dy {
					dy[i] = float32(math.Ldexp(float64(dy[i]), rng.IntN(41)-20))
				}
			}
			mean, rstd := randSlice(rng, rows, 0.5), randSlice(rng, rows, 1)
			for i := range rstd {
				rstd[i] = 1 + rstd[i]*rstd[i]
			}
			dg0, db0 := randSlice(rng, n, 1), randSlice(rng, n, 1)
			wantDx, wantDg, wantDb := make([]float32, rows*n), slices.Clone(dg0), slices.Clone(db0)
			for i := range rows {
				r := i * n
				layerNormBackwardRow(wantDx[r:r+n], wantDg, wantDb, dy[r:r+n], x[r:r+n], gamma, mean[i], rstd[i])
			}
			gotDx, gotDg, gotDb := make([]float32, rows*n), slices.Clone(dg0), slices.Clone(db0)
			layerNormBackwardRows(gotDx, gotDg, gotDb, dy, x, gamma, mean, rstd, n)
			for _, c := range []struct {
				name      string
				got, want []float32
			}{{"dx", gotDx, wantDx}, {"dgamma", gotDg, wantDg}, {"dbeta", gotDb, wantDb}} {
				if i := firstBitDiff(c.got, c.want); i >= 0 {
					t.Errorf("%d rows of %d: %s[%d] = %v, want %v", rows, n, c.name, i, c.got[i], c.want[i])
				}
			}
		}
	}
}

// TestLayerNormBackwardSums8: where the CPU has the eight-row kernel, lnbSums8's float64 sums
// and its dgamma and dbeta are lnbSums8Go's bit for bit, on inputs whose sums round at most
// steps (so that an addition out of order shows), with and without the column terms.
func TestLayerNormBackwardSums8(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{16, 32, 128, 784} {
		if !rows8Fast(n) {
			t.Skipf("no eight-row kernel for rows of %d on this CPU (%s)", n, Kernels())
		}
		x, dy, gamma := randSlice(rng, 8*n, 2), randSlice(rng, 8*n, 1), randSlice(rng, n, 1)
		for i := range dy {
			dy[i] = float32(math.Ldexp(float64(dy[i]), rng.IntN(41)-20))
		}
		mean, rstd := randSlice(rng, 8, 0.5), randSlice(rng, 8, 1)
		for i := range rstd {
			rstd[i] = 1 + rstd[i]*rstd[i]
		}
		dg0, db0 := randSlice(rng, n, 1), randSlice(rng, n, 1)
		for _, cols := range []bool{false, true} {
			var got, want [16]float64
			gotDg, gotDb, wantDg, wantDb := slices.Clone(dg0), slices.Clone(db0), slices.Clone(dg0), slices.Clone(db0)
			if cols {
				lnbSums8(&got, gotDg, gotDb, dy, x, gamma, mean, rstd, n)
				lnbSums8Go(&want, wantDg, wantDb, dy, x, gamma, mean, rstd, n)
			} else {
				lnbSums8(&got, nil, nil, dy, x, gamma, mean, rstd, n)
				lnbSums8Go(&want, nil, nil, dy, x, gamma, mean, rstd, n)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d cols=%v: s[%d] = %v, Go twin %v", n, cols, i, got[i], want[i])
				}
			}
			if i := firstBitDiff(gotDg, wantDg); i >= 0 {
				t.Fatalf("n=%d: dgamma[%d] = %v, Go twin %v", n, i, gotDg[i], wantDg[i])
			}
			if i := firstBitDiff(gotDb, wantDb); i >= 0 {
				t.Fatalf("n=%d: dbeta[%d] = %v, Go twin %v", n, i, gotDb[i], wantDb[i])
			}
		}
	}
}

// TestSoftmaxBackwardRows: SoftmaxBackward, with its eight-row vector kernels where the CPU has
// them (rows of a multiple of 16), gives bit for bit the row loop's dx (smbSum, smbDxGo), for
// row counts below, at and past a group of eight, with dx apart from dy and in its place; and
// smbSums8's sums are smbSums8Go's on inputs whose sums round.
func TestSoftmaxBackwardRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, rows := range []int{1, 7, 8, 9, 17, 24} {
		for _, n := range []int{5, 16, 128, 144} {
			y, dy := randSlice(rng, rows*n, 1), randSlice(rng, rows*n, 1)
			for i := range dy {
				dy[i] = float32(math.Ldexp(float64(dy[i]), rng.IntN(41)-20))
			}
			want := make([]float32, rows*n)
			for r := 0; r < rows*n; r += n {
				smbDxGo(want[r:r+n], dy[r:r+n], y[r:r+n], float32(smbSum(dy[r:r+n], y[r:r+n])))
			}
			got := make([]float32, rows*n)
			SoftmaxBackward(got, dy, y, n)
			if i := firstBitDiff(got, want); i >= 0 {
				t.Fatalf("%d rows of %d: dx[%d] = %v, row loop %v", rows, n, i, got[i], want[i])
			}
			inPlace := slices.Clone(dy)
			SoftmaxBackward(inPlace, inPlace, y, n)
			if i := firstBitDiff(inPlace, want); i >= 0 {
				t.Fatalf("%d rows of %d, dx in dy's place: dx[%d] = %v, row loop %v", rows, n, i, inPlace[i], want[i])
			}
			if rows >= 8 && rows8Fast(n) {
				var s, ws [8]float64
				smbSums8(&s, dy, y, n)
				smbSums8Go(&ws, dy, y, n)
				for r := range s {
					if math.Float64bits(s[r]) != math.Float64bits(ws[r]) {
						t.Fatalf("%d rows of %d: sum %d = %v, Go twin %v", rows, n, r, s[r], ws[r])
					}
				}
			}
		}
	}
}

// checkGELUWithDerivative checks GELUWithDerivative against this build's GELU and
// GELUBackward bit for bit: y is GELU(x), and Mul(dx, dy, d) is GELUBackward(dx, dy, x), on
// lengths with every tail, values past erf's and erfc's ranges, ±Inf, NaN, zeros and
// denormals, with d apart from x and in its place; and Mul against the products.
func checkGELUWithDerivative(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewPCG(41, 42))
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, 1, -1, 1.41, -1.42, 12.8, -12.8, 30, -30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38, -3e38, 0.5, -0.5, 5, -5}
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 100, 1001} {
		x := randSlice(rng, n, 3)
		for i := range x {
			if i%3 == 0 {
				x[i] = special[(i/3)%len(special)]
			}
		}
		dy := randSlice(rng, n, 1)
		wantY := slices.Clone(x)
		GELU(wantY)
		wantDx := make([]float32, n)
		GELUBackward(wantDx, dy, x)
		for _, inPlace := range []bool{false, true} {
			y, d := make([]float32, n), make([]float32, n)
			if inPlace {
				d = slices.Clone(x)
				GELUWithDerivative(y, d, d)
			} else {
				GELUWithDerivative(y, d, x)
			}
			dx := make([]float32, n)
			Mul(dx, dy, d)
			if i := firstBitDiffNaN(y, wantY); i >= 0 {
				t.Errorf("n %d in place %v: y[%d] = GELU'd %v of x %v, GELU gives %v", n, inPlace, i, y[i], x[i], wantY[i])
			}
			if i := firstBitDiffNaN(dx, wantDx); i >= 0 {
				t.Errorf("n %d in place %v: dy·d [%d] = %v (x %v), GELUBackward %v", n, inPlace, i, dx[i], x[i], wantDx[i])
			}
		}
		got := make([]float32, n)
		Mul(got, x, dy)
		for i := range got {
			if w := x[i] * dy[i]; math.Float32bits(got[i]) != math.Float32bits(w) && !(got[i] != got[i] && w != w) {
				t.Errorf("Mul n %d: [%d] = %v, want %v", n, i, got[i], w)
			}
		}
	}
}

func TestGELUWithDerivative(t *testing.T) { checkGELUWithDerivative(t) }

// firstBitDiffNaN is firstBitDiff with any NaN equal to any NaN: WebAssembly leaves the sign
// and payload of a NaN an operation returns to the engine (in one run of the scalar wasm
// build, dy·GELU'(NaN) and GELUBackward's NaN had different bits; in three more, the same).
func firstBitDiffNaN(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

// TestMaskScale: MaskScale keeps src[i]·scale (Go's float32 product, bit for bit) where keep[i]
// is 1 and writes +0 where it is 0, NaN and Inf included, in place and into another slice, on
// lengths around the vector widths, slices that start off a 64-byte boundary, and scales of
// dropout 0.1 and 0.5 and one that overflows.
func TestMaskScale(t *testing.T) {
	for _, scale := range []float32{1 / 0.9, 2, 10} {
		checkMaskScale(t, scale)
	}
}

func checkMaskScale(t *testing.T, scale float32) {
	rng := rand.New(rand.NewPCG(5, 6))
	specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38, 1e-45}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1001} {
		for _, off := range []int{0, 3} {
			buf := make([]float32, n+off)
			for i := range buf {
				buf[i] = float32(rng.NormFloat64())
				if i%11 == 5 {
					buf[i] = specials[i%len(specials)]
				}
			}
			src := buf[off:]
			keep := make([]uint8, n+off)[off:]
			for i := range keep {
				keep[i] = uint8(rng.IntN(2))
			}
			want := func(i int) uint32 {
				if keep[i] == 0 {
					return 0
				}
				return math.Float32bits(src[i] * scale)
			}
			dst := make([]float32, n)
			MaskScale(dst, src, keep, scale)
			inPlace := append([]float32(nil), src...)
			MaskScale(inPlace, inPlace, keep, scale)
			for i := range n {
				w := want(i)
				nan := src[i] != src[i] && keep[i] == 1
				for _, got := range []float32{dst[i], inPlace[i]} {
					if nan && got == got || !nan && math.Float32bits(got) != w {
						t.Fatalf("scale %v, n %d off %d: element %d (src %v, keep %d) = %v (bits %#x), want bits %#x", scale, n, off, i, src[i], keep[i], got, math.Float32bits(got), w)
					}
				}
			}
		}
	}
}
