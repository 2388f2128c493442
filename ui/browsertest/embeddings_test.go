//go:build !js

package browsertest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/ui"
)

// embPoint is a dot the embeddings view drew: the PCA coordinates it was given and where it
// landed in the canvas (CSS pixels).
type embPoint struct {
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	CX       float64 `json:"cx"`
	CY       float64 `json:"cy"`
	Sentence int     `json:"sentence"`
	Position int     `json:"position"`
	Token    string  `json:"token"`
}

const embPointsJS = `JSON.parse(document.querySelector('.embmap canvas').bertlabPoints)`

// checkEmbPoints compares the drawn dots with the native pipeline's map, and checks that they
// are drawn on one scale for both axes (x right, y up).
func checkEmbPoints(t *testing.T, got []embPoint, f *folder, sentences []string, layer int, hide bool, what string) {
	t.Helper()
	want, err := pipeline.EmbeddingMap(f.Model, f.Tok, sentences, layer, pipeline.EmbeddingMapOptions{HideSpecial: hide})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.Points) {
		t.Fatalf("%s: the page drew %d dots, the native map has %d", what, len(got), len(want.Points))
	}
	for i, w := range want.Points {
		g := got[i]
		// The browser runs the pure-Go kernels, natively the assembly: float32 rounding differs.
		if g.Sentence != w.Sentence || g.Position != w.Position || g.Token != w.Token || math.Abs(g.X-w.X) > 1e-4 || math.Abs(g.Y-w.Y) > 1e-4 {
			t.Errorf("%s, dot %d: page %+v, native %+v", what, i, g, w)
		}
	}
	// cx = a + s·x and cy = b − s·y with one s: fit on the two dots farthest apart in x.
	lo, hi := 0, 0
	for i, g := range got {
		if g.X < got[lo].X {
			lo = i
		}
		if g.X > got[hi].X {
			hi = i
		}
	}
	s := (got[hi].CX - got[lo].CX) / (got[hi].X - got[lo].X)
	a, b := got[lo].CX-s*got[lo].X, got[lo].CY+s*got[lo].Y
	for i, g := range got {
		if math.Abs(a+s*g.X-g.CX) > 0.01 || math.Abs(b-s*g.Y-g.CY) > 0.01 {
			t.Fatalf("%s: dot %d drawn at (%.2f, %.2f), the scale of the others puts it at (%.2f, %.2f)", what, i, g.CX, g.CY, a+s*g.X, b-s*g.Y)
		}
	}
}

