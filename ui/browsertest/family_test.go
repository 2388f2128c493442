//go:build !js

package browsertest

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bertlab/bertlab/core/engine"
)

// familyFolder lays out a family fixture of scripts/familyref as a model folder a user would
// pick: its config.json and model.safetensors, with the 120-word WordPiece vocabulary
// core/bert/testdata/family-vocab.txt as vocab.txt; and loads it natively for the answers to
// expect.
func familyFolder(t *testing.T, fixture string) (string, *engine.Engine) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), fixture)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for dst, src := range map[string]string{
		"config.json":       filepath.Join(root, "core/bert/testdata", fixture, "config.json"),
		"model.safetensors": filepath.Join(root, "core/bert/testdata", fixture, "model.safetensors"),
		"vocab.txt":         filepath.Join(root, "core/bert/testdata/family-vocab.txt"),
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := engine.Open(os.DirFS(dir), fixture)
	if err != nil {
		t.Fatal(err)
	}
	return dir, e
}

// loadFolder picks dir with the Models view's folder picker and waits for the load.
func loadFolder(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	do(t, ctx, 10*time.Second, "the models view", chromedp.Click(chromedp.CSS(`button[data-tab="models"]`)))
	wait(t, ctx, 10*time.Second, "the folder picker", `document.querySelector('input[data-role="pick-folder"]')`)
	do(t, ctx, 10*time.Second, "picking "+filepath.Base(dir), chromedp.SetUploadFiles(chromedp.CSS(`input[data-role="pick-folder"]`), []string{dir}))
	wait(t, ctx, 60*time.Second, filepath.Base(dir)+" loaded", settled+` && document.querySelector('[data-role="load-ok"]') && document.querySelector('.modelcard h2').textContent === `+jsString(filepath.Base(dir)+" (yours)"))
}

// floats parses "v,v,..." (a canvas's bertlabValues).
func floats(t *testing.T, s string) []float64 {
	t.Helper()
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("value %q: %v", f, err)
		}
		out = append(out, v)
	}
	return out
}

