package bert

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

func TestDropoutStatistics(t *testing.T) {
	const n = 200000
	for _, p := range []float64{0, 0.1, 0.5, 0.9, 1} {
		x := make([]float32, n)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range x {
			x[i] = float32(rng.NormFloat64()) + 3 // never 0 before dropout
		}
		orig := slices.Clone(x)
		keep := make([]uint8, n)
		Dropout(x, keep, p, 11, 22)
		scale := float32(1 / (1 - p))
		if p == 1 {
			scale = 0 // every element dropped
		}
		zeros := 0
		for i, v := range x {
			switch {
			case keep[i] == 0 && v == 0:
				zeros++
			case keep[i] == 1 && v == orig[i]*scale:
			default:
				t.Fatalf("p %g: element %d: %g -> %g with keep %d (scale %g)", p, i, orig[i], v, keep[i], scale)
			}
		}
		frac := float64(zeros) / n
		sigma := math.Sqrt(p * (1 - p) / n)
		if math.Abs(frac-p) > 5*sigma+1e-9 {
			t.Errorf("p %g: %.5f zeroed, want %g ± %.5f", p, frac, p, 5*sigma)
		}

		// The gradient goes through the same mask with the same scale.
		dx := make([]float32, n)
		for i := range dx {
			dx[i] = 1
		}
		DropoutBackward(dx, keep, p)
		for i, v := range dx {
			if want := float32(keep[i]) * scale; v != want {
				t.Fatalf("p %g: backward element %d: %g, want %g", p, i, v, want)
			}
		}

		// Same (seed, stream): same mask; another stream or seed: another mask, independent.
		if p == 0 || p == 1 {
			continue
		}
		again, other, seed2 := make([]uint8, n), make([]uint8, n), make([]uint8, n)
		Dropout(slices.Clone(orig), again, p, 11, 22)
		Dropout(slices.Clone(orig), other, p, 11, 23)
		Dropout(slices.Clone(orig), seed2, p, 12, 22)
		if !slices.Equal(keep, again) {
			t.Errorf("p %g: same seed and stream, different masks", p)
		}
		for _, o := range [][]uint8{other, seed2} {
			both := 0
			for i := range keep {
				if keep[i] == 0 && o[i] == 0 {
					both++
				}
			}
			frac := float64(both) / n
			sigma := math.Sqrt(p * p * (1 - p*p) / n)
			if math.Abs(frac-p*p) > 5*sigma {
				t.Errorf("p %g: %.5f dropped in both of two streams, want %g ± %.5f", p, frac, p*p, 5*sigma)
			}
		}
	}
}

// TestTrainingDropoutMasks checks the masks a training pass draws: the configured fraction at
// each site, and the same masks (and outputs) whatever the number of goroutines.
func TestTrainingDropoutMasks(t *testing.T) {
	m := gradCheckModel(t, "gelu", true, AllHeads)
	m.Config.HiddenDropoutProb, m.Config.AttentionProbsDropoutProb = 0.25, 0.4
	b := Batch{B: 3, S: 8, InputIDs: make([]int, 24)}
	for i := range b.InputIDs {
		b.InputIDs[i] = (i * 7) % m.Config.VocabSize
	}
	opt := TrainOptions{Dropout: true, Seed: 99}
	run := func(procs int) *Activations {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		a, err := m.ForwardTrain(b, opt)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := run(1)
	var hidden, attn []uint8
	hidden = append(hidden, a.emb.keep...)
	for _, la := range a.layers {
		hidden = append(append(hidden, la.keep1...), la.keep2...)
		attn = append(attn, la.keepP...)
	}
	for _, site := range []struct {
		name string
		keep []uint8
		p    float64
	}{{"hidden", hidden, 0.25}, {"attention", attn, 0.4}} {
		zeros := 0
		for _, k := range site.keep {
			if k == 0 {
				zeros++
			}
		}
		n := float64(len(site.keep))
		frac, sigma := float64(zeros)/n, math.Sqrt(site.p*(1-site.p)/n)
		if math.Abs(frac-site.p) > 5*sigma {
			t.Errorf("%s dropout: %.4f of %d zeroed, want %g ± %.4f", site.name, frac, len(site.keep), site.p, 5*sigma)
		}
	}
	a4 := run(4)
	if !slices.Equal(a.Hidden.Data, a4.Hidden.Data) || !slices.Equal(a.layers[1].keepP, a4.layers[1].keepP) {
		t.Error("dropout masks depend on GOMAXPROCS")
	}
}
