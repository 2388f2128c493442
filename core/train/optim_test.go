package train

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// TestAdamWMatchesHandComputed checks three steps on two scalars against torch.optim.AdamW's
// update written out in float64 (one decayed weight, one bias without decay).
func TestAdamWMatchesHandComputed(t *testing.T) {
	w := &tensor.Tensor{Shape: []int{1}, Data: []float32{0.5}}
	b := &tensor.Tensor{Shape: []int{1}, Data: []float32{-0.25}}
	params := []bert.Param{{Name: "x.weight", T: w}, {Name: "x.bias", T: b}}
	c := AdamWConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
	o := NewAdamW(params, c)
	grads := [][]float64{{0.3, -0.2}, {-0.1, 0.4}, {0.05, 0.05}}
	ref := []float64{0.5, -0.25}
	var m, v [2]float64
	for step, gs := range grads {
		gt := []bert.Param{
			{Name: "x.weight", T: &tensor.Tensor{Shape: []int{1}, Data: []float32{float32(gs[0])}}},
			{Name: "x.bias", T: &tensor.Tensor{Shape: []int{1}, Data: []float32{float32(gs[1])}}},
		}
		lr := 0.1 * float64(step+1) / 3
		if err := o.Apply(gt, lr); err != nil {
			t.Fatal(err)
		}
		k := float64(step + 1)
		for i := range ref {
			if i == 0 {
				ref[i] *= 1 - lr*c.WeightDecay
			}
			g := float64(float32(gs[i]))
			m[i] = c.Beta1*m[i] + (1-c.Beta1)*g
			v[i] = c.Beta2*v[i] + (1-c.Beta2)*g*g
			mh := m[i] / (1 - math.Pow(c.Beta1, k))
			vh := v[i] / (1 - math.Pow(c.Beta2, k))
			ref[i] -= lr * mh / (math.Sqrt(vh) + c.Eps)
		}
	}
	for i, p := range params {
		if d := math.Abs(float64(p.T.Data[0]) - ref[i]); d > 1e-6 {
			t.Errorf("%s = %.8f, want %.8f", p.Name, p.T.Data[0], ref[i])
		}
	}
}