// TestFamilyViews loads a folder of every family into the page and checks what is particular to
// each: the Models view's family card for all of them; ELECTRA's "Replaced?" view, with a swap,
// against the native engine; DeBERTa's split attention against the native engine's parts;
// ALBERT's note that its layers share their weights.
func TestFamilyViews(t *testing.T) {
	_, _, url, ctx := tinyPage(t)
	do(t, ctx, 30*time.Second, "opening the page", chromedp.Navigate(url+"#models"))
	wait(t, ctx, 60*time.Second, "the default model", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('[data-role="family-card"]')`)
	if f := eval[string](t, ctx, `document.querySelector('[data-role="family-card"]').dataset.family`); f != "bert" {
		t.Errorf("the built-in model's family card says %q", f)
	}

	type card struct {
		Family, Name, Role, Params, Sizes, Layers, Positions, Shared string
		Heads                                                        map[string]string
	}
	cardJS := `(() => { const c = document.querySelector('[data-role="family-card"]'); const f = k => (c.querySelector('[data-fact="' + k + '"]') || {textContent: ''}).textContent.trim();
		return {Family: c.dataset.family, Name: c.querySelector('[data-role="family-name"]').textContent, Role: (c.querySelector('[data-role="family-role"]') || {textContent: ''}).textContent,
			Params: f('parameters'), Sizes: f('sizes'), Layers: f('layers'), Positions: f('positions'), Shared: f('shared'),
			Heads: Object.fromEntries([...c.querySelectorAll('[data-head]')].map(h => [h.dataset.head, h.dataset.present]))}; })()`
	for _, tc := range []struct {
		fixture, family, name, role string
		heads                       string // the present heads, in MLM NSP SOP RTD order
		facts                       []string
	}{
		{"distilbert-tiny-random", "distilbert", "DistilBERT", "", "MLM", []string{"E = H = 48", "16 positions"}},
		{"roberta-tiny-random", "roberta", "RoBERTa", "", "MLM", []string{"pad_token_id+1 = 2"}},
		{"albert-tiny-random", "albert", "ALBERT", "", "MLM SOP", []string{"E 16 → H 48", "3, all running one set of weights", "all 3 layers run the same weights"}},
		{"electra-tiny-generator", "electra", "ELECTRA", "generator", "MLM", []string{"this checkpoint is the generator"}},
		{"deberta-tiny-random", "deberta-v2", "DeBERTa", "", "MLM", []string{"8 buckets", "16 relative-position embeddings"}},
		{"albert-tiny-groups", "albert", "ALBERT", "", "", []string{"3, running 2 sets of weights", "layers 0–1 run group 0, layer 2 runs group 1"}},
		{"electra-tiny-discriminator", "electra", "ELECTRA", "discriminator", "RTD", []string{"E 16 → H 48"}},
	} {
		dir, e := familyFolder(t, tc.fixture)
		loadFolder(t, ctx, dir)
		got := eval[card](t, ctx, cardJS)
		if got.Family != tc.family || got.Name != tc.name || got.Role != tc.role {
			t.Errorf("%s: card says %q %q %q, want %q %q %q", tc.fixture, got.Family, got.Name, got.Role, tc.family, tc.name, tc.role)
		}
		if p := strings.ReplaceAll(got.Params, ",", ""); p != strconv.FormatInt(e.Info().Parameters, 10) {
			t.Errorf("%s: parameters %q, the engine has %d", tc.fixture, got.Params, e.Info().Parameters)
		}
		var present []string
		for _, h := range []string{"MLM", "NSP", "SOP", "RTD"} {
			if got.Heads[h] == "1" {
				present = append(present, h)
			}
		}
		if strings.Join(present, " ") != tc.heads || len(got.Heads) != 4 {
			t.Errorf("%s: heads %v, want present %q", tc.fixture, got.Heads, tc.heads)
		}
		all := got.Sizes + " | " + got.Layers + " | " + got.Positions + " | " + got.Shared
		for _, f := range tc.facts {
			if !strings.Contains(all, f) {
				t.Errorf("%s: the card (%s) lacks %q", tc.fixture, all, f)
			}
		}
		if strings.HasPrefix(tc.heads, "MLM") {
			checkFamilyPipelines(t, ctx, e, tc.fixture)
		}
		switch tc.fixture {
		case "albert-tiny-random":
			screenshot(t, ctx, "family-card-"+tc.fixture)
		case "albert-tiny-groups":
			screenshot(t, ctx, "family-card-"+tc.fixture)
			checkSharedLayers(t, ctx)
		case "deberta-tiny-random":
			screenshot(t, ctx, "family-card-"+tc.fixture)
			checkSplitAttention(t, ctx, e)
		}
	}
	// The discriminator is loaded last: "Replaced?".
	_, e := familyFolder(t, "electra-tiny-discriminator")
	checkReplaced(t, ctx, e)

	// On a phone's screen the view (and the family card) stay within its width.
	const phoneWidth = 390
	do(t, ctx, 10*time.Second, "a phone's screen", chromedp.EmulateViewport(phoneWidth, 844, chromedp.EmulateMobile))
	for _, tab := range []string{"replaced", "models"} {
		do(t, ctx, 10*time.Second, "the "+tab+" tab", chromedp.Click(chromedp.CSS(`button[data-tab="`+tab+`"]`)))
		wait(t, ctx, 10*time.Second, "the view", settled)
		time.Sleep(200 * time.Millisecond)
		if w := eval[float64](t, ctx, `Math.max(document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth)`); w > phoneWidth {
			wide := eval[[]string](t, ctx, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > `+itoa(phoneWidth)+` + 0.5).slice(0, 12).map(e => e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`)
			t.Errorf("%s scrolls sideways on a %d px screen: %.0f px wide; sticking out: %v", tab, phoneWidth, w, wide)
		}
		screenshot(t, ctx, "family-"+tab+"-phone")
	}
}

