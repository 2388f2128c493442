package explain

import (
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/tokenizer"
)

func TestExplainerTargets(t *testing.T) {
	f := loadFixture(t)
	r := loadReference(t)
	pre := &Explainer{Model: PreTraining(f.Model), Tok: f.Tokenizer}
	models := r.models(t)
	cls := &Explainer{Model: models["class"], Tok: f.Tokenizer}
	tag := &Explainer{Model: models["tag"], Tok: f.Tokenizer}
	const text, pair = "the city of paris is [MASK]", "the big cat"
	cases := []struct {
		name string
		e    *Explainer
		req  Request
		want Target
		err  string
	}{
		{"default: top prediction", pre, Request{Text: text, Pair: pair}, Target{Kind: MaskedToken, Position: 6, Index: r.Candidate}, ""},
		{"word", pre, Request{Text: text, Pair: pair, Target: "paris"}, Target{Kind: MaskedToken, Position: 6, Index: 1010}, ""},
		{"isnext", pre, Request{Text: text, Pair: pair, Target: "isnext"}, Target{Kind: IsNext}, ""},
		{"default: isnext without a mask", pre, Request{Text: "the city", Pair: pair}, Target{Kind: IsNext}, ""},
		{"class by number", cls, Request{Text: text, Target: "class:1"}, Target{Kind: Class, Index: 1}, ""},
		{"class by label", cls, Request{Text: text, Target: "class:LABEL_2"}, Target{Kind: Class, Index: 2}, ""},
		{"tag", tag, Request{Text: text, Target: "tag:2:4"}, Target{Kind: Tag, Position: 2, Index: 4}, ""},
		{"a continuation piece as it stands", pre, Request{Text: text, Target: "##s"}, Target{Kind: MaskedToken, Position: 6, Index: pieceID(t, pre, "##s")}, ""},
		{"an unused token as it stands", pre, Request{Text: text, Target: "[unused5]"}, Target{Kind: MaskedToken, Position: 6, Index: pieceID(t, pre, "[unused5]")}, ""},
		{"a piece not in the vocabulary", pre, Request{Text: text, Target: "##zzzzqqq"}, Target{}, "word pieces"},
		{"word of several pieces", pre, Request{Text: text, Target: "zzzzqqq"}, Target{}, "word pieces"},
		{"word without a mask", pre, Request{Text: "the city", Target: "paris"}, Target{}, "needs a [MASK]"},
		{"no default", pre, Request{Text: "the city"}, Target{}, "no default target"},
		{"tag without position", tag, Request{Text: text, Target: "tag:x"}, Target{}, "tag:TOKEN:TAG"},
		{"tag default", tag, Request{Text: text}, Target{}, "tag:TOKEN:TAG"},
		{"tag position out of range", tag, Request{Text: text, Target: "tag:99:1"}, Target{}, "outside"},
		{"class label unknown", cls, Request{Text: text, Target: "class:nope"}, Target{}, "neither a number nor a label"},
		{"word on a classifier", cls, Request{Text: text, Target: "paris"}, Target{}, "fine-tuned"},
		{"bad method", pre, Request{Text: text, Method: "lime"}, Target{}, "method"},
		{"bad baseline", pre, Request{Text: text, Method: "ig", Baseline: "zero"}, Target{}, "baseline"},
		{"too many steps", pre, Request{Text: text, Method: "ig", Steps: 257}, Target{}, "steps"},
		{"empty text", pre, Request{Text: "  "}, Target{}, "empty text"},
	}
	for _, c := range cases {
		rep, err := c.e.Attribute(c.req)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if rep.Target.Target != c.want {
			t.Errorf("%s: target %+v, want %+v", c.name, rep.Target.Target, c.want)
		}
		if len(rep.Attribution.Scores) != len(rep.Tokens) {
			t.Errorf("%s: %d scores for %d tokens", c.name, len(rep.Attribution.Scores), len(rep.Tokens))
		}
	}
}

func TestExplainerParts(t *testing.T) {
	f := loadFixture(t)
	e := &Explainer{Model: PreTraining(f.Model), Tok: f.Tokenizer}
	req := Request{Text: "the city of paris is [MASK]", Pair: "the big cat", Target: "paris", Method: "ig", Steps: 16,
		Baseline: "pad", Ablate: []Head{{0, 1}, {1, 2}}, TopK: 3}
	rep, err := e.Attribute(req)
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.Attribution; a.Steps != 16 || a.Baseline.Name != "pad" || a.RelGap >= 0.01 {
		t.Errorf("integrated gradients: %d steps, baseline %s, gap %.3g%%", a.Steps, a.Baseline.Name, 100*a.RelGap)
	}
	lens, err := e.Lens(req)
	if err != nil {
		t.Fatal(err)
	}
	if l := lens.Lens.Positions[0].Layers; len(l) != 3 || len(l[0].Top) != 3 || l[2].Candidates == nil || l[2].Top[0].Token == "" {
		t.Errorf("lens: %+v", l)
	}
	ab, err := e.Ablation(req)
	if err != nil {
		t.Fatal(err)
	}
	if p := ab.Ablation.Positions[0]; len(p.Before) != 3 || p.After[0].Token == "" {
		t.Errorf("ablation: %+v", p)
	}
	imp, err := e.Importance(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Importance.Raw) != 2 || len(imp.Importance.Raw[0]) != 4 {
		t.Errorf("importance: %+v", imp.Importance)
	}
	// The label of the target word counts: the importance differs from the top prediction's.
	imp2, err := e.Importance(Request{Text: req.Text, Pair: req.Pair})
	if err != nil {
		t.Fatal(err)
	}
	if imp.Importance.Raw[0][0] == imp2.Importance.Raw[0][0] {
		t.Error("importance with the target word equals that with the top prediction")
	}
	for _, bad := range []Request{{Text: "no mask here"}, {Text: "[MASK]", TopK: 101}, {Text: "[MASK]", Ablate: []Head{{5, 0}}}} {
		_, e1 := e.Lens(bad)
		_, e2 := e.Ablation(bad)
		if e1 == nil && e2 == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	noMLM := *f.Model
	noMLM.MLM = nil
	e2 := &Explainer{Model: PreTraining(&noMLM), Tok: f.Tokenizer}
	if _, err := e2.Lens(Request{Text: "[MASK]"}); err == nil {
		t.Error("lens without an MLM head: no error")
	}
}

// pieceID is the vocabulary id of a token that Tokenize would split ("##s": "#", "#", "s").
func pieceID(t *testing.T, e *Explainer, piece string) int {
	t.Helper()
	id, ok := e.Tok.TokenID(piece)
	if !ok {
		t.Fatalf("the vocabulary has no %q", piece)
	}
	if toks := e.Tok.(*tokenizer.Tokenizer).Tokenize(piece); len(toks) == 1 && toks[0].ID == id {
		t.Fatalf("%q tokenizes to itself: the case would not test the lookup", piece)
	}
	return id
}
