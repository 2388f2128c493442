//go:build !js

package browsertest

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestAttentionHideAndExport hides [CLS] and [SEP] from the maps, and exports the large one.
func TestAttentionHideAndExport(t *testing.T) {
	_, model, url, ctx := tinyPage(t)
	text := "The cat sat on the mat."
	enc, err := model.Tok.Encode(text, 0)
	if err != nil {
		t.Fatal(err)
	}
	S := enc.Len()

	do(t, ctx, 30*time.Second, "opening the attention view", chromedp.Navigate(url+"#attention?text=The%20cat%20sat%20on%20the%20mat.&layer=0&head=0"))
	wait(t, ctx, 60*time.Second, "the attention maps",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('.heatmap canvas') && document.querySelector('.thumb canvas')`)
	if w := eval[int](t, ctx, `document.querySelector('.thumb canvas').width`); w != S {
		t.Fatalf("thumb width %d, want %d tokens", w, S)
	}
	before := eval[float64](t, ctx, `document.querySelector('.heatmap canvas').getBoundingClientRect().width`)
	cell := eval[float64](t, ctx, `document.querySelector('.heatmap canvas').bertlabCell`)

	do(t, ctx, 10*time.Second, "hiding [CLS] and [SEP]", chromedp.Click(chromedp.CSS(`input[data-role="hide-special"]`)))
	wait(t, ctx, 10*time.Second, "the maps without [CLS] and [SEP]",
		`[...document.querySelectorAll('.thumb canvas')].every(c => c.width === `+itoa(S-2)+`) && document.querySelector('.heatmap canvas').bertlabKey.endsWith('/true') && location.hash.includes('special=0')`)
	after := eval[float64](t, ctx, `document.querySelector('.heatmap canvas').getBoundingClientRect().width`)
	newCell := eval[float64](t, ctx, `document.querySelector('.heatmap canvas').bertlabCell`)
	// The label margin stays (the longest label is a word), the matrix loses two rows' worth.
	if after >= before || (newCell == cell && before-after < 2*cell-1) {
		t.Errorf("hiding two tokens: large map %g px wide, was %g (cell %g, now %g)", after, before, cell, newCell)
	}
	screenshot(t, ctx, "attention-hide-special")

	do(t, ctx, 10*time.Second, "exporting the PNG", chromedp.Click(chromedp.CSS(`button[data-role="export-png"]`)))
	wait(t, ctx, 10*time.Second, "the export link", `document.querySelector('a[data-role="export-link"]') && document.querySelector('a[data-role="export-link"]').href.startsWith('blob:')`)
	sig := eval[[]int](t, ctx, `fetch(document.querySelector('a[data-role="export-link"]').href).then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b.slice(0, 8))))`)
	want := []int{137, 80, 78, 71, 13, 10, 26, 10}
	if len(sig) != 8 {
		t.Fatalf("export: %v", sig)
	}
	for i := range want {
		if sig[i] != want[i] {
			t.Fatalf("the export starts with %v, not the PNG signature %v", sig, want)
		}
	}
	if name := eval[string](t, ctx, `document.querySelector('a[data-role="export-link"]').download`); name != "bertlab-attention-layer0-head0.png" {
		t.Errorf("export name %q", name)
	}
	// Showing them again restores the full maps.
	do(t, ctx, 10*time.Second, "showing [CLS] and [SEP]", chromedp.Click(chromedp.CSS(`input[data-role="hide-special"]`)))
	wait(t, ctx, 10*time.Second, "the full maps", `[...document.querySelectorAll('.thumb canvas')].every(c => c.width === `+itoa(S)+`)`)
}
