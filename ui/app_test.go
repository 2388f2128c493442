package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// nativeEngine is the page's Engine over core/engine's, the one the worker marshals for the
// page: the page's logic without a browser.
type nativeEngine struct {
	e   *engine.Engine
	m   *bert.Model // e's model and tokenizer, which tests ask directly for the answers to expect
	tok *tokenizer.Tokenizer
}

func newNativeEngine(t *testing.T) *nativeEngine {
	t.Helper()
	tok, err := tokenizer.LoadDir("../core/tokenizer/testdata/bert-base-uncased")
	if err != nil {
		t.Fatal(err)
	}
	c, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	c.VocabSize = tok.Vocab().Len()
	m, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New("tiny", m, tok)
	if err != nil {
		t.Fatal(err)
	}
	e.Labs = lab.Labs{}
	return &nativeEngine{e: e, m: m, tok: tok}
}

func (e *nativeEngine) Models() (*ModelIndex, error) {
	return &ModelIndex{Models: []ModelRef{{Name: "tiny", Path: "tiny/", Files: []string{"config.json"}}}}, nil
}

// Load answers the engine's ModelInfo through JSON, as the worker hands it to the page.
func (e *nativeEngine) Load(ModelRef) (*ModelInfo, error) {
	b, err := json.Marshal(e.e.Info())
	if err != nil {
		return nil, err
	}
	info := &ModelInfo{}
	return info, json.Unmarshal(b, info)
}

func (e *nativeEngine) LoadFiles(files []LocalFile) (*ModelInfo, error) {
	return nil, errors.New("model.safetensors: not a safetensors file")
}

// pairOf is the engine's optional second segment: none when pair is "".
func pairOf(pair string) *string {
	if pair == "" {
		return nil
	}
	return &pair
}

func (e *nativeEngine) Tokenize(text, pair string) (*Tokens, error) {
	return e.e.Tokenize(text, pairOf(pair))
}

func (e *nativeEngine) FillMask(text, pair string, k int) (*pipeline.FillMaskResult, error) {
	return e.e.FillMask(text, pairOf(pair), k)
}

func (e *nativeEngine) NextSentence(text, pair string) (*pipeline.NSPResult, error) {
	return e.e.NextSentence(text, pair)
}

func (e *nativeEngine) Attention(text, pair string) ([]pipeline.AttentionResult, error) {
	return e.e.Attention(text, pairOf(pair))
}

func (e *nativeEngine) Steps(text string, layer, token int) (*pipeline.StepsResult, error) {
	return e.e.Steps(text, layer, token)
}

func (e *nativeEngine) MaskLab(text string, seed int, wholeWord bool) (*engine.MaskLabResult, error) {
	return e.e.MaskLab(text, uint64(seed), wholeWord)
}

func (e *nativeEngine) NSPPairs(seed, n int) ([]engine.NSPPair, error) {
	return e.e.NSPPairs(uint64(seed), n)
}

func (e *nativeEngine) Samples() ([]string, error) { return e.e.Samples() }

func (e *nativeEngine) Embeddings(sentences []string, opts pipeline.EmbeddingMapOptions) ([]pipeline.EmbeddingMapResult, error) {
	return e.e.Embeddings(sentences, opts)
}

func wordTexts(a *App) []string {
	var s []string
	for _, w := range a.Words {
		s = append(s, strings.Join(w.Pieces, ""))
	}
	return s
}