// checkFamilyPipelines runs the views every family with an MLM head shares on the loaded
// folder: the mask view's predictions equal the native engine's, the attention grid has every
// layer and head, the layer stepper and Why? answer without an error.
func checkFamilyPipelines(t *testing.T, ctx context.Context, e *engine.Engine, fixture string) {
	t.Helper()
	const text = "the chef cooked the meal"
	do(t, ctx, 10*time.Second, fixture+": the mask view", chromedp.Click(chromedp.CSS(`button[data-tab="mask"]`)))
	// Another sentence first: a new sentence clears the masks the previous family's left.
	for _, s := range []string{"the cat sat", text} {
		// The whole sentence set at once with its input event, then Enter: keystrokes sent one by
		// one could land while a render replaced the box on a loaded host (a lost or doubled
		// letter timed the test out at "the words").
		do(t, ctx, 30*time.Second, fixture+": typing a sentence",
			chromedp.Evaluate[chromedp.Void](`(() => { const t = document.querySelector('#text'); t.focus(); t.value = `+jsString(s)+`; t.dispatchEvent(new Event('input', {bubbles: true})); })()`),
			chromedp.Focus(chromedp.CSS("#text")),
			chromedp.KeyEvent(kb.Enter))
		wait(t, ctx, 30*time.Second, fixture+": the sentence", settled+` && location.hash.includes(`+jsString("text="+strings.ReplaceAll(s, " ", "%20"))+`)`)
	}
	wait(t, ctx, 30*time.Second, fixture+": the words", settled+` && [...document.querySelectorAll('button.word')].map(b => b.textContent.trim()).join(' ') === `+jsString(text))
	do(t, ctx, 10*time.Second, fixture+": masking cooked", chromedp.Click(chromedp.CSS(`button.word[data-word="2"]`)))
	wait(t, ctx, 30*time.Second, fixture+": predictions", settled+` && document.querySelectorAll('.card[data-mask="2"]:not(.stale) .pred').length === 5`)
	want, err := e.FillMask("the chef [MASK] the meal", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("2")), want.Masks[0], fixture+" fill-mask")
	if fixture == "deberta-tiny-random" {
		screenshot(t, ctx, "family-deberta-mask")
	}

	c := e.Info().Config
	do(t, ctx, 10*time.Second, fixture+": the attention view", chromedp.Click(chromedp.CSS(`button[data-tab="attention"]`)))
	wait(t, ctx, 30*time.Second, fixture+": the attention grid", settled+` && document.querySelectorAll('.thumb canvas').length === `+itoa(c.NumHiddenLayers*c.NumAttentionHeads)+` && document.querySelector('.heatmap canvas')`)
	do(t, ctx, 10*time.Second, fixture+": the layer view", chromedp.Click(chromedp.CSS(`button[data-tab="steps"]`)))
	wait(t, ctx, 30*time.Second, fixture+": the layer's steps", settled+` && document.querySelectorAll('.stepnav button').length === 10 && document.querySelector('[data-step-id]')`)
	do(t, ctx, 10*time.Second, fixture+": Why?", chromedp.Click(chromedp.CSS(`button[data-tab="why"]`)))
	wait(t, ctx, 60*time.Second, fixture+": the attributions", settled+` && document.querySelector('[data-role="attrs"]')`)
	if msg := eval[string](t, ctx, `[...document.querySelectorAll('.error, [data-role="why-empty"]')].map(e => e.textContent).join(' | ')`); msg != "" {
		t.Errorf("%s: errors on the page: %s", fixture, msg)
	}
	// ALBERT's shared layers and DeBERTa take no head mask: the heads' grid gives way to a note.
	noMask := strings.HasPrefix(fixture, "albert") || strings.HasPrefix(fixture, "deberta")
	if shared := eval[bool](t, ctx, `!!document.querySelector('[data-role="abl-unsupported"]')`); shared != noMask {
		t.Errorf("%s: the note that heads cannot be switched off shown %v", fixture, shared)
	}
	if fixture == "albert-tiny-random" {
		screenshot(t, ctx, "family-albert-why")
	}
}

