package bert

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/tensor"
)

// TestCrossEntropyBackwardBias: the cross entropy that also sums the bias gradient (the MLM
// decoder's, row by row on one goroutine) gives the loss, the logits' gradient and the bias
// gradient of CrossEntropyBackward followed by tensor.SumRows, bit for bit, on one and two
// goroutines, with ignored rows and a bias gradient that already holds values.
func TestCrossEntropyBackwardBias(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(3, 14))
	for _, sh := range []struct{ rows, c int }{{1, 2}, {5, 300}, {7, 33}, {146, 3001}} {
		logits := make([]float32, sh.rows*sh.c)
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 3)
		}
		labels := make([]int, sh.rows)
		for i := range labels {
			labels[i] = rng.IntN(sh.c)
			if i%4 == 3 {
				labels[i] = IgnoreIndex
			}
		}
		db0 := make([]float32, sh.c)
		for i := range db0 {
			db0[i] = float32(rng.NormFloat64())
		}
		wantDl := make([]float32, len(logits))
		wantLoss, wantN, err := CrossEntropyBackward(wantDl, logits, sh.c, labels, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		wantDb := slices.Clone(db0)
		tensor.SumRows(wantDb, wantDl, sh.c)
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			what := fmt.Sprintf("%dx%d on %d goroutines", sh.rows, sh.c, procs)
			dl, db := make([]float32, len(logits)), slices.Clone(db0)
			loss, n, err := crossEntropyBackward(dl, logits, sh.c, labels, 0.5, db)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(loss) != math.Float64bits(wantLoss) || n != wantN {
				t.Errorf("%s: loss %v over %d rows, want %v over %d", what, loss, n, wantLoss, wantN)
			}
			for _, c := range []struct {
				name      string
				got, want []float32
			}{{"dlogits", dl, wantDl}, {"dbias", db, wantDb}} {
				for i := range c.want {
					if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
						t.Fatalf("%s: %s[%d] = %v, want %v", what, c.name, i, c.got[i], c.want[i])
					}
				}
			}
		}
	}
	if _, _, err := crossEntropyBackward(make([]float32, 4), make([]float32, 4), 2, []int{0, 1}, 1, make([]float32, 3)); err == nil {
		t.Error("a bias gradient of 3 for 2 classes: no error")
	}
}
