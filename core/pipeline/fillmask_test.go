package pipeline

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// topKSoftmax against a float64 softmax computed here with math.Exp: the k ids in order
// (ties to the lower id), and each score within 1e-6 relative, for a vocabulary-sized row,
// a row with ties, large and negative logits, and k past the row's length.
func TestTopKSoftmax(t *testing.T) {
	tok := loadFixture(t).Tokenizer
	rng := rand.New(rand.NewPCG(13, 14))
	vocab := make([]float32, tok.Vocab().Len())
	for i := range vocab {
		vocab[i] = float32(rng.NormFloat64() * 4)
	}
	tests := []struct {
		name   string
		logits []float32
		k      int
	}{
		{"vocabulary", vocab, 5},
		{"ties", []float32{1, 3, 3, 2, 3, -1}, 4},
		{"large", []float32{80, 95.5, 60, 95.5, -200, 10}, 3},
		{"k past the row", []float32{0.5, -0.25, 2}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := topKSoftmax(tc.logits, tc.k, tok)
			mx := math.Inf(-1)
			for _, v := range tc.logits {
				mx = math.Max(mx, float64(v))
			}
			var sum float64
			for _, v := range tc.logits {
				sum += math.Exp(float64(v) - mx)
			}
			ids := make([]int, len(tc.logits))
			for i := range ids {
				ids[i] = i
			}
			sort.SliceStable(ids, func(a, b int) bool { return tc.logits[ids[a]] > tc.logits[ids[b]] })
			want := ids[:min(tc.k, len(ids))]
			if len(got) != len(want) {
				t.Fatalf("%d predictions, want %d", len(got), len(want))
			}
			for i, p := range got {
				ref := math.Exp(float64(tc.logits[p.ID])-mx) / sum
				if p.ID != want[i] {
					t.Fatalf("prediction %d is id %d, want %d", i, p.ID, want[i])
				}
				if d := math.Abs(p.Score-ref) / ref; d > 1e-6 {
					t.Errorf("id %d: score %g, float64 softmax %g (relative %.2g)", p.ID, p.Score, ref, d)
				}
				if want := tok.Vocab().Token(p.ID); p.Token != want {
					t.Errorf("id %d: token %q, want %q", p.ID, p.Token, want)
				}
			}
			if t.Failed() {
				t.Logf("predictions: %+v", got)
			}
		})
	}
}
