//go:build !js

package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bertlab/bertlab/core/pipeline"
)

type pagePred struct {
	Token string  `json:"token"`
	ID    int     `json:"id"`
	Score float64 `json:"score"`
}

// predsJS reads the predictions the page shows for masked word id.
func predsJS(id string) string {
	return `[...document.querySelectorAll('.card[data-mask="` + id + `"] .pred')].map(b => ({token: b.dataset.token, id: +b.dataset.id, score: +b.dataset.score}))`
}

// settled is true once the engine has answered everything the page asked.
const settled = `document.querySelector('.app') && document.querySelector('.app').dataset.busy === '0'`

func checkPreds(t *testing.T, got []pagePred, want pipeline.MaskResult, what string) {
	t.Helper()
	if len(got) != len(want.Predictions) {
		t.Fatalf("%s: page shows %d predictions, native pipeline.FillMask %d", what, len(got), len(want.Predictions))
	}
	for i, w := range want.Predictions {
		g := got[i]
		// The browser runs the wasm kernels, natively the assembly: float32 rounding differs.
		if g.ID != w.ID || g.Token != w.Token || math.Abs(g.Score-w.Score) > 1e-5 {
			t.Errorf("%s, prediction %d: page %+v, native %+v", what, i, g, w)
		}
	}
}

// watchFirstPrediction makes every page the browser opens record in
// window.bertlabFirstPrediction the time (performance.now(): from the start of navigation) at
// which the first prediction is added to the document, and in window.bertlabWorkerLog a line
// for each answer of the engine worker: its function, when it was sent and answered, and the
// time it took in the worker, and for loadURL how much of it went to fetching the files (where
// the first prediction's time goes); window.bertlabWorkerCalls holds the same as objects {fn,
// sent, answered, ms}.
func watchFirstPrediction(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, 10*time.Second, "watching for the first prediction", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `new MutationObserver((_, o) => {
				if (document.querySelector('.card .pred')) { window.bertlabFirstPrediction = performance.now(); o.disconnect(); }
			}).observe(document, {childList: true, subtree: true});
			window.bertlabWorkerLog = [];
			window.bertlabWorkerCalls = [];
			if (window.Worker) {
				const W = window.Worker;
				window.Worker = class extends W {
					constructor(...args) {
						super(...args);
						const sent = new Map(), post = this.postMessage.bind(this);
						this.postMessage = (m, ...rest) => {
							if (m && m.fn) sent.set(m.id, [m.fn, performance.now()]);
							return post(m, ...rest);
						};
						this.addEventListener('message', (e) => {
							const s = e.data && sent.get(e.data.id);
							if (s) window.bertlabWorkerCalls.push({fn: s[0], sent: s[1], answered: performance.now(), ms: e.data.ms});
							if (s) window.bertlabWorkerLog.push(s[0] + ' ' + Math.round(s[1]) + '-' + Math.round(performance.now()) + ' ms (' + Math.round(e.data.ms) + ' in the worker' +
								(e.data.fetchMs !== undefined ? ', ' + Math.round(e.data.fetchMs) + ' of them fetching' : '') + ')');
						});
					}
				};
			}`})
		return err
	}))
}

