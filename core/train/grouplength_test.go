package train

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestGroupByLength checks groupByLength's order on lengths drawn at random: it is a
// permutation of the order it was given; within one megabatch every full batch is a run of the
// megabatch sorted by length (no two batches' length ranges overlap); the short last batch
// holds the shortest features and stays last; the first batch holds the longest feature, and
// the others are not left longest first; and the
// padding of batches cut from it is less than from the plain shuffled order.
func TestGroupByLength(t *testing.T) {
	for _, tc := range []struct {
		n, batch int
	}{
		{300, 16}, // the page's Training lab: 18 full batches and one of 12
		{64, 8},   // whole batches only
		{5, 8},    // one short batch
		{1000, 4}, // several megabatches (50 · 4 = 200 features each)
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.n), 1))
		lengths := make([]int, tc.n)
		for i := range lengths {
			lengths[i] = 3 + rng.IntN(60)
		}
		length := func(i int) int { return lengths[i] }
		order := rng.Perm(tc.n)
		plain := slices.Clone(order)
		groupByLength(order, length, tc.batch, rng)

		if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, slices.Sorted(slices.Values(plain))) {
			t.Fatalf("n %d batch %d: the grouped order is not a permutation of the features", tc.n, tc.batch)
		}
		if tc.n >= tc.batch {
			longest := slices.Max(lengths)
			if !slices.ContainsFunc(order[:tc.batch], func(i int) bool { return lengths[i] == longest }) {
				t.Errorf("n %d batch %d: the first batch does not hold the longest feature (%d)", tc.n, tc.batch, longest)
			}
		}
		padding := func(o []int) (pad int) {
			for lo := 0; lo < len(o); lo += tc.batch {
				b := o[lo:min(lo+tc.batch, len(o))]
				longest := 0
				for _, i := range b {
					longest = max(longest, lengths[i])
				}
				for _, i := range b {
					pad += longest - lengths[i]
				}
			}
			return pad
		}
		if tc.n > tc.batch && padding(order) >= padding(plain)/3 {
			t.Errorf("n %d batch %d: %d padding positions grouped against %d shuffled, want under a third", tc.n, tc.batch, padding(order), padding(plain))
		}
		mega := 50 * tc.batch
		if tc.n <= mega {
			full := tc.n / tc.batch
			type span struct{ lo, hi int }
			var spans []span
			for k := 0; k < full; k++ {
				b := order[k*tc.batch : (k+1)*tc.batch]
				s := span{lengths[b[0]], lengths[b[0]]}
				for _, i := range b {
					s.lo, s.hi = min(s.lo, lengths[i]), max(s.hi, lengths[i])
				}
				spans = append(spans, s)
			}
			for a := range spans {
				for b := range spans {
					if a != b && spans[a].lo < spans[b].hi && spans[b].lo < spans[a].hi {
						t.Errorf("n %d batch %d: batches %d (lengths %d-%d) and %d (%d-%d) overlap", tc.n, tc.batch, a, spans[a].lo, spans[a].hi, b, spans[b].lo, spans[b].hi)
					}
				}
			}
			if rest := order[full*tc.batch:]; len(rest) > 0 && full > 0 {
				shortest := slices.MinFunc(spans, func(a, b span) int { return a.lo - b.lo }).lo
				for _, i := range rest {
					if lengths[i] > shortest {
						t.Errorf("n %d batch %d: the short last batch holds length %d, longer than a full batch's %d", tc.n, tc.batch, lengths[i], shortest)
					}
				}
			}
			if full > 2 && slices.IsSortedFunc(spans, func(a, b span) int { return b.lo - a.lo }) {
				t.Errorf("n %d batch %d: the batches run from longest to shortest: not shuffled", tc.n, tc.batch)
			}
		}
	}
}

// TestFinetuneGroupByLength: with GroupByLength an epoch still trains on every feature once,
// in fewer padded positions than without, and the tagger still learns.
func TestFinetuneGroupByLength(t *testing.T) {
	tok := ftTokenizer(t)
	labels, td, dd := taggingSets(t, tok)
	positions := map[bool]int{}
	for _, grouped := range []bool{false, true} {
		c := DefaultFinetune()
		c.Epochs, c.BatchSize, c.LR, c.Seed, c.GroupByLength = 6, 16, 3e-3, 1, grouped
		f, err := NewFinetuner(ftModel(t, tok, bert.TokenClassification, labels), td, dd, c)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for epoch := range c.Epochs {
			seen := make([]int, td.Len())
			for range f.StepsPerEpoch {
				at := f.pos
				if _, err := f.Step(ctx); err != nil {
					t.Fatal(err)
				}
				idx := f.order[at:min(at+c.BatchSize, td.Len())] // the batch Step took
				b, _, _ := td.Batch(idx)
				positions[grouped] += b.B * b.S
				for _, i := range idx {
					seen[i]++
				}
			}
			for i, n := range seen {
				if n != 1 {
					t.Fatalf("grouped %v, epoch %d: feature %d trained on %d times", grouped, epoch, i, n)
				}
			}
			if _, err := f.Evaluate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if ev := f.event(EventStep); ev.Positions != int64(positions[grouped]) || ev.Tokens >= ev.Positions {
			t.Errorf("grouped %v: the run's events count %d positions and %d tokens, want the %d positions of its batches, more than the tokens", grouped, ev.Positions, ev.Tokens, positions[grouped])
		}
		// The commonest tag is a third of the tokens.
		if got := f.Best; got["token_accuracy"] < 0.9 {
			t.Errorf("grouped by length %v: dev %v, want token accuracy >= 0.9", grouped, got)
		}
	}
	if positions[true] >= positions[false] {
		t.Errorf("%d padded positions grouped by length against %d without, want fewer", positions[true], positions[false])
	}
	t.Logf("padded positions over %d epochs: %d shuffled, %d grouped by length", 6, positions[false], positions[true])
}
