// Package train holds what training BERT needs beyond the model: the optimizer and learning-rate
// schedule, masking and next-sentence instances as google-research/bert builds them, training
// loops with progress events, checkpoints and metrics.
package train

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// AdamWConfig are torch.optim.AdamW's hyper-parameters (HF Trainer's defaults).
type AdamWConfig struct {
	LR          float64 // peak learning rate
	Beta1       float64 // 0.9
	Beta2       float64 // 0.999
	Eps         float64 // 1e-8 (HF Trainer; BERT's TF code used 1e-6)
	WeightDecay float64 // decoupled; not applied to biases and LayerNorm weights
}

// DefaultAdamW is HF Trainer's AdamW with weight decay 0.01, as BERT's recipe uses.
func DefaultAdamW(lr float64) AdamWConfig {
	return AdamWConfig{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
}

// AdamW is torch.optim.AdamW: bias-corrected moments, decoupled weight decay
// p ← p − lr·wd·p, then p ← p − lr·m̂/(√v̂ + eps).
type AdamW struct {
	Config AdamWConfig
	Step   int // optimizer steps taken
	params []bert.Param
	m, v   [][]float32
	decay  []bool
	off    []int // off[i]: where parameter i starts in the run of all their values; off[len] = total
}

// NoDecay reports whether a parameter is exempt from weight decay, as HF's Trainer decides:
// biases and LayerNorm weights (any name containing "LayerNorm" or ending in ".bias").
func NoDecay(name string) bool {
	return strings.HasSuffix(name, ".bias") || strings.Contains(name, "LayerNorm") || strings.Contains(name, "layer_norm")
}

// NewAdamW returns an optimizer for params with zero moments.
func NewAdamW(params []bert.Param, c AdamWConfig) *AdamW {
	o := &AdamW{Config: c, params: params}
	for _, p := range params {
		o.m = append(o.m, make([]float32, p.T.Len()))
		o.v = append(o.v, make([]float32, p.T.Len()))
		o.decay = append(o.decay, !NoDecay(p.Name))
	}
	o.off = make([]int, len(params)+1)
	for i, p := range params {
		o.off[i+1] = o.off[i] + p.T.Len()
	}
	return o
}

// Apply takes one step with learning rate lr using grads, which must list the same tensors'
// gradients in the same order as the optimizer's params.
func (o *AdamW) Apply(grads []bert.Param, lr float64) error { return o.ApplyScaled(grads, lr, 1) }

// ApplyScaled is Apply with every gradient multiplied by scale first, in registers: the same
// bits as scaling the gradients in memory (ClipGradNorm) and then calling Apply, one pass over
// the gradients fewer. Training steps pass ClipCoef's coefficient; grads are left as they are.
func (o *AdamW) ApplyScaled(grads []bert.Param, lr float64, scale float32) error {
	if len(grads) != len(o.params) {
		return fmt.Errorf("adamw: %d gradients for %d parameters", len(grads), len(o.params))
	}
	o.Step++
	c := o.Config
	bc1 := 1 - math.Pow(c.Beta1, float64(o.Step))
	bc2 := 1 - math.Pow(c.Beta2, float64(o.Step))
	b1, b2 := float32(c.Beta1), float32(c.Beta2)
	k := tensor.AdamWConsts{Beta1: b1, OneMinusBeta1: 1 - b1, Beta2: b2, OneMinusBeta2: 1 - b2,
		BC2Sqrt: float32(math.Sqrt(bc2)), Eps: float32(c.Eps), StepSize: float32(lr / bc1), GradScale: scale}
	wd := float32(1 - lr*c.WeightDecay)
	for i, p := range o.params {
		if n := len(grads[i].T.Data); n != p.T.Len() {
			return fmt.Errorf("adamw: gradient of %s has %d elements, parameter %d", p.Name, n, p.T.Len())
		}
	}
	// Element-wise: any split changes no result, whatever the number of threads. All the
	// parameters as one run of values, split once (a split per tensor forked and joined the
	// goroutines some forty times a step for BERT-Tiny, mostly over tensors too small to
	// split).
	update := func(lo, hi int) {
		for i := o.paramAt(lo); i < len(o.params) && o.off[i] < hi; i++ {
			a, b := max(lo, o.off[i])-o.off[i], min(hi, o.off[i+1])-o.off[i]
			kc := k
			kc.Decay = 1 // w·1 = w: no decay
			if o.decay[i] && c.WeightDecay != 0 {
				kc.Decay = wd
			}
			tensor.AdamW(o.params[i].T.Data[a:b], o.m[i][a:b], o.v[i][a:b], grads[i].T.Data[a:b], &kc)
		}
	}
	if n := o.off[len(o.params)]; n < parallelUpdateMin {
		update(0, n)
	} else {
		tensor.ParallelFor(n, update)
	}
	return nil
}

// paramAt returns the index of the parameter that holds value v of the run of all of them.
func (o *AdamW) paramAt(v int) int {
	i, _ := slices.BinarySearch(o.off, v+1) // the first offset past v
	return i - 1
}

// Moments returns the first and second moment buffers of parameter i (for checkpoints).
func (o *AdamW) Moments(i int) (m, v []float32) { return o.m[i], o.v[i] }

// Params lists the parameters the optimizer updates.
func (o *AdamW) Params() []bert.Param { return o.params }

// parallelUpdateMin is the smallest number of values that AdamW.Apply (all the parameters
// together) and ClipGradNorm's scaling (one gradient) split over the threads
// (tensor.ParallelFor): at 1<<16 floats the update takes about 50 µs on one core, several
// times what starting and joining a goroutine costs.
const parallelUpdateMin = 1 << 16

// LinearSchedule is HF's get_linear_schedule_with_warmup: the factor rises linearly from 0 to 1
// over warmup steps, then falls linearly to 0 at total. step counts optimizer steps already taken
// (the first step uses step 0, so with warmup > 0 it has learning rate 0, as in HF).
func LinearSchedule(step, warmup, total int) float64 {
	if step < warmup {
		return float64(step) / float64(max(1, warmup))
	}
	return math.Max(0, float64(total-step)/float64(max(1, total-warmup)))
}

// GradNorm is the global L2 norm of the gradients: the sum of squares (in float64,
// tensor.SumSquares) of each run of normChunk values of each gradient on any goroutine, then
// those sums added in order, run by run and gradient by gradient, so the figure is the same
// bit for bit whatever the number of threads. (Summed one after the other on one goroutine,
// BERT-Base's norm took 50 ms of a 1,660 ms step on two threads; one goroutine a gradient,
// BERT-Tiny's word embeddings, 3.9 M of its 4.4 M parameters, held the other thread idle.)
func GradNorm(grads []bert.Param) float64 {
	type run struct{ g, lo, hi int }
	var runs []run
	for i, g := range grads {
		for lo, n := 0, g.T.Len(); lo < n; lo += normChunk {
			runs = append(runs, run{i, lo, min(lo+normChunk, n)})
		}
	}
	sums := make([]float64, len(runs))
	tensor.ParallelEach(len(runs), func(k int) {
		r := runs[k]
		sums[k] = tensor.SumSquares(grads[r.g].T.Data[r.lo:r.hi])
	})
	var ss float64
	for k := 0; k < len(runs); {
		var sg float64 // one gradient's sum
		for g := runs[k].g; k < len(runs) && runs[k].g == g; k++ {
			sg += sums[k]
		}
		ss += sg
	}
	return math.Sqrt(ss)
}

// normChunk is the run of values whose sum of squares GradNorm takes on one goroutine: 256 KB
// of gradient, about 10 µs of work.
const normChunk = 1 << 16

// ClipCoef is torch.nn.utils.clip_grad_norm_'s coefficient for a gradient of norm norm:
// maxNorm/(norm+1e-6) rounded to float32 when that is below 1, else 1 (no clipping).
func ClipCoef(norm, maxNorm float64) float32 {
	if coef := maxNorm / (norm + 1e-6); coef < 1 {
		return float32(coef)
	}
	return 1
}

// ClipGradNorm scales the gradients so that their global L2 norm is at most maxNorm, as
// torch.nn.utils.clip_grad_norm_ (coefficient maxNorm/(norm+1e-6)); it returns the norm before
// clipping. The training loops fold the scaling into the optimizer instead (GradNorm, ClipCoef,
// AdamW.ApplyScaled).
func ClipGradNorm(grads []bert.Param, maxNorm float64) float64 {
	norm := GradNorm(grads)
	if c := ClipCoef(norm, maxNorm); c < 1 {
		for _, g := range grads {
			d := g.T.Data
			if len(d) < parallelUpdateMin {
				tensor.Scale(d, c)
				continue
			}
			tensor.ParallelFor(len(d), func(lo, hi int) { tensor.Scale(d[lo:hi], c) })
		}
	}
	return norm
}
