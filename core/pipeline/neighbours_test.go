package pipeline

import (
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/tensor"
)

// Hand-made attention rows: head 0 puts all on the previous token (the first token on itself),
// head 1 half on the next token and half on itself (the last all on itself).
func TestNeighbourShares(t *testing.T) {
	const A, S = 2, 4
	att := tensor.New(1, A, S, S)
	for i := range S {
		prev := max(i-1, 0)
		att.Data[(0*S+i)*S+prev] = 1
		if i < S-1 {
			att.Data[(1*S+i)*S+i+1] = 0.5
			att.Data[(1*S+i)*S+i] = 0.5
		} else {
			att.Data[(1*S+i)*S+i] = 1
		}
	}
	got := NeighbourShares([]*tensor.Tensor{att}, A, S)
	want := []NeighbourShare{{0, 0, 1, 0}, {0, 1, 0, 0.5}}
	if len(got) != 2 {
		t.Fatalf("%d shares", len(got))
	}
	for i := range want {
		if got[i].Layer != want[i].Layer || got[i].Head != want[i].Head || math.Abs(got[i].Prev-want[i].Prev) > 1e-9 || math.Abs(got[i].Next-want[i].Next) > 1e-9 {
			t.Errorf("head %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// On a model, the averages over texts equal the traced attentions' own, and every share is a
// probability.
func TestNeighbourHeads(t *testing.T) {
	f := loadFixture(t)
	texts := []string{"the cat sat on the mat", "a dog"}
	got, err := NeighbourHeads(f.Model, f.Tokenizer, texts)
	if err != nil {
		t.Fatal(err)
	}
	var want []NeighbourShare
	pairs := 0
	for _, text := range texts {
		enc, out, err := traced(f.Model, f.Tokenizer, text, nil)
		if err != nil {
			t.Fatal(err)
		}
		S := enc.Len()
		s := NeighbourShares(out.Trace.Attentions, f.Model.Config.NumAttentionHeads, S)
		if want == nil {
			want = make([]NeighbourShare, len(s))
		}
		for i := range s {
			want[i].Prev += s[i].Prev * float64(S-1)
			want[i].Next += s[i].Next * float64(S-1)
		}
		pairs += S - 1
	}
	for i := range got {
		if math.Abs(got[i].Prev-want[i].Prev/float64(pairs)) > 1e-9 || math.Abs(got[i].Next-want[i].Next/float64(pairs)) > 1e-9 || got[i].Prev < 0 || got[i].Prev > 1 {
			t.Errorf("head %d.%d: %+v", got[i].Layer, got[i].Head, got[i])
		}
	}
	if _, err := NeighbourHeads(f.Model, f.Tokenizer, nil); err == nil {
		t.Error("no texts: no error")
	}
}
