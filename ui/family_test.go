package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
)

func (e *nativeEngine) Replaced(text, pair string) (*pipeline.ReplacedResult, error) {
	return e.e.Replaced(text, pairOf(pair))
}

func (e *nativeEngine) AttentionParts(text, pair string, layer int) (*pipeline.AttentionPartsResult, error) {
	return e.e.AttentionParts(text, pairOf(pair), layer)
}

// familyEngine is the page's engine over a family fixture of scripts/familyref, with the
// 120-word vocabulary core/bert/testdata/family-vocab.txt.
func familyEngine(t *testing.T, fixture string) *nativeEngine {
	t.Helper()
	files := fstest.MapFS{}
	for name, path := range map[string]string{
		"config.json":       filepath.Join("../core/bert/testdata", fixture, "config.json"),
		"model.safetensors": filepath.Join("../core/bert/testdata", fixture, "model.safetensors"),
		"vocab.txt":         "../core/bert/testdata/family-vocab.txt",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = &fstest.MapFile{Data: b}
	}
	e, err := engine.Open(files, fixture)
	if err != nil {
		t.Fatal(err)
	}
	return &nativeEngine{e: e, m: e.Model()}
}

// renderApp renders the page without a browser.
func renderApp(t *testing.T, a *App) string {
	t.Helper()
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
		t.Fatalf("render %s: %v", a.View, err)
	}
	return buf.String()
}

// TestReplacedView: the discriminator's answer for the sentence, a swap that keeps the answer
// from before it, putting the sentence back, and a sentence of the user's own starting over.
func TestReplacedView(t *testing.T) {
	eng := familyEngine(t, "electra-tiny-discriminator")
	a := &App{Eng: eng}
	a.Start(Route{View: ViewReplaced}, false)
	a.UseReplacedExample()
	if a.Err != "" || a.Text != "the chef cooked the meal" {
		t.Fatalf("err %q, text %q", a.Err, a.Text)
	}
	want, err := eng.e.Replaced("the chef cooked the meal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fam.Rep == nil || !slices.Equal(a.Fam.Rep.Replaced, want.Replaced) {
		t.Fatalf("the view's answer %+v, the engine's %v", a.Fam.Rep, want.Replaced)
	}
	html := renderApp(t, a)
	cells := regexp.MustCompile(`<div class="rtdcell[^"]*" data-p="0\.\d{6}"`).FindAllString(html, -1)
	if len(cells) != len(want.Tokens) || !strings.Contains(html, `data-role="rtd-lesson"`) || !strings.Contains(html, "15%") {
		t.Errorf("the strip has %d cells for %d tokens, or the lesson is missing:\n%s", len(cells), len(want.Tokens), html)
	}

	// Swap "cooked" (word 2) for "ate".
	a.PickSwap(2)
	if w, ok := a.PickedWord(); !ok || w.Text != "cooked" {
		t.Fatalf("picked %+v", w)
	}
	a.Swap("ate  ")
	if a.Text != "the chef ate the meal" || a.Draft != a.Text || !slices.Equal(a.Fam.Swapped, []int{2}) || a.Fam.Pick != 0 {
		t.Fatalf("after the swap: text %q, swapped %v, pick %d", a.Text, a.Fam.Swapped, a.Fam.Pick)
	}
	after, err := eng.e.Replaced("the chef ate the meal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fam.Before == nil || !slices.Equal(a.Fam.Before.Replaced, want.Replaced) || !slices.Equal(a.Fam.Rep.Replaced, after.Replaced) {
		t.Fatalf("before %+v, after %+v", a.Fam.Before, a.Fam.Rep)
	}
	if html := renderApp(t, a); !strings.Contains(html, `data-role="rtd-before"`) || !strings.Contains(html, "rtdcell swapped") {
		t.Errorf("the view after a swap lacks the strip before it or the swapped mark:\n%s", html)
	}
	// A second swap keeps the first "before".
	a.PickSwap(4)
	a.Swap("car")
	if a.Text != "the chef ate the car" || !slices.Equal(a.Fam.Before.Replaced, want.Replaced) || !slices.Equal(a.Fam.Swapped, []int{2, 4}) {
		t.Errorf("second swap: %q, swapped %v", a.Text, a.Fam.Swapped)
	}
	a.UndoSwaps()
	if a.Text != "the chef cooked the meal" || a.Fam.Before != nil || a.Fam.Swapped != nil || !slices.Equal(a.Fam.Rep.Replaced, want.Replaced) {
		t.Errorf("undo: %q, before %v, swapped %v", a.Text, a.Fam.Before, a.Fam.Swapped)
	}
	// A sentence of one's own starts over.
	a.PickSwap(1)
	a.Swap("dog")
	a.Typed("the cat sat on the mat")
	if a.Fam.Before != nil || a.Fam.Swapped != nil || a.Fam.RepKey != inputKey("the cat sat on the mat", "") {
		t.Errorf("typing a new sentence: before %v, swapped %v, key %q", a.Fam.Before, a.Fam.Swapped, a.Fam.RepKey)
	}
	// An empty replacement does nothing.
	a.PickSwap(1)
	a.Swap("   ")
	if a.Text != "the cat sat on the mat" {
		t.Errorf("an empty swap changed the text to %q", a.Text)
	}
	if h := a.route().Hash(); !strings.HasPrefix(h, "#replaced?") {
		t.Errorf("route %q", h)
	}
	if r, _ := ParseRoute("#replaced?text=a%20b"); r.View != ViewReplaced {
		t.Errorf("the route of the view parses as %q", r.View)
	}
}