func TestNoDecay(t *testing.T) {
	tests := map[string]bool{
		"bert.encoder.layer.0.attention.output.LayerNorm.weight": true,
		"bert.encoder.layer.0.attention.output.dense.bias":       true,
		"cls.predictions.bias":                                   true,
		"bert.encoder.layer.0.attention.output.dense.weight":     false,
		"bert.embeddings.word_embeddings.weight":                 false,
		"classifier.weight":                                      false,
	}
	for name, want := range tests {
		if got := NoDecay(name); got != want {
			t.Errorf("NoDecay(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLinearSchedule(t *testing.T) {
	tests := []struct {
		step, warmup, total int
		want                float64
	}{
		{0, 10, 100, 0}, {5, 10, 100, 0.5}, {10, 10, 100, 1}, {55, 10, 100, 0.5}, {100, 10, 100, 0}, {150, 10, 100, 0},
		{0, 0, 100, 1}, {50, 0, 100, 0.5},
	}
	for _, tc := range tests {
		if got := LinearSchedule(tc.step, tc.warmup, tc.total); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("LinearSchedule(%d, %d, %d) = %g, want %g", tc.step, tc.warmup, tc.total, got, tc.want)
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	g := []bert.Param{{Name: "a", T: &tensor.Tensor{Shape: []int{2}, Data: []float32{3, 0}}}, {Name: "b", T: &tensor.Tensor{Shape: []int{1}, Data: []float32{4}}}}
	if n := ClipGradNorm(g, 1); math.Abs(n-5) > 1e-9 {
		t.Fatalf("norm %g, want 5", n)
	}
	if math.Abs(float64(g[0].T.Data[0])-0.6) > 1e-6 || math.Abs(float64(g[1].T.Data[0])-0.8) > 1e-6 {
		t.Errorf("clipped to %v %v, want 0.6 0.8", g[0].T.Data, g[1].T.Data)
	}
	small := []bert.Param{{Name: "a", T: &tensor.Tensor{Shape: []int{1}, Data: []float32{0.5}}}}
	ClipGradNorm(small, 1)
	if small[0].T.Data[0] != 0.5 {
		t.Errorf("a gradient under the limit changed: %v", small[0].T.Data)
	}
}

// TestAdamWThreadsAgree: AdamW over parameters of unequal sizes, with and without weight
// decay, split over 2 and 3 threads (and clipped) gets the same bits as on one thread; each
// parameter gets what an optimizer of that parameter alone gives it (the split of the run of
// all values into the parameters is right); and every element was updated (a lost chunk would
// stay at its start).
func TestAdamWThreadsAgree(t *testing.T) {
	sizes := []int{5, parallelUpdateMin + 3, 3*parallelUpdateMin + 17, 1, 40}
	names := []string{"a.weight", "b.bias", "c.weight", "d.LayerNorm.weight", "e.weight"}
	start := func(k, i int) float32 { return float32((i+k)%97) * 0.01 }
	grad := func(k, i int) float32 { return float32((i*(k+1))%89-44) * 0.3 }
	// run takes three steps on the parameters ks with GOMAXPROCS procs and returns them.
	run := func(procs int, ks []int) [][]float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var params []bert.Param
		var ws [][]float32
		for _, k := range ks {
			w := make([]float32, sizes[k])
			for i := range w {
				w[i] = start(k, i)
			}
			ws = append(ws, w)
			params = append(params, bert.Param{Name: names[k], T: &tensor.Tensor{Shape: []int{len(w)}, Data: w}})
		}
		o := NewAdamW(params, AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-6, WeightDecay: 0.01})
		for step := range 3 {
			var gs []bert.Param
			for _, k := range ks {
				g := make([]float32, sizes[k])
				for i := range g {
					g[i] = grad(k, i)
				}
				gs = append(gs, bert.Param{Name: names[k], T: &tensor.Tensor{Shape: []int{len(g)}, Data: g}})
			}
			if err := o.ApplyScaled(gs, 1e-3*float64(step+1), 0.5); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	all := []int{0, 1, 2, 3, 4}
	one := run(1, all)
	for _, procs := range []int{2, 3} {
		got := run(procs, all)
		for k := range one {
			for i := range one[k] {
				if math.Float32bits(one[k][i]) != math.Float32bits(got[k][i]) {
					t.Fatalf("%s[%d]: %g on one thread, %g on %d", names[k], i, one[k][i], got[k][i], procs)
				}
			}
		}
	}
	for k := range one {
		alone := run(2, []int{k})[0]
		for i, w := range one[k] {
			if math.Float32bits(w) != math.Float32bits(alone[i]) {
				t.Fatalf("%s[%d]: %g among the others, %g alone", names[k], i, w, alone[i])
			}
			if w == start(k, i) && grad(k, i) != 0 {
				t.Fatalf("%s[%d] was not updated", names[k], i)
			}
		}
	}
}

// TestApplyScaledEqualsClipThenApply checks the training loops' fused clipping against the
// two passes it replaced: ClipGradNorm (scaling the gradients in memory) and then Apply give
// the same weights and moments, bit for bit, as GradNorm, ClipCoef and ApplyScaled, on a
// clipped step and on one under the limit, with parameters small and large (split over threads).
func TestApplyScaledEqualsClipThenApply(t *testing.T) {
	sizes := []int{7, 300, 2*parallelUpdateMin + 5}
	mk := func() ([]bert.Param, []bert.Param) {
		var ps, gs []bert.Param
		for k, n := range sizes {
			w, g := make([]float32, n), make([]float32, n)
			for i := range w {
				w[i] = float32((i*7+k)%101-50) * 0.01
				g[i] = float32((i*13+k)%83-41) * 0.05
			}
			name := fmt.Sprintf("p%d.weight", k)
			ps = append(ps, bert.Param{Name: name, T: &tensor.Tensor{Shape: []int{n}, Data: w}})
			gs = append(gs, bert.Param{Name: name, T: &tensor.Tensor{Shape: []int{n}, Data: g}})
		}
		return ps, gs
	}
	for _, maxNorm := range []float64{1, 1e9} {
		pa, ga := mk()
		pb, gb := mk()
		oa := NewAdamW(pa, DefaultAdamW(1e-3))
		ob := NewAdamW(pb, DefaultAdamW(1e-3))
		for step := range 3 {
			ga2 := make([]bert.Param, len(ga))
			for i, g := range ga {
				ga2[i] = bert.Param{Name: g.Name, T: &tensor.Tensor{Shape: g.T.Shape, Data: append([]float32(nil), g.T.Data...)}}
			}
			na := ClipGradNorm(ga2, maxNorm)
			if err := oa.Apply(ga2, 1e-3); err != nil {
				t.Fatal(err)
			}
			nb := GradNorm(gb)
			if err := ob.ApplyScaled(gb, 1e-3, ClipCoef(nb, maxNorm)); err != nil {
				t.Fatal(err)
			}
			if na != nb {
				t.Fatalf("max norm %g step %d: norm %g, fused %g", maxNorm, step, na, nb)
			}
			if clipped := ClipCoef(nb, maxNorm) < 1; clipped != (maxNorm == 1) {
				t.Fatalf("max norm %g: norm %g clipped=%v", maxNorm, nb, clipped)
			}
			for k := range pa {
				ma, va := oa.Moments(k)
				mb, vb := ob.Moments(k)
				for i, w := range pa[k].T.Data {
					if math.Float32bits(w) != math.Float32bits(pb[k].T.Data[i]) || math.Float32bits(ma[i]) != math.Float32bits(mb[i]) || math.Float32bits(va[i]) != math.Float32bits(vb[i]) {
						t.Fatalf("max norm %g step %d %s[%d]: w m v %g %g %g, fused %g %g %g", maxNorm, step, pa[k].Name, i, w, ma[i], va[i], pb[k].T.Data[i], mb[i], vb[i])
					}
				}
			}
		}
	}
}

func TestClipCoef(t *testing.T) {
	tests := []struct {
		norm, max float64
		want      float32
	}{
		{5, 1, float32(1 / (5 + 1e-6))},
		{0.5, 1, 1},
		{1, 1, float32(1 / (1 + 1e-6))}, // torch clips at the limit too (coefficient just under 1)
		{3, math.Inf(1), 1},
	}
	for _, tc := range tests {
		if got := ClipCoef(tc.norm, tc.max); got != tc.want {
			t.Errorf("ClipCoef(%g, %g) = %g, want %g", tc.norm, tc.max, got, tc.want)
		}
	}
}

// TestGradNormSameOnAnyThreads: the norm of gradients of unequal sizes, their sums of squares
// taken on several goroutines, is bit for bit the one-goroutine sum of the runs of 65,536
// values in order, gradient by gradient, and that is the norm computed by hand for a small
// case.
func TestGradNormSameOnAnyThreads(t *testing.T) {
	sizes := []int{3, 70000, 1, 513, 200000, 64, 9}
	var grads []bert.Param
	for k, n := range sizes {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(math.Sin(float64(i*(k+3)))) * float32(k+1)
		}
		grads = append(grads, bert.Param{Name: fmt.Sprint(k), T: &tensor.Tensor{Shape: []int{n}, Data: d}})
	}
	var ss float64
	for _, g := range grads {
		var sg float64
		for d := g.T.Data; len(d) > 0; d = d[min(len(d), 1<<16):] {
			sg += tensor.SumSquares(d[:min(len(d), 1<<16)])
		}
		ss += sg
	}
	want := math.Sqrt(ss)
	for _, procs := range []int{1, 2, 3} {
		prev := runtime.GOMAXPROCS(procs)
		got := GradNorm(grads)
		runtime.GOMAXPROCS(prev)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%d threads: norm %v, want %v (the sums added in order)", procs, got, want)
		}
	}
	small := []bert.Param{
		{Name: "a", T: &tensor.Tensor{Shape: []int{2}, Data: []float32{3, 0}}},
		{Name: "b", T: &tensor.Tensor{Shape: []int{1}, Data: []float32{4}}},
	}
	if n := GradNorm(small); n != 5 {
		t.Errorf("norm of (3, 0, 4) = %v, want 5", n)
	}
}
