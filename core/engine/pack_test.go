package engine

import (
	"encoding/json"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/hf"
)

// PackForEval packs BERT-Base beside its raw weights and BERT-Large in their place (by the
// presets' parameter counts, without allocating them).
func TestPackRule(t *testing.T) {
	for _, tc := range []struct {
		preset  string
		inPlace bool
	}{{"tiny", false}, {"mini", false}, {"base", false}, {"large", true}} {
		c, err := bert.Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		if got := packInPlace(c.ParamCount(bert.AllHeads)); got != tc.inPlace {
			t.Errorf("%s (%d parameters): packed in place %v, want %v", tc.preset, c.ParamCount(bert.AllHeads), got, tc.inPlace)
		}
	}
}

// An engine whose model is packed in place (as a model past packLimit is) gives the answers
// of an engine packed beside its raw weights: fill-mask without unpacking anything, then the
// layer steps and the attributions, which unpack the raw weights they read.
func TestInPlacePackedAnswers(t *testing.T) {
	beside := openFixture(t)
	f, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	f.Model.PackWeightsInPlace()
	lean, err := New("tiny", f.Model, f.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, get func(e *Engine) (any, error)) {
		t.Helper()
		w, err := get(beside)
		if err != nil {
			t.Fatal(err)
		}
		g, err := get(lean)
		if err != nil {
			t.Fatal(err)
		}
		wj, _ := json.Marshal(w)
		gj, _ := json.Marshal(g)
		if string(wj) != string(gj) {
			t.Fatalf("%s packed in place:\n%s\npacked beside the raw weights:\n%s", what, gj, wj)
		}
	}
	const text = "the cat sat on the [MASK] ."
	same("fill-mask", func(e *Engine) (any, error) { return e.FillMask(text, nil, 5) })
	same("parameters", func(e *Engine) (any, error) { return e.Info().Parameters, nil })
	if !lean.Model().RawReleased() {
		t.Fatal("fill-mask and info unpacked the raw weights")
	}
	same("steps", func(e *Engine) (any, error) { return e.Steps(text, 1, 3) })
	if lean.Model().RawReleased() {
		t.Fatal("the layer steps read raw weights that are still released")
	}
	same("attributions", func(e *Engine) (any, error) {
		return e.Attributions(explain.Request{Text: text, Method: explain.MethodIG, Steps: 4, Baseline: "pad"})
	})
}