func TestAppMaskFillAndRoute(t *testing.T) {
	eng := newNativeEngine(t)
	var hash string
	a := &App{Eng: eng, OnRoute: func(h string) { hash = h }}
	a.Start(ParseRoute("#mask?text=The%20unbelievably%20good%20cat.&masks=1"))
	if a.Err != "" || !a.Loaded {
		t.Fatalf("start: loaded %v, err %q", a.Loaded, a.Err)
	}
	if got := wordTexts(a); !slices.Equal(got, []string{"[CLS]", "the", "un##bel##ie##va##bly", "good", "cat", ".", "[SEP]"}) {
		t.Errorf("words %q", got)
	}
	if a.MaskedText != "The [MASK] good cat." || !slices.Equal(a.Order, []int{1}) {
		t.Errorf("masked text %q, order %v", a.MaskedText, a.Order)
	}
	want, err := eng.FillMask("The [MASK] good cat.", "", DefaultTopK)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Preds[1]) != DefaultTopK || a.Preds[1][0] != want.Masks[0].Predictions[0] || a.PredsText != a.MaskedText {
		t.Errorf("predictions for word 1: %+v, want %+v", a.Preds[1], want.Masks[0].Predictions)
	}
	if hash != "#mask?text=The%20unbelievably%20good%20cat.&masks=1" {
		t.Errorf("hash %q", hash)
	}

	a.ToggleMask(3) // "cat"
	if a.MaskedText != "The [MASK] good [MASK]." || len(a.Preds) != 2 || !strings.HasSuffix(hash, "&masks=1,3") {
		t.Errorf("two masks: %q, %d predictions, hash %q", a.MaskedText, len(a.Preds), hash)
	}
	a.Fill(1, "very")
	if a.Text != "The very good cat." || !slices.Equal(a.Masks, []int{3}) || a.MaskedText != "The very good [MASK]." {
		t.Errorf("after fill: text %q, masks %v, masked %q", a.Text, a.Masks, a.MaskedText)
	}
	a.Fill(3, "##s") // a continuation piece joins the word before
	if a.Text != "The very goods." || len(a.Masks) != 0 {
		t.Errorf("after filling a ## piece: %q %v", a.Text, a.Masks)
	}

	a.Typed("a [MASK] here\n")
	if a.Text != "a [MASK] here" || len(a.Masks) != 0 || !slices.Equal(a.Order, []int{1}) || len(a.Preds[1]) == 0 {
		t.Errorf("typed literal mask: text %q masks %v order %v", a.Text, a.Masks, a.Order)
	}

	a.SetView(ViewAttention)
	L, A := eng.m.Config.NumHiddenLayers, eng.m.Config.NumAttentionHeads
	if len(a.Att) != L || a.AttText != a.MaskedText {
		t.Fatalf("attention: %d layers for %q", len(a.Att), a.AttText)
	}
	a.Key("ArrowLeft") // wraps to the last head
	a.Key("ArrowDown")
	if a.Layer != 1%L || a.Head != A-1 || !strings.HasSuffix(hash, "&layer=1&head=1") {
		t.Errorf("after keys: layer %d head %d, hash %q", a.Layer, a.Head, hash)
	}

	// Every view renders without a browser.
	for _, v := range []string{ViewMask, ViewAttention} {
		a.View = v
		var buf bytes.Buffer
		env, err := vugu.NewBuildEnv()
		if err != nil {
			t.Fatal(err)
		}
		if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
			t.Fatalf("render %s: %v", v, err)
		}
		if !strings.Contains(buf.String(), `data-view="`+v+`"`) {
			t.Errorf("static render of %s lacks its view:\n%s", v, buf.String())
		}
	}
}

func TestRouteRoundTrip(t *testing.T) {
	for _, r := range []Route{
		{View: ViewMask, Text: "Hello, world & more+plus 100%", Masks: []int{0, 2}},
		{View: ViewAttention, Text: "é ü 中文", Layer: 3, Head: 7},
		{View: ViewAttention, Text: "a", Layer: 1, HideSpecial: true},
		{View: ViewModels, Text: "b"},
		{View: ViewMask, Text: ""},
		{View: ViewSteps, Text: "a b", Layer: 2, Token: 3, Step: 4},
		{View: ViewMasking, Text: "x", Seed: 9, WholeWord: true, Sample: 12},
		{View: ViewMask, Text: "The cat sat.", Masks: []int{1}, Pair: "It was on the mat & slept 100%.", PairMasks: []int{0, 4}},
		{View: ViewMask, Text: "a", Pair: "é ü 中文+b"},
		{View: ViewAttention, Text: "a b", Pair: "c d", Seg: SegAB, HeadView: true, AllHeads: true, Layer: 1, Head: 2},
		{View: ViewAttention, Text: "a b", Pair: "c", Seg: SegBB, HideSpecial: true},
		{View: ViewAttention, Text: "a b", Pair: "c", Seg: SegBA, HeadView: true},
		{View: ViewAttention, Text: "a", AllHeads: true},
		{View: ViewSteps, Text: "a b", Pair: "kept for the views that read it", Layer: 1},
	} {
		got, ok := ParseRoute(r.Hash())
		if !ok || got.View != r.View || got.Text != r.Text || !slices.Equal(got.Masks, r.Masks) || got.Layer != r.Layer || got.Head != r.Head ||
			got.Token != r.Token || got.Step != r.Step || got.Seed != r.Seed || got.WholeWord != r.WholeWord || got.Sample != r.Sample || got.HideSpecial != r.HideSpecial ||
			got.Pair != r.Pair || !slices.Equal(got.PairMasks, r.PairMasks) || got.Seg != r.Seg || got.HeadView != r.HeadView || got.AllHeads != r.AllHeads {
			t.Errorf("%+v -> %q -> %+v", r, r.Hash(), got)
		}
	}
	if r, ok := ParseRoute("#mask?masks=3,x,-1,3,1&text=a+b"); !ok || r.Text != "a b" || !slices.Equal(r.Masks, []int{1, 3}) {
		t.Errorf("lenient parse: %+v", r)
	}
	if _, ok := ParseRoute(""); ok {
		t.Error("an empty hash has no text")
	}
}

