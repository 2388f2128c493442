package modelcard

import (
	"strings"
	"testing"
)

// TestDefaultCloze: the card's sets are issue 25's: 60 everyday sentences (bar 70%) and 40
// simple facts (bar 50%), each sentence with accepted words, lowercase, none twice.
func TestDefaultCloze(t *testing.T) {
	sets, err := DefaultCloze()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		n   int
		bar float64
	}{{60, 0.7}, {40, 0.5}}
	if len(sets) != len(want) {
		t.Fatalf("%d sets, want %d", len(sets), len(want))
	}
	seen := map[string]bool{}
	for i, s := range sets {
		if len(s.Items) != want[i].n || s.Bar != want[i].bar {
			t.Errorf("%s: %d sentences, bar %g; want %d, %g", s.Path, len(s.Items), s.Bar, want[i].n, want[i].bar)
		}
		for _, c := range s.Items {
			if len(c.Accept) == 0 || seen[c.Text] {
				t.Errorf("%s: %q has no accepted word or is there twice", s.Path, c.Text)
			}
			seen[c.Text] = true
			for _, w := range c.Accept {
				if w != strings.ToLower(w) {
					t.Errorf("%s: %q accepts %q, not lowercase", s.Path, c.Text, w)
				}
			}
		}
	}
}
