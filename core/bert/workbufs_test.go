package bert

import (
	"math"
	"testing"
)

// TestWorkBufsHoldNoStaleNumbers: the attention's work buffers come from workBufs holding
// whatever their last user left. With the list full of NaN-filled buffers, a training step
// (dropout on) gives the losses and gradients of a step that starts with the list empty (fresh
// zeroed buffers) bit for bit: each buffer is written whole before it is read. BERT-Tiny with
// absolute positions, relative_key (the query term's buffer) and relative_key_query (both).
func TestWorkBufsHoldNoStaleNumbers(t *testing.T) {
	for _, pos := range []string{"", PositionRelativeKey, PositionRelativeKeyQuery} {
		t.Run("positions="+pos, func(t *testing.T) {
			c, err := Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			c.PositionEmbeddingType = pos
			m, err := NewRandom(c, AllHeads, 3)
			if err != nil {
				t.Fatal(err)
			}
			const B, S = 2, 24
			b := Batch{B: B, S: S, InputIDs: make([]int, B*S), TokenTypeIDs: make([]int, B*S)}
			labels := make([]int, B*S)
			for i := range b.InputIDs {
				b.InputIDs[i] = 1000 + (i*7919)%(c.VocabSize-1000)
				labels[i] = IgnoreIndex
				if i%4 == 1 {
					labels[i] = b.InputIDs[i]
				}
			}
			step := func(poison bool) ([]Param, Losses) {
				// Empty the list, then fill it with NaNs or leave it empty.
				for range maxIdleWorkBufs {
					workBufs.Get()
				}
				if poison {
					for range maxIdleWorkBufs {
						buf := make([]float32, S*(2*S-1))
						for i := range buf {
							buf[i] = float32(math.NaN())
						}
						workBufs.Put(&buf)
					}
				}
				g := m.NewGrads()
				l, err := m.ForwardBackward(b, labels, []int{0, 1}, TrainOptions{Dropout: true, Seed: 5}, g)
				if err != nil {
					t.Fatal(err)
				}
				return g.Params(), l
			}
			want, wantLoss := step(false)
			got, gotLoss := step(true)
			if gotLoss != wantLoss {
				t.Fatalf("losses %+v with NaN-filled work buffers, %+v with fresh ones", gotLoss, wantLoss)
			}
			for i, p := range got {
				for j, v := range p.T.Data {
					if math.Float32bits(v) != math.Float32bits(want[i].T.Data[j]) {
						t.Fatalf("%s[%d] = %g with NaN-filled work buffers, %g with fresh ones", p.Name, j, v, want[i].T.Data[j])
					}
				}
			}
		})
	}
}
