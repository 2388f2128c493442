//go:build !js

package browsertest

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/bert"
)

// probe measures, in the page, how long the page takes to answer a click while the engine
// computes: from the input event's timestamp to the click handler, and to the DOM change the
// UI wasm renders in answer. It also records the longest gap between timer ticks, which a
// main thread frozen by the model would stretch.
const probe = `(() => {
  const p = window.bertlabProbe = {maxGap: 0, clicks: []};
  let last = performance.now();
  p.timer = setInterval(() => { const now = performance.now(); p.maxGap = Math.max(p.maxGap, now - last); last = now; }, 10);
  document.addEventListener('click', (e) => {
    const word = e.target.closest('button.word');
    if (!word) return;
    const c = {handler: performance.now() - e.timeStamp, busy: document.querySelector('.app').dataset.busy, render: -1};
    p.clicks.push(c);
    const seen = () => { if (word.classList.contains('masked')) { c.render = performance.now() - e.timeStamp; obs.disconnect(); return true; } };
    const obs = new MutationObserver(seen);
    obs.observe(document.querySelector('.tokens'), {attributes: true, childList: true, subtree: true});
    const start = performance.now();
    new MutationObserver(() => {
      if (document.querySelector('.app').dataset.busy === '0' && !p.computeMs) p.computeMs = performance.now() - start;
    }).observe(document.querySelector('.app'), {attributes: true});
  }, true);
})()`

type clickProbe struct {
	Handler float64 `json:"handler"`
	Render  float64 `json:"render"`
	Busy    string  `json:"busy"`
}

// TestPageStaysResponsive clicks a word while the engine runs a model big enough to take
// seconds on a long text: the page must answer within 100 ms, since the engine runs in its
// Web Worker and not on the page's thread.
func TestPageStaysResponsive(t *testing.T) {
	chrome(t) // before the builds: without a browser, say so at once
	c, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 256, 2, 4, 1024
	model := randomModel(t, c, 2)
	site := serve(t, site(t, map[string]*folder{"slow": model}))
	ctx := browser(t)

	long := strings.Repeat("the quick brown fox jumps over the lazy dog . ", 60)
	do(t, ctx, 30*time.Second, "opening the page with a long text",
		chromedp.Navigate(site+"#mask?text="+strings.ReplaceAll(url.QueryEscape(long), "+", "%20")+"&masks=3"))
	wait(t, ctx, 120*time.Second, "the engine computing predictions for the long text",
		`document.querySelector('.app[data-loaded]') && document.querySelector('.app').dataset.busy === '1' && document.querySelector('button.word[data-word="5"]') && document.querySelectorAll('.card .pred').length === 0`)
	do(t, ctx, 10*time.Second, "installing the probe", chromedp.Evaluate[chromedp.Void](probe))
	do(t, ctx, 10*time.Second, "clicking a word while the engine computes", chromedp.Click(chromedp.CSS(`button.word[data-word="5"]`)))
	wait(t, ctx, 120*time.Second, "the predictions for both masks",
		`document.querySelector('.app').dataset.busy === '0' && document.querySelectorAll('.card:not(.stale) .pred').length === 10`)

	clicks := eval[[]clickProbe](t, ctx, `bertlabProbe.clicks`)
	maxGap := eval[float64](t, ctx, `bertlabProbe.maxGap`)
	computeMs := eval[float64](t, ctx, `bertlabProbe.computeMs || 0`)
	render := eval[map[string]float64](t, ctx, `bertlabRender`)
	if len(clicks) != 1 {
		t.Fatalf("the probe saw %d clicks on words, want 1", len(clicks))
	}
	k := clicks[0]
	t.Logf("click answered after %.1f ms, the word shown masked after %.1f ms, the engine busy for %.0f ms after the click; "+
		"longest timer gap %.1f ms; the page's own renders: %v (ms)", k.Handler, k.Render, computeMs, maxGap, render)
	if k.Busy != "1" {
		t.Fatalf("the engine was not computing when the word was clicked (data-busy=%q): the test proves nothing", k.Busy)
	}
	if computeMs < 300 {
		t.Fatalf("the engine finished %.0f ms after the click: too fast for this test to show anything; make its model bigger", computeMs)
	}
	if k.Handler > 100 {
		t.Errorf("the page answered a click after %.1f ms while the engine computed, want within 100 ms", k.Handler)
	}
	// The page's answer to the click must not wait for the engine. Its own rendering of a
	// 512-token sentence takes tens of ms, more on a loaded machine: the gaps are logged above.
	if k.Render < 0 || k.Render > computeMs/2 {
		t.Errorf("the clicked word was shown masked after %.1f ms, while the engine computed for %.0f ms: the page waited for the engine", k.Render, computeMs)
	}
}