// checkSharedLayers opens "Inside a layer" on ALBERT's 3 blocks over 2 groups: the note names the
// group of each layer.
func checkSharedLayers(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, 10*time.Second, "the layer view", chromedp.Click(chromedp.CSS(`button[data-tab="steps"]`)))
	note := `(document.querySelector('.stepsview [data-role="shared-layers"]') || {textContent: ''}).textContent`
	layer := `document.querySelector('[data-role="step-layer"]').textContent.split(' of ')[0]`
	wait(t, ctx, 30*time.Second, "the shared-layer note", settled+` && `+note+`.includes(`+layer+` + ' runs group')`)
	for _, want := range []string{"layer 0 runs group 0, shared with layer 1", "layer 1 runs group 0, shared with layer 0", "layer 2 runs group 1, which no other layer runs"} {
		l := want[:len("layer 0")]
		for range 3 {
			if eval[string](t, ctx, layer) == l {
				break
			}
			do(t, ctx, 10*time.Second, "the next layer", chromedp.Click(chromedp.CSS(`.stepsview button[data-step="layer-next"]`)))
			wait(t, ctx, 30*time.Second, "the layer", settled)
		}
		wait(t, ctx, 30*time.Second, "the note of "+l, settled+` && `+note+`.includes(`+jsString(want)+`)`)
	}
	screenshot(t, ctx, "family-albert-steps")
}

// checkSplitAttention opens the attention view on DeBERTa: the split panel's maps hold the
// native engine's c2c, c2p, p2c and sum for the selected layer and head, and follow the
// selection.
func checkSplitAttention(t *testing.T, ctx context.Context, e *engine.Engine) {
	t.Helper()
	const text = "the chef cooked the meal ."
	do(t, ctx, 10*time.Second, "the attention view", chromedp.Click(chromedp.CSS(`button[data-tab="attention"]`)))
	// A sentence of our own: the maps read it without masks.
	do(t, ctx, 30*time.Second, "typing a sentence",
		chromedp.Evaluate[chromedp.Void](`(() => { const t = document.querySelector('#text'); t.focus(); t.value = ''; t.dispatchEvent(new Event('input', {bubbles: true})); })()`),
		chromedp.SendKeys(chromedp.CSS("#text"), text),
		chromedp.KeyEvent(kb.Enter))
	maps := `document.querySelectorAll('[data-role="split-attention"] .splitmap canvas')`
	wait(t, ctx, 30*time.Second, "the split panel", settled+` && !location.hash.includes('masks') && `+maps+`.length === 4 && document.querySelector('.heatmap canvas').bertlabRows === 8`)
	for _, sel := range []struct{ layer, head int }{{0, 0}, {2, 1}} {
		if sel.layer > 0 {
			do(t, ctx, 10*time.Second, "selecting another head",
				chromedp.Click(chromedp.CSS(`.thumb[data-layer="`+itoa(sel.layer)+`"][data-head="`+itoa(sel.head)+`"]`)))
			wait(t, ctx, 30*time.Second, "the split panel of the head", settled+` && document.querySelector('[data-role="split-attention"]').dataset.layer === '`+itoa(sel.layer)+`' && document.querySelector('[data-role="split-attention"]').dataset.head === '`+itoa(sel.head)+`' && `+maps+`.length === 4`)
		}
		want, err := e.AttentionParts(text, nil, sel.layer)
		if err != nil {
			t.Fatal(err)
		}
		got := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('[data-role="split-attention"] .splitmap')].map(m => [m.dataset.term, m.querySelector('canvas').bertlabValues]))`)
		for term, w := range map[string][][][]float32{"c2c": want.C2C, "c2p": want.C2P, "p2c": want.P2C, "sum": want.Sum} {
			g := floats(t, got[term])
			var flat []float32
			for _, row := range w[sel.head] {
				flat = append(flat, row...)
			}
			if len(g) != len(flat) {
				t.Fatalf("layer %d head %d %s: %d values, native %d", sel.layer, sel.head, term, len(g), len(flat))
			}
			for i := range g {
				if math.Abs(g[i]-float64(flat[i])) > 1e-4 {
					t.Fatalf("layer %d head %d %s[%d]: page %g, native %g", sel.layer, sel.head, term, i, g[i], flat[i])
				}
			}
		}
	}
	// Pointing at a cell reads out how its score adds up.
	do(t, ctx, 10*time.Second, "pointing at a cell", chromedp.Evaluate[chromedp.Void](`(() => {
		const c = document.querySelector('[data-role="split-attention"] .splitmap[data-term="c2p"] canvas');
		const r = c.getBoundingClientRect(), m = c.bertlabMargin, s = c.bertlabCell;
		c.parentNode.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + m + 2.5 * s, clientY: r.top + m + 1.5 * s, bubbles: true}));
	})()`))
	wait(t, ctx, 10*time.Second, "the readout", `document.querySelector('[data-role="split-readout"]').textContent.includes('(row 1)') && document.querySelector('[data-role="split-readout"]').textContent.includes('(column 2)')`)
	if r := eval[string](t, ctx, `document.querySelector('[data-role="split-readout"]').textContent`); !strings.Contains(r, "c2c") || !strings.Contains(r, "p2c") || !strings.Contains(r, "after softmax") {
		t.Errorf("readout %q", r)
	}
	do(t, ctx, 10*time.Second, "scrolling to the panel", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-role="split-attention"]').scrollIntoView()`))
	screenshot(t, ctx, "family-deberta-split")
}

