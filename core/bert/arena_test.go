package bert_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestTrainingReusesNoStaleNumbers runs training steps of changing shapes (longer, shorter,
// padded) with one Grads, whose buffers the steps reuse, and checks each step's losses and
// gradients bit for bit against a step with fresh Grads: a buffer that a step reads before
// writing it in full would carry numbers over from the step before. BERT-Tiny with absolute
// and with relative_key_query positions (whose backward has buffers of its own), dropout on;
// and a token-classification head on the same body.
func TestTrainingReusesNoStaleNumbers(t *testing.T) {
	shapes := []scratchShape{{2, 32, 0}, {3, 9, 4}, {1, 16, 0}, {2, 32, 5}, {4, 5, 2}, {2, 32, 0}}
	for _, pos := range []string{"", bert.PositionRelativeKeyQuery} {
		t.Run("positions="+pos, func(t *testing.T) {
			c, err := bert.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			if pos != "" {
				c.PositionEmbeddingType = pos
			}
			m, err := bert.NewRandom(c, bert.AllHeads, 7)
			if err != nil {
				t.Fatal(err)
			}
			kept := m.NewGrads()
			for i, s := range shapes {
				b := s.batch(c.VocabSize)
				labels := make([]int, s.B*s.S)
				for j := range labels {
					labels[j] = bert.IgnoreIndex
					if j%3 == 1 {
						labels[j] = b.InputIDs[j]
					}
				}
				nsp := make([]int, s.B)
				for j := range nsp {
					nsp[j] = j % 2
				}
				opt := bert.TrainOptions{Dropout: true, Seed: uint64(i)}
				step := func(g *bert.Grads) bert.Losses {
					g.Zero()
					l, err := m.ForwardBackward(b, labels, nsp, opt, g)
					if err != nil {
						t.Fatal(err)
					}
					return l
				}
				fresh := m.NewGrads()
				want := step(fresh)
				if got := step(kept); got != want {
					t.Fatalf("step %d %v: losses %+v, with fresh gradients %+v", i, s, got, want)
				}
				sameGrads(t, fmt.Sprint("step ", i, " ", s), kept.Params(), fresh.Params())
			}
		})
	}
	t.Run("token-classification", func(t *testing.T) {
		tm, err := bert.NewTaskModel(newTinyModel(t), bert.TokenClassification, []string{"O", "B-X", "I-X"}, 1)
		if err != nil {
			t.Fatal(err)
		}
		kept := tm.NewGrads()
		for i, s := range shapes {
			b := s.batch(tm.Bert.Config.VocabSize)
			labels := make([]int, s.B*s.S)
			for j := range labels {
				labels[j] = j % 3
			}
			opt := bert.TrainOptions{Dropout: true, Seed: uint64(i)}
			fresh := tm.NewGrads()
			want, _, err := tm.ForwardBackward(b, labels, opt, fresh)
			if err != nil {
				t.Fatal(err)
			}
			kept.Bert.Zero()
			kept.Head.W.Zero()
			kept.Head.B.Zero()
			got, _, err := tm.ForwardBackward(b, labels, opt, kept)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("step %d %v: loss %g, with fresh gradients %g", i, s, got, want)
			}
			sameGrads(t, fmt.Sprint("step ", i, " ", s), kept.Bert.Params(), fresh.Bert.Params())
		}
	})
}

// sameGrads fails the test at the first gradient that differs bit for bit.
func sameGrads(t *testing.T, what string, got, want []bert.Param) {
	t.Helper()
	for i, p := range got {
		for j, v := range p.T.Data {
			if math.Float32bits(v) != math.Float32bits(want[i].T.Data[j]) {
				t.Fatalf("%s: %s[%d] = %g, with fresh gradients %g", what, p.Name, j, v, want[i].T.Data[j])
			}
		}
	}
}