// TestReplacedViewWithoutHead: a model without the discriminator's head says so and asks nothing.
func TestReplacedViewWithoutHead(t *testing.T) {
	a := &App{Eng: familyEngine(t, "electra-tiny-generator")}
	a.Start(Route{View: ViewReplaced, Text: "the chef cooked the meal"}, true)
	if a.Err != "" || a.Fam.Rep != nil || a.Fam.RepErr != "" {
		t.Fatalf("err %q, answer %+v, %q", a.Err, a.Fam.Rep, a.Fam.RepErr)
	}
	if html := renderApp(t, a); !strings.Contains(html, `data-role="no-rtd"`) || !strings.Contains(html, "electra-small-discriminator") {
		t.Errorf("no explanation without the head:\n%s", html)
	}
}

// TestSplitAttention: for DeBERTa the attention view asks for the selected layer's parts, which
// add up to the scores, and draws the panel; for another family it draws none.
func TestSplitAttention(t *testing.T) {
	a := &App{Eng: familyEngine(t, "deberta-tiny-random")}
	a.Start(Route{View: ViewAttention, Text: "the chef cooked the meal"}, true)
	if a.Err != "" || a.Fam.Parts == nil || a.Fam.Parts.Layer != 0 {
		t.Fatalf("err %q, parts %+v", a.Err, a.Fam.Parts)
	}
	if got := a.SplitTerms(); !slices.Equal(got, []string{"c2c", "c2p", "p2c"}) {
		t.Errorf("terms %q", got)
	}
	a.SelectHead(2, 1)
	p := a.Fam.Parts
	if p.Layer != 2 || a.Fam.PartsKey != a.partsKey(2) {
		t.Fatalf("after selecting layer 2: parts of layer %d", p.Layer)
	}
	for i := range p.Sum[1] {
		for j, s := range p.Sum[1][i] {
			if d := p.C2C[1][i][j] + p.C2P[1][i][j] + p.P2C[1][i][j] - s; d > 1e-5 || d < -1e-5 {
				t.Fatalf("cell %d, %d: parts add up to %g off the sum", i, j, d)
			}
		}
	}
	html := renderApp(t, a)
	for _, s := range []string{`data-role="split-attention"`, `data-term="c2c"`, `data-term="c2p"`, `data-term="p2c"`, `data-term="sum"`, "content to position", "position to content"} {
		if !strings.Contains(html, s) {
			t.Errorf("the split panel lacks %s", s)
		}
	}
	b := &App{Eng: familyEngine(t, "electra-tiny-discriminator")}
	b.Start(Route{View: ViewAttention, Text: "the chef cooked the meal"}, true)
	if b.Fam.Parts != nil || strings.Contains(renderApp(t, b), `data-role="split-attention"`) {
		t.Error("ELECTRA's attention view should have no split panel")
	}
}