func TestAppStepsAndMaskingLab(t *testing.T) {
	eng := newNativeEngine(t)
	var hash string
	a := &App{Eng: eng, OnRoute: func(h string) { hash = h }}
	a.Start(ParseRoute("#steps?text=The%20cat%20sat.&layer=1&token=2&step=3"))
	if a.Err != "" || a.Steps == nil {
		t.Fatalf("steps: err %q, steps %v", a.Err, a.Steps)
	}
	if a.Steps.Layer != 1 || a.Steps.Token != 2 || a.StepI != 3 || len(a.Steps.Steps) != NumSteps {
		t.Fatalf("steps for layer %d token %d, step %d, %d steps", a.Steps.Layer, a.Steps.Token, a.StepI, len(a.Steps.Steps))
	}
	want, err := pipeline.Steps(eng.m, eng.tok, "The cat sat.", nil, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := a.Steps.Step("softmax").Vector("attention head 0"), want.Step("softmax").Vector("attention head 0"); !slices.Equal(got, w) {
		t.Errorf("softmax row %v, native %v", got, w)
	}
	a.SelectToken(99) // clamped to the last token
	a.StepBy(100)
	if a.Token != 5 || a.StepI != NumSteps-1 || a.Steps.Token != 5 || hash != "#steps?text=The%20cat%20sat.&layer=1&token=5&step=9" {
		t.Errorf("token %d step %d (walk for %d), hash %q", a.Token, a.StepI, a.Steps.Token, hash)
	}
	a.Key("ArrowDown") // wraps to layer 0
	a.Key("ArrowLeft")
	if a.Layer != 0 || a.Steps.Layer != 0 || a.StepI != NumSteps-2 {
		t.Errorf("after keys: layer %d (walk %d), step %d", a.Layer, a.Steps.Layer, a.StepI)
	}

	a.SetView(ViewMasking)
	if a.Lab == nil || len(a.NSP) != NSPCount {
		t.Fatalf("masking lab: %v, %d pairs", a.Lab, len(a.NSP))
	}
	lab, err := lab.MaskLab(eng.tok, "The cat sat.", eng.m.Config.MaxPositionEmbeddings, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Lab.Chosen, lab.Chosen) || !slices.Equal(a.Lab.Shown, lab.Shown) {
		t.Errorf("lab %v %v, native %v %v", a.Lab.Chosen, a.Lab.Shown, lab.Chosen, lab.Shown)
	}
	a.Reroll()
	a.ToggleWholeWord()
	if a.Lab.Seed != 1 || !a.Lab.WholeWord || hash != "#masking?text=The%20cat%20sat.&seed=1&ww=1" {
		t.Errorf("after re-roll and whole words: seed %d ww %v, hash %q", a.Lab.Seed, a.Lab.WholeWord, hash)
	}
	a.SampleBy(1)
	if a.Sample != 1 || len(a.Samples) == 0 || a.LabText() != a.Samples[0] || !strings.Contains(hash, "&sample=1") {
		t.Errorf("sample %d of %d, hash %q", a.Sample, len(a.Samples), hash)
	}
	a.SampleBy(-1) // wraps to the last sample
	if a.Sample != len(a.Samples) || a.Lab.Tokens[1] == "the" && a.LabText() == "The cat sat." {
		t.Errorf("sample after wrapping back: %d of %d", a.Sample, len(a.Samples))
	}

	for _, v := range []string{ViewSteps, ViewMasking} {
		a.View = v
		var buf bytes.Buffer
		env, err := vugu.NewBuildEnv()
		if err != nil {
			t.Fatal(err)
		}
		if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
			t.Fatalf("render %s: %v", v, err)
		}
		if !strings.Contains(buf.String(), `data-view="`+v+`"`) {
			t.Errorf("static render of %s lacks its view", v)
		}
		if v == ViewMasking && !strings.Contains(buf.String(), `data-kind="mask"`) {
			t.Errorf("the masking lab shows no [MASK]:\n%s", buf.String())
		}
		if v == ViewSteps && !strings.Contains(buf.String(), `data-step-id="ffn"`) {
			t.Errorf("the step view does not show step 9 (ffn)")
		}
	}
}