func TestPage(t *testing.T) {
	c, model, url, ctx := tinyPage(t)

	// The time from the start of navigation to the first prediction on screen, recorded by the
	// page's own clock when the first prediction is added to the document (reported, not bounded:
	// it depends on the machine).
	watchFirstPrediction(t, ctx)
	do(t, ctx, 30*time.Second, "opening the page", chromedp.Navigate(url+"#mask")) // without a fragment a first visit lands on the lessons
	wait(t, ctx, 60*time.Second, "the model to load and the first example to be predicted",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card .pred').length > 0`)
	firstMs := eval[float64](t, ctx, `window.bertlabFirstPrediction || 0`)
	if firstMs <= 0 {
		t.Error("the page showed predictions, but the observer saw no prediction added")
	}
	t.Logf("page load to the first prediction: %.0f ms (navigation start to the first prediction in the document)", firstMs)
	if f := eval[string](t, ctx, `window.bertlabWasm`); f != "app.wasm" {
		t.Errorf("Chromium has WebAssembly SIMD: the page should run app.wasm, runs %q", f)
	}
	if how := eval[string](t, ctx, `window.bertlabCompile`); how != "streaming" {
		t.Errorf("the page compiled app.wasm %q, want streaming (the server says application/wasm)", how)
	}

	// Type a sentence and commit it with Enter.
	text := "The man went to the store to buy some milk."
	do(t, ctx, 30*time.Second, "typing a sentence",
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#text').select()`),
		chromedp.SendKeys(chromedp.CSS("#text"), text),
		chromedp.KeyEvent(kb.Enter))
	wait(t, ctx, 30*time.Second, "the typed sentence as tokens",
		settled+` && [...document.querySelectorAll('button.word')].map(b => b.textContent.trim()).join(' ') === 'the man went to the store to buy some milk .'`)
	if n := eval[int](t, ctx, `document.querySelectorAll('.card').length`); n != 0 {
		t.Errorf("a new sentence should start without masks, page shows %d cards", n)
	}

	// Click "store" (word 5) to mask it.
	do(t, ctx, 10*time.Second, "clicking a word", chromedp.Click(chromedp.CSS(`button.word[data-word="5"]`)))
	wait(t, ctx, 30*time.Second, "predictions for the masked word",
		settled+` && document.querySelectorAll('.card[data-mask="5"]:not(.stale) .pred').length === 5`)
	want, err := pipeline.FillMask(model.Model, model.Tok, "The man went to the [MASK] to buy some milk.", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("5")), want.Masks[0], "one mask")

	// A second mask: "milk" (word 9). Both cards must match the native answer for both masks.
	do(t, ctx, 10*time.Second, "clicking a second word", chromedp.Click(chromedp.CSS(`button.word[data-word="9"]`)))
	wait(t, ctx, 30*time.Second, "predictions for two masks",
		settled+` && document.querySelectorAll('.card:not(.stale)').length === 2 && document.querySelectorAll('.card[data-mask="9"] .pred').length === 5`)
	want, err = pipeline.FillMask(model.Model, model.Tok, "The man went to the [MASK] to buy some [MASK].", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("5")), want.Masks[0], "two masks, first")
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("9")), want.Masks[1], "two masks, second")
	if h := eval[string](t, ctx, `location.hash`); !strings.HasPrefix(h, "#mask?") || !strings.Contains(h, "masks=5,9") {
		t.Errorf("the URL should carry the masks, got %q", h)
	}
	screenshot(t, ctx, "mask-view")

	// Clicking a prediction puts it into the sentence and unmasks that word.
	first := want.Masks[1].Predictions[0].Token
	do(t, ctx, 10*time.Second, "clicking a prediction", chromedp.Click(chromedp.CSS(`.card[data-mask="9"] .pred`)))
	wait(t, ctx, 30*time.Second, "the prediction in the sentence",
		settled+` && document.querySelectorAll('.card').length === 1 && document.querySelector('#text').value === `+jsString("The man went to the store to buy some "+strings.TrimPrefix(first, "##")+"."))
	if h := eval[string](t, ctx, `location.hash`); !strings.Contains(h, "masks=5") || strings.Contains(h, "masks=5,") {
		t.Errorf("after filling word 9 the URL should keep only mask 5, got %q", h)
	}

	// Clicking a masked word again brings it back.
	do(t, ctx, 10*time.Second, "unmasking", chromedp.Click(chromedp.CSS(`button.word[data-word="5"]`)))
	wait(t, ctx, 30*time.Second, "no mask left", settled+` && document.querySelectorAll('.card').length === 0 && !document.querySelector('button.word.masked')`)

	// A shared link restores the sentence and its masks.
	do(t, ctx, 30*time.Second, "opening a shared link",
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(url+"#mask?text=Paris%20is%20the%20capital%20of%20France.&masks=0,3"))
	wait(t, ctx, 60*time.Second, "the shared state",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card:not(.stale)').length === 2 && document.querySelectorAll('.card .pred').length === 10`)
	want, err = pipeline.FillMask(model.Model, model.Tok, "[MASK] is the [MASK] of France.", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("0")), want.Masks[0], "shared link, first")
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("3")), want.Masks[1], "shared link, second")

	// The attention view: a layer x head grid of canvases, drawn, and the selected head large.
	L, A := c.NumHiddenLayers, c.NumAttentionHeads
	do(t, ctx, 10*time.Second, "opening the attention view", chromedp.Click(chromedp.CSS(`button[data-tab="attention"]`)))
	wait(t, ctx, 30*time.Second, "the attention grid",
		settled+` && document.querySelectorAll('.thumb canvas').length === `+itoa(L*A)+` && document.querySelector('.heatmap canvas')`)
	blank := eval[[]string](t, ctx, `[...document.querySelectorAll('.thumb canvas, .heatmap canvas')].filter(c => {
		if (!c.width || !c.height) return true;
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < d.length; i += 4) if (d[i+3] > 0 && (d[i] < 200 || d[i+1] < 200)) return false;
		return true;
	}).map(c => c.parentNode.className + ' ' + (c.parentNode.dataset.layer || '') + '/' + (c.parentNode.dataset.head || ''))`)
	if len(blank) > 0 {
		t.Errorf("blank canvases: %v", blank)
	}
	enc, err := model.Tok.Encode("[MASK] is the [MASK] of France.", 0)
	if err != nil {
		t.Fatal(err)
	}
	if w := eval[int](t, ctx, `document.querySelector('.thumb canvas').width`); w != enc.Len() {
		t.Errorf("a grid canvas should hold one pixel per token pair: width %d, %d tokens", w, enc.Len())
	}
	// Hovering the large map reads out one probability: the page's number equals the native one.
	// Redraw only what changed: each canvas counts its draws, and a test mark set here stays on
	// it as long as the page keeps that canvas.
	drawsJS := `[...document.querySelectorAll('.thumb canvas, .heatmap canvas')].map(c => (c.bertlabMark || '-') + ':' + c.bertlabDraws)`
	eval[bool](t, ctx, `[...document.querySelectorAll('.thumb canvas, .heatmap canvas')].every((c, i) => c.bertlabMark = 'c' + i)`)
	marked := eval[[]string](t, ctx, drawsJS)
	renders := eval[int](t, ctx, `window.bertlabRender.count`)
	box := eval[[]float64](t, ctx, `(() => { const c = document.querySelector('.heatmap canvas'), r = c.getBoundingClientRect(); return [r.left, r.top, c.bertlabMargin, c.bertlabCell]; })()`)
	const row, col = 1, 2
	x, y := box[0]+box[2]+box[3]*(col+0.5), box[1]+box[2]+box[3]*(row+0.5)
	do(t, ctx, 10*time.Second, "hovering the large heatmap", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
	wait(t, ctx, 10*time.Second, "the readout", `document.querySelector('[data-role="readout"]').textContent.includes('attends to')`)
	readout := eval[string](t, ctx, `document.querySelector('[data-role="readout"]').textContent`)
	natt, err := pipeline.Attention(model.Model, model.Tok, "[MASK] is the [MASK] of France.", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var qi, kj int
	var p float64
	var qt, kt string
	if _, err := fmt.Sscanf(readout, "%s (row %d) attends to %s (column %d) with probability %f", &qt, &qi, &kt, &kj, &p); err != nil {
		t.Fatalf("readout %q: %v", readout, err)
	}
	if qi != row || kj != col {
		t.Errorf("pointing at row %d, column %d reads out row %d, column %d", row, col, qi, kj)
	}
	if w := float64(natt.Attentions[0][qi][kj]); math.Abs(p-w) > 1e-4 || qt != enc.Tokens[qi] || kt != enc.Tokens[kj] {
		t.Errorf("readout %q: native probability %.4f for %s -> %s", readout, w, enc.Tokens[qi], enc.Tokens[kj])
	}
	screenshot(t, ctx, "attention-view")
	if n := eval[int](t, ctx, `window.bertlabRender.count`); n <= renders {
		t.Errorf("the readout was shown without a render (%d renders before the hover, %d after)", renders, n)
	}
	if got := eval[[]string](t, ctx, drawsJS); strings.Join(got, " ") != strings.Join(marked, " ") {
		t.Errorf("hovering the large heatmap redrew canvases: mark:draws %v before, %v after", marked, got)
	}

	// Arrow keys step through heads and layers.
	before := eval[string](t, ctx, `document.querySelector('.heatmap canvas').bertlabKey`)
	do(t, ctx, 10*time.Second, "pressing the right arrow",
		chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`),
		chromedp.KeyEvent(kb.ArrowRight))
	wait(t, ctx, 10*time.Second, "head 1 selected",
		`document.querySelector('[data-role="head"]').textContent === 'head 1' && location.hash.includes('head=1') && document.querySelector('.thumb.selected').dataset.head === '1'`)
	if after := eval[string](t, ctx, `document.querySelector('.heatmap canvas').bertlabKey`); after == before {
		t.Errorf("the large heatmap was not redrawn for the next head (key %q)", after)
	}
	// The next head redraws the large heatmap, once, and none of the grid's maps.
	wantDraws := slices.Clone(marked)
	big := wantDraws[len(wantDraws)-1]
	n, _ := strconv.Atoi(big[strings.Index(big, ":")+1:])
	wantDraws[len(wantDraws)-1] = big[:strings.Index(big, ":")+1] + strconv.Itoa(n+1)
	if got := eval[[]string](t, ctx, drawsJS); strings.Join(got, " ") != strings.Join(wantDraws, " ") {
		t.Errorf("the next head should redraw the large heatmap once and nothing else: mark:draws %v, want %v", got, wantDraws)
	}
	do(t, ctx, 10*time.Second, "pressing the down arrow", chromedp.KeyEvent(kb.ArrowDown))
	wait(t, ctx, 10*time.Second, "layer 1 selected",
		`document.querySelector('[data-role="layer"]').textContent === 'layer 1' && location.hash.includes('layer=1')`)
	do(t, ctx, 10*time.Second, "the previous-head button", chromedp.Click(chromedp.CSS(`button[data-step="head-prev"]`)))
	wait(t, ctx, 10*time.Second, "head 0 selected", `document.querySelector('[data-role="head"]').textContent === 'head 0'`)
	screenshot(t, ctx, "attention-layer1")
}

// TestFallbacks opens the page in the least helpful setting it supports: a browser that answers
// the SIMD probe as one without WebAssembly SIMD does and keeps the compiled module from the
// worker, and a server that sends .wasm as application/octet-stream (no streaming compile). The
// page must run app-scalar.wasm on the main thread, the worker must fetch app-scalar.wasm itself,
// and the predictions must be what the native model predicts.
func TestFallbacks(t *testing.T) {
	_, model, dir := tinySite(t, 1)
	files := http.FileServer(http.Dir(dir))
	var wasmGets atomic.Int32
	url := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".wasm") {
			wasmGets.Add(1)
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		files.ServeHTTP(w, r)
	}))
	ctx := browser(t)
	do(t, ctx, 10*time.Second, "turning off WebAssembly SIMD and the module handover", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `WebAssembly.validate = () => false;
				Object.defineProperty(window, 'bertlabModule', {set() {}, get() { return undefined; }});`})
		return err
	}))
	text := "The man went to the store to buy some milk."
	do(t, ctx, 30*time.Second, "opening the page with a mask in the URL",
		chromedp.Navigate(url+"#mask?text="+strings.ReplaceAll(text, " ", "%20")+"&masks=5"))
	wait(t, ctx, 60*time.Second, "predictions for the masked word",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card[data-mask="5"]:not(.stale) .pred').length === 5`)
	if f := eval[string](t, ctx, `window.bertlabWasm`); f != "app-scalar.wasm" {
		t.Fatalf("without SIMD the page should run app-scalar.wasm, runs %q", f)
	}
	// Without application/wasm the streaming compile is refused and the page fetches the file
	// whole; the worker fetches it too (the browser's cache may answer it).
	if how := eval[string](t, ctx, `window.bertlabCompile`); how != "whole" {
		t.Errorf("the page compiled app-scalar.wasm %q, want whole (the server does not say application/wasm)", how)
	}
	if n := wasmGets.Load(); n < 2 {
		t.Errorf("the server saw %d requests for the wasm, want at least the page's streaming try and its whole fetch", n)
	}
	want, err := pipeline.FillMask(model.Model, model.Tok, "The man went to the [MASK] to buy some milk.", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("5")), want.Masks[0], "scalar build, one mask")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