// TestSharedLayerNote: ALBERT's layer views say which weights a layer runs; others say nothing.
func TestSharedLayerNote(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		layer   int
		want    string
	}{
		{"albert-tiny-random", 2, "Every layer of this ALBERT is the same weights: its 3 layers all run layer group 0"},
		{"albert-tiny-groups", 2, "layer 2 runs group 1, which no other layer runs"},
		{"albert-tiny-groups", 0, "layer 0 runs group 0, shared with layer 1"},
		{"electra-tiny-discriminator", 1, ""},
	} {
		a := &App{Eng: familyEngine(t, tc.fixture)}
		a.Start(Route{View: ViewSteps, Text: "the chef cooked the meal", Layer: tc.layer}, true)
		got := a.SharedLayerNote(tc.layer)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s layer %d: %q, want %q", tc.fixture, tc.layer, got, tc.want)
		}
		if html := renderApp(t, a); strings.Contains(html, `data-role="shared-layers"`) != (tc.want != "") {
			t.Errorf("%s: the steps view's note shown %v, want %v", tc.fixture, !(tc.want != ""), tc.want != "")
		}
	}
}

// TestFamilyPanel: the Models view shows the family card.
func TestFamilyPanel(t *testing.T) {
	a := &App{Eng: familyEngine(t, "albert-tiny-random")}
	a.Start(Route{View: ViewModels}, false)
	html := renderApp(t, a)
	for _, s := range []string{`data-role="family-card"`, `data-family="albert"`, "ALBERT", "Lan et al., 2019",
		"E 16 → H 48", "1,920 numbers (V×E) where V×H would be 5,760", "3, all running one set of weights",
		`data-head="SOP" data-present="1"`, `data-head="NSP" data-present="0"`, `data-head="MLM" data-present="1"`, "all 3 layers run the same weights"} {
		if !strings.Contains(html, s) {
			t.Errorf("the family card lacks %q", s)
		}
	}
}

// TestWhyWithoutHeadMask: Why? on a family that refuses a head mask (ALBERT's shared layers,
// DeBERTa) still shows the attributions and the lens, and says why heads cannot be switched off;
// on DistilBERT the heads can be.
func TestWhyWithoutHeadMask(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		ablates bool
	}{
		{"albert-tiny-random", false},
		{"deberta-tiny-random", false},
		{"distilbert-tiny-random", true},
	} {
		a := &App{Eng: familyEngine(t, tc.fixture)}
		a.Start(Route{View: ViewWhy, Text: "the chef cooked the meal", Masks: []int{2}}, true)
		w := a.Why
		if a.Err != "" || w.Err != "" || w.Attr == nil || w.Lens == nil || (w.Abl != nil) != tc.ablates || (w.AblErr == "") != tc.ablates {
			t.Fatalf("%s: err %q / %q, attributions %v, lens %v, ablation %v (%q)", tc.fixture, a.Err, w.Err, w.Attr != nil, w.Lens != nil, w.Abl != nil, w.AblErr)
		}
		html := renderApp(t, a)
		if !strings.Contains(html, `data-role="attrs"`) || strings.Contains(html, `data-role="abl-unsupported"`) == tc.ablates {
			t.Errorf("%s: the view shows attributions %v, the note %v", tc.fixture, strings.Contains(html, `data-role="attrs"`), strings.Contains(html, `data-role="abl-unsupported"`))
		}
	}
}