// checkReplaced opens "Replaced?" on the ELECTRA discriminator: the paper's sentence, then a
// swap; each time the bars are the native engine's probabilities.
func checkReplaced(t *testing.T, ctx context.Context, e *engine.Engine) {
	t.Helper()
	do(t, ctx, 10*time.Second, "the Replaced? view", chromedp.Click(chromedp.CSS(`button[data-tab="replaced"]`)))
	wait(t, ctx, 30*time.Second, "the paper's example", settled+` && document.querySelector('[data-role="rtd-example"]')`)
	do(t, ctx, 10*time.Second, "the paper's example", chromedp.Click(chromedp.CSS(`[data-role="rtd-example"]`)))
	strip := func(sel string) string {
		return `[...document.querySelectorAll('` + sel + ` .rtdcell')].map(c => +c.dataset.p)`
	}
	check := func(sel, text string) {
		t.Helper()
		want, err := e.Replaced(text, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := eval[[]float64](t, ctx, strip(sel))
		if len(got) != len(want.Replaced) {
			t.Fatalf("%q: the page shows %d bars for %d tokens", text, len(got), len(want.Replaced))
		}
		for i, p := range want.Replaced {
			if math.Abs(got[i]-float64(p)) > 1e-5 {
				t.Errorf("%q token %d %s: page %g, native %g", text, i, want.Tokens[i], got[i], p)
			}
		}
	}
	wait(t, ctx, 30*time.Second, "the bars", settled+` && `+strip(`[data-role="rtd-strip"]`)+`.length === 7 && document.querySelector('#text').value === 'the chef cooked the meal'`)
	check(`[data-role="rtd-strip"]`, "the chef cooked the meal")
	screenshot(t, ctx, "family-replaced")

	do(t, ctx, 10*time.Second, "clicking cooked", chromedp.Click(chromedp.CSS(`[data-role="rtd-strip"] .rtdcell[data-word="2"]`)))
	wait(t, ctx, 10*time.Second, "the swap box", `document.querySelector('[data-role="swap-input"]')`)
	do(t, ctx, 10*time.Second, "typing ate", chromedp.SendKeys(chromedp.CSS(`[data-role="swap-input"]`), "ate"), chromedp.Click(chromedp.CSS(`[data-role="swap-apply"]`)))
	wait(t, ctx, 30*time.Second, "the bars after the swap", settled+` && document.querySelector('#text').value === 'the chef ate the meal' && document.querySelector('[data-role="rtd-before"]') && document.querySelector('[data-role="rtd-strip"] .rtdcell.swapped')`)
	check(`[data-role="rtd-strip"]`, "the chef ate the meal")
	check(`[data-role="rtd-before"]`, "the chef cooked the meal")
	if h := eval[string](t, ctx, `location.hash`); !strings.HasPrefix(h, "#replaced?text=the%20chef%20ate") {
		t.Errorf("the URL after the swap: %q", h)
	}
	screenshot(t, ctx, "family-replaced-swap")
}
