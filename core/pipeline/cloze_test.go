package pipeline

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/dataset"
)

// TestCloze ranks accepted words among the fixture model's own top 5: a sentence whose accepted
// word is the model's third guess (in upper case) gets rank 3, one whose word is not guessed
// rank 0, and the shares count only sentences with accepted words.
func TestCloze(t *testing.T) {
	f := loadFixture(t)
	const text = "the cat sat on the [MASK] ."
	r, err := FillMask(f.Model, f.Tokenizer, text, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	third := r.Masks[0].Predictions[2].Token
	items := []dataset.Cloze{
		{Text: text, Accept: []string{"no-such-word", strings.ToUpper(third)}},
		{Text: text, Accept: []string{"no-such-word"}},
		{Text: text},
	}
	rs, err := Cloze(f.Model, f.Tokenizer, items, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{3, 0, 0} {
		if rs[i].Rank != want {
			t.Errorf("sentence %d: rank %d, want %d (top 5 %v)", i, rs[i].Rank, want, rs[i].Predictions)
		}
	}
	for _, c := range []struct {
		k     int
		share float64
	}{{1, 0}, {2, 0}, {3, 0.5}, {5, 0.5}} {
		if got, n := ClozeShare(rs, c.k); got != c.share || n != 2 {
			t.Errorf("top %d: share %g of %d, want %g of 2", c.k, got, n, c.share)
		}
	}
	got, err := ClozeMetrics(f.Model, f.Tokenizer, map[string][]dataset.Cloze{"a": items, "b": items[:1]})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"cloze_a_top1": 0, "cloze_a_top5": 0.5, "cloze_b_top1": 0, "cloze_b_top5": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ClozeMetrics = %v, want %v", got, want)
	}
	if _, err := Cloze(f.Model, f.Tokenizer, []dataset.Cloze{{Text: "[MASK] and [MASK]"}}, 5); err == nil || !strings.Contains(err.Error(), "2 masks") {
		t.Errorf("two masks: %v", err)
	}
}
