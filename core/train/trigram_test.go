package train

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// The trigram baseline on the toy corpus, worked out by hand.
func TestTrigramModel(t *testing.T) {
	tok, docs := toyCorpus(t)
	tm, err := NewTrigramModel(docs, tok)
	if err != nil {
		t.Fatal(err)
	}
	id := func(w string) int {
		i, ok := tok.Vocab().ID(w)
		if !ok {
			t.Fatalf("%q is not in the toy vocabulary", w)
		}
		return i
	}
	mask := tok.MaskID()
	tests := []struct {
		l, r int
		want string
		why  string
	}{
		{id("on"), id("mat"), "the", "on the mat"},
		{id("bird"), id("again"), "sang", "the bird sang again"},
		{id("the"), id("sat"), "cat", "the cat sat, the dog sat: a tie, the smaller id"},
		{id("we"), id("jam"), "eat", "never together: c(we, eat) 2 beats c(we, drink) 1 and c(and, jam) 1"},
		{id("sun"), id("moon"), "the", "never together: c(the, moon) 2 beats c(sun, is) 1 and c(sun, and) 1"},
		{mask, mask, "the", "no neighbour seen: the most frequent token"},
	}
	for _, tc := range tests {
		if got := tm.Predict(tc.l, tc.r); got != id(tc.want) {
			t.Errorf("%s: predicted %q, want %q", tc.why, tok.Vocab().Token(got), tc.want)
		}
	}
	ig := bert.IgnoreIndex
	insts := []Instance{
		{InputIDs: []int{tok.CLSID(), id("the"), mask, id("sat"), tok.SEPID()}, Labels: []int{ig, ig, id("cat"), ig, ig}},
		{InputIDs: []int{tok.CLSID(), id("we"), mask, id("jam"), tok.SEPID()}, Labels: []int{ig, ig, id("drink"), ig, ig}},
	}
	if c, n := tm.Evaluate(insts); c != 1 || n != 2 {
		t.Errorf("Evaluate: %d of %d right, want 1 of 2", c, n)
	}
}