// TestEmbeddingsView opens the embeddings view, steps the layers, points at a dot, adds a
// sentence, hides [CLS], [SEP] and punctuation, and exports the map.
func TestEmbeddingsView(t *testing.T) {
	_, model, url, ctx := tinyPage(t)
	sentences := ui.DefaultEmbSentences
	drawnFor := func(layer int) string {
		return settled + ` && document.querySelector('.embmap canvas') && document.querySelector('.embmap canvas').bertlabPoints && document.querySelector('.embview').dataset.layer === '` + itoa(layer) + `' && document.querySelector('.embmap canvas').bertlabKey.split('/')[1] === '` + itoa(layer) + `'`
	}

	do(t, ctx, 30*time.Second, "opening the embeddings view", chromedp.Navigate(url+"#embeddings"))
	wait(t, ctx, 60*time.Second, "the map of layer 0", `document.querySelector('.app[data-loaded]') && `+drawnFor(0))
	var want int
	for _, s := range sentences {
		enc, err := model.Tok.Encode(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		want += enc.Len()
	}
	got := eval[[]embPoint](t, ctx, embPointsJS)
	if len(got) != want {
		t.Fatalf("%d dots for %d tokens", len(got), want)
	}
	checkEmbPoints(t, got, model, sentences, 0, false, "layer 0")
	if n := eval[int](t, ctx, `document.querySelectorAll('.embsent input.embtext[data-sentence]').length`); n != len(sentences) {
		t.Errorf("%d sentence boxes, want %d", n, len(sentences))
	}
	if h := eval[string](t, ctx, `location.hash`); !strings.HasPrefix(h, "#embeddings?") || !strings.Contains(h, "word=bank") || !strings.Contains(h, "s=the%20bank%20of") {
		t.Errorf("hash %q", h)
	}
	screenshot(t, ctx, "embeddings-view")

	// The arrow keys and the slider step the layer; every layer's dots are the native ones.
	do(t, ctx, 10*time.Second, "pressing the right arrow",
		chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`),
		chromedp.KeyEvent(kb.ArrowRight))
	wait(t, ctx, 10*time.Second, "layer 1", drawnFor(1)+` && location.hash.includes('layer=1')`)
	checkEmbPoints(t, eval[[]embPoint](t, ctx, embPointsJS), model, sentences, 1, false, "layer 1")
	do(t, ctx, 10*time.Second, "moving the slider", chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.querySelector('input[data-role="emb-layer"]'); s.value = '2'; s.dispatchEvent(new Event('input', {bubbles: true})); })()`))
	wait(t, ctx, 10*time.Second, "layer 2", drawnFor(2)+` && document.querySelector('[data-role="emb-layer-label"]').textContent === 'layer 2 of 2'`)
	layer2 := eval[[]embPoint](t, ctx, embPointsJS)
	checkEmbPoints(t, layer2, model, sentences, 2, false, "layer 2")

	// Point at "bank" of the second sentence: the readout names it, its dot is ringed.
	var bank embPoint
	for _, p := range layer2 {
		if p.Sentence == 1 && p.Token == "bank" {
			bank = p
		}
	}
	if bank.Token == "" {
		t.Fatal("no dot for bank in sentence 2")
	}
	box := eval[[]float64](t, ctx, `(() => { const r = document.querySelector('.embmap canvas').getBoundingClientRect(); return [r.left, r.top]; })()`)
	do(t, ctx, 10*time.Second, "hovering a dot", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0]+bank.CX+1, box[1]+bank.CY-1))
	wait(t, ctx, 10*time.Second, "the readout of the dot",
		`document.querySelector('.embview').dataset.hover === '1/`+itoa(bank.Position)+`' && document.querySelector('[data-role="emb-readout"]').textContent.startsWith('bank · sentence 2, token `+itoa(bank.Position)+`')`)
	readout := eval[string](t, ctx, `document.querySelector('[data-role="emb-readout"]').textContent`)
	if !strings.Contains(readout, "also in sentence 1, 3") {
		t.Errorf("readout %q should name the other sentences with bank", readout)
	}
	screenshot(t, ctx, "embeddings-hover")

	// Add a sentence with the box and Enter: four sentences, the map again the native one.
	added := "we walked along the river bank."
	do(t, ctx, 10*time.Second, "adding a sentence",
		chromedp.Click(chromedp.CSS(`input[data-role="add-text"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[data-role="add-text"]`), added),
		chromedp.KeyEvent(kb.Enter))
	four := append(append([]string{}, sentences...), added)
	wait(t, ctx, 30*time.Second, "the map of four sentences",
		drawnFor(2)+` && document.querySelectorAll('.embsent input.embtext[data-sentence]').length === 4 && `+embPointsJS+`.some(p => p.sentence === 3)`)
	checkEmbPoints(t, eval[[]embPoint](t, ctx, embPointsJS), model, four, 2, false, "four sentences, layer 2")
	if h := eval[string](t, ctx, `location.hash`); !strings.Contains(h, "s=we%20walked%20along%20the%20river%20bank.") {
		t.Errorf("hash %q lacks the added sentence", h)
	}
	if v := eval[string](t, ctx, `document.querySelector('input[data-role="add-text"]').value`); v != "" {
		t.Errorf("the add box keeps %q", v)
	}

	// Hide [CLS], [SEP] and punctuation: the PCA is fitted to the words alone.
	do(t, ctx, 10*time.Second, "hiding special tokens", chromedp.Click(chromedp.CSS(`input[data-role="emb-hide"]`)))
	wait(t, ctx, 30*time.Second, "the map without special tokens",
		drawnFor(2)+` && location.hash.includes('special=0') && !`+embPointsJS+`.some(p => p.token === '[CLS]' || p.token === '.')`)
	checkEmbPoints(t, eval[[]embPoint](t, ctx, embPointsJS), model, four, 2, true, "hidden specials, layer 2")
	screenshot(t, ctx, "embeddings-four")

	do(t, ctx, 10*time.Second, "exporting the PNG", chromedp.Click(chromedp.CSS(`button[data-role="emb-export"]`)))
	wait(t, ctx, 10*time.Second, "the export link", `document.querySelector('a[data-role="export-link"]') && document.querySelector('a[data-role="export-link"]').download === 'bertlab-embeddings-layer2.png'`)
	sig := eval[[]int](t, ctx, `fetch(document.querySelector('a[data-role="export-link"]').href).then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b.slice(0, 4))))`)
	if len(sig) != 4 || sig[0] != 137 || sig[1] != 'P' || sig[2] != 'N' || sig[3] != 'G' {
		t.Errorf("the export starts with %v, not a PNG signature", sig)
	}
}
