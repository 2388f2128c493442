package train

import (
	"fmt"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// BenchmarkClipAdamW times the optimizer's part of a training step on BERT-Tiny's 4.4 M
// parameters with a clipped gradient: "two-pass" scales the gradients in memory
// (ClipGradNorm) and then steps (Apply), what the training loops did before; "fused" passes
// the clipping's coefficient to the optimizer (GradNorm, ClipCoef, ApplyScaled), what they do
// now. Both leave the same weights (TestApplyScaledEqualsClipThenApply).
func BenchmarkClipAdamW(b *testing.B) {
	sizes := []int{30522 * 128, 512 * 128, 2 * 128}
	for range 2 { // two layers' weights
		sizes = append(sizes, 128*128, 128*128, 128*128, 128*128, 128*512, 512*128)
	}
	mk := func() ([]bert.Param, []bert.Param) {
		var ps, gs []bert.Param
		for k, n := range sizes {
			w, g := make([]float32, n), make([]float32, n)
			for i := range w {
				w[i] = float32(i%101-50) * 1e-3
				g[i] = float32(i%83-41) * 1e-2
			}
			name := fmt.Sprintf("p%d.weight", k)
			ps = append(ps, bert.Param{Name: name, T: &tensor.Tensor{Shape: []int{n}, Data: w}})
			gs = append(gs, bert.Param{Name: name, T: &tensor.Tensor{Shape: []int{n}, Data: g}})
		}
		return ps, gs
	}
	for _, fused := range []bool{false, true} {
		name := "two-pass"
		if fused {
			name = "fused"
		}
		b.Run(name, func(b *testing.B) {
			ps, gs := mk()
			_, fresh := mk()
			o := NewAdamW(ps, DefaultAdamW(1e-4))
			b.ResetTimer()
			for range b.N {
				// The same clipped gradient every step (two-pass scales it in place).
				b.StopTimer()
				for k := range gs {
					copy(gs[k].T.Data, fresh[k].T.Data)
				}
				b.StartTimer()
				if fused {
					norm := GradNorm(gs)
					if err := o.ApplyScaled(gs, 1e-4, ClipCoef(norm, 1)); err != nil {
						b.Fatal(err)
					}
				} else {
					ClipGradNorm(gs, 1)
					if err := o.Apply(gs, 1e-4); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
