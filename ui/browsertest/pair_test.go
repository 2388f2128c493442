//go:build !js

package browsertest

import (
	"fmt"
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

// nspJS reads the IsNext probability the mask view shows ("" while it is computing).
const nspJS = `(document.querySelector('[data-role="nsp"]') || {dataset: {}}).dataset.isnext || ''`

// TestPairMaskView types a sentence B in the mask view: its words show in B's colour and can be
// masked, and the page's predictions and next-sentence probability equal the native pipeline's.
func TestPairMaskView(t *testing.T) {
	_, model, url, ctx := tinyPage(t)
	textA, textB := "The cat sat on the mat.", "It was very happy there."
	do(t, ctx, 30*time.Second, "opening the mask view", chromedp.Navigate(url+"#mask?text=The%20cat%20sat%20on%20the%20mat.&masks=2"))
	wait(t, ctx, 60*time.Second, "the first predictions",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card:not(.stale) .pred').length === 5`)
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-role="nsp"]').length`); n != 0 {
		t.Errorf("without sentence B the page shows %d NSP panels", n)
	}

	do(t, ctx, 30*time.Second, "typing sentence B",
		chromedp.Click(chromedp.CSS("#textb")),
		chromedp.SendKeys(chromedp.CSS("#textb"), textB),
		chromedp.KeyEvent(kb.Enter))
	wait(t, ctx, 30*time.Second, "the NSP probability",
		settled+` && `+nspJS+` !== '' && document.querySelectorAll('.card:not(.stale) .pred').length === 5`)
	b := textB
	want, err := pipeline.FillMask(model.Model, model.Tok, "The cat [MASK] on the mat.", &b, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkNSP := func(what string, want *pipeline.NSPResult) {
		t.Helper()
		var got float64
		if _, err := fmt.Sscan(eval[string](t, ctx, nspJS), &got); err != nil || want == nil || math.Abs(got-want.IsNext) > 1e-4 {
			t.Errorf("%s: page IsNext %v (%v), native %+v", what, got, err, want)
		}
	}
	checkNSP("sentence B typed", want.NSP)
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("2")), want.Masks[0], "mask in A with sentence B")
	wordsB := eval[string](t, ctx, `[...document.querySelectorAll('button.word.seg-b')].map(b => b.textContent.trim()).join(' ')`)
	if wordsB != "it was very happy there ." {
		t.Errorf("sentence B's words %q", wordsB)
	}
	if h := eval[string](t, ctx, `location.hash`); !strings.Contains(h, "&b=It%20was%20very%20happy%20there.") {
		t.Errorf("the URL should carry sentence B: %q", h)
	}

	// Mask "happy" (word 3 of B) by click: two cards, the NSP of the masked pair.
	id := fmt.Sprint(ui.PairWordBase + 3)
	do(t, ctx, 10*time.Second, "clicking a word of B", chromedp.Click(chromedp.CSS(`button.word[data-word="`+id+`"]`)))
	wait(t, ctx, 30*time.Second, "predictions for the word of B",
		settled+` && document.querySelectorAll('.card:not(.stale)').length === 2 && document.querySelectorAll('.card[data-mask="`+id+`"] .pred').length === 5 && `+nspJS+` !== ''`)
	b = "It was very [MASK] there."
	want, err = pipeline.FillMask(model.Model, model.Tok, "The cat [MASK] on the mat.", &b, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("2")), want.Masks[0], "pair, mask in A")
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS(id)), want.Masks[1], "pair, mask in B")
	checkNSP("B masked", want.NSP)
	if h := eval[string](t, ctx, `location.hash`); !strings.Contains(h, "&masks=2&b=") || !strings.HasSuffix(h, "&bmasks=3") {
		t.Errorf("the URL should carry both masks: %q", h)
	}
	screenshot(t, ctx, "mask-pair")

	// No mask left: the NSP alone (pipeline.NextSentence).
	do(t, ctx, 10*time.Second, "unmasking both", chromedp.Click(chromedp.CSS(`button.word[data-word="`+id+`"]`)))
	wait(t, ctx, 30*time.Second, "one card", settled+` && document.querySelectorAll('.card').length === 1`)
	do(t, ctx, 10*time.Second, "unmasking A", chromedp.Click(chromedp.CSS(`button.word[data-word="2"]`)))
	wait(t, ctx, 30*time.Second, "no card, the NSP", settled+` && document.querySelectorAll('.card').length === 0 && `+nspJS+` !== ''`)
	nsp, err := pipeline.NextSentence(model.Model, model.Tok, textA, textB)
	if err != nil {
		t.Fatal(err)
	}
	checkNSP("no masks", nsp)
}

// TestPairAttentionView opens the attention view on a pair: the A→B filter leaves a heatmap
// of |A| × |B| cells whose numbers are the model's, and the head view draws its lines.
func TestPairAttentionView(t *testing.T) {
	c, model, url, ctx := tinyPage(t)
	textA, textB := "The cat sat on the mat.", "It slept there all day."
	enc, err := model.Tok.EncodePair(textA, textB, 0)
	if err != nil {
		t.Fatal(err)
	}
	var idxA, idxB []int
	for i, ty := range enc.TypeIDs {
		if ty == 0 {
			idxA = append(idxA, i)
		} else {
			idxB = append(idxB, i)
		}
	}
	nA, nB := len(idxA), len(idxB)
	do(t, ctx, 30*time.Second, "opening the attention view with a pair",
		chromedp.Navigate(url+"#attention?text=The%20cat%20sat%20on%20the%20mat.&b=It%20slept%20there%20all%20day.&layer=0&head=0"))
	wait(t, ctx, 60*time.Second, "the attention maps",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('.heatmap canvas') && document.querySelectorAll('.thumb canvas').length === `+itoa(c.NumHiddenLayers*c.NumAttentionHeads))
	if w := eval[int](t, ctx, `document.querySelector('.thumb canvas').width`); w != nA+nB {
		t.Errorf("unfiltered thumb width %d, want %d tokens", w, nA+nB)
	}

	do(t, ctx, 10*time.Second, "the A→B filter", chromedp.Click(chromedp.CSS(`button[data-seg="ab"]`)))
	wait(t, ctx, 10*time.Second, "the A→B maps",
		`[...document.querySelectorAll('.thumb canvas')].every(c => c.width === `+itoa(nB)+` && c.height === `+itoa(nA)+`) && location.hash.includes('seg=ab')`)
	dims := eval[[]int](t, ctx, `(() => { const c = document.querySelector('.heatmap canvas'); return [c.bertlabRows, c.bertlabCols]; })()`)
	if len(dims) != 2 || dims[0] != nA || dims[1] != nB {
		t.Errorf("the A→B heatmap has %v rows × columns, want %d × %d", dims, nA, nB)
	}
	if n := eval[int](t, ctx, blankCanvases(".thumb canvas, .heatmap canvas")); n != 0 {
		t.Errorf("%d blank canvases under the A→B filter", n)
	}
	// The cell at row 1, column 2 of the filtered map is A's token 1 attending to B's token 2.
	natt, err := pipeline.Attention(model.Model, model.Tok, textA, &textB, 0)
	if err != nil {
		t.Fatal(err)
	}
	// In view first: with more tabs the map's lower rows can sit below the window's fold, where a
	// mouse event at their coordinates reaches nothing.
	box := eval[[]float64](t, ctx, `(() => { const c = document.querySelector('.heatmap canvas'); c.scrollIntoView({block: 'center'}); const r = c.getBoundingClientRect(); return [r.left, r.top, c.bertlabMargin, c.bertlabCell]; })()`)
	const row, col = 1, 2
	do(t, ctx, 10*time.Second, "hovering the filtered heatmap",
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0]+box[2]+box[3]*(col+0.5), box[1]+box[2]+box[3]*(row+0.5)))
	wait(t, ctx, 10*time.Second, "the readout", `document.querySelector('[data-role="readout"]').textContent.includes('attends to')`)
	var qt, kt string
	var qi, kj int
	var p float64
	readout := eval[string](t, ctx, `document.querySelector('[data-role="readout"]').textContent`)
	if _, err := fmt.Sscanf(readout, "%s (row %d) attends to %s (column %d) with probability %f", &qt, &qi, &kt, &kj, &p); err != nil {
		t.Fatalf("readout %q: %v", readout, err)
	}
	if qi != idxA[row] || kj != idxB[col] || math.Abs(p-float64(natt.Attentions[0][qi][kj])) > 1e-4 {
		t.Errorf("readout %q: want row %d, column %d, probability %.4f", readout, idxA[row], idxB[col], natt.Attentions[0][idxA[row]][idxB[col]])
	}
	screenshot(t, ctx, "attention-pair-ab")

	// The head view of layer 0, head 0 under the same filter: one line per pair above 1%.
	linesIn := func(heads, rows, cols []int) (lo, hi int) {
		for _, h := range heads {
			for _, i := range rows {
				for _, j := range cols {
					w := float64(natt.Attentions[h][i][j])
					if w >= 0.01+1e-5 {
						lo++
					}
					if w >= 0.01-1e-5 {
						hi++
					}
				}
			}
		}
		return lo, hi
	}
	lines := func(heads []int, rows []int) (lo, hi int) { return linesIn(heads, rows, idxB) }
	do(t, ctx, 10*time.Second, "the head view", chromedp.Click(chromedp.CSS(`button[data-show="lines"]`)))
	wait(t, ctx, 10*time.Second, "the head view's lines",
		`document.querySelector('.headview canvas') && document.querySelector('.headview canvas').bertlabLines > 0 && location.hash.includes('show=lines') && !document.querySelector('.heatmap')`)
	lo, hi := lines([]int{0}, idxA)
	if n := eval[int](t, ctx, `document.querySelector('.headview canvas').bertlabLines`); n < lo || n > hi {
		t.Errorf("head view of head 0: %d lines, want %d..%d", n, lo, hi)
	}
	if n := eval[int](t, ctx, blankCanvases(".headview canvas")); n != 0 {
		t.Error("the head view canvas is blank")
	}
	screenshot(t, ctx, "attention-headview")

	// Pointing at a token on the left keeps only its lines.
	hv := eval[[]float64](t, ctx, `(() => { const c = document.querySelector('.headview canvas'), r = c.getBoundingClientRect(); return [r.left, r.top, c.bertlabTop, c.bertlabRowH]; })()`)
	do(t, ctx, 10*time.Second, "hovering a token of the head view",
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, hv[0]+12, hv[1]+hv[2]+hv[3]*2.5))
	wait(t, ctx, 10*time.Second, "one token's lines", `document.querySelector('[data-role="lines-readout"]').textContent.includes('attends most to')`)
	lo, hi = lines([]int{0}, idxA[2:3])
	if n := eval[int](t, ctx, `document.querySelector('.headview canvas').bertlabLines`); n < lo || n > hi {
		t.Errorf("hovering token %d: %d lines, want %d..%d", idxA[2], n, lo, hi)
	}
	screenshot(t, ctx, "attention-headview-hover")

	// Pointing at a token on the right keeps only the lines into it: what attends to it.
	rl := eval[float64](t, ctx, `document.querySelector('.headview canvas').bertlabRightLeft`)
	// Measured again: the first hover's readout may have moved the canvas.
	hv = eval[[]float64](t, ctx, `(() => { const c = document.querySelector('.headview canvas'), r = c.getBoundingClientRect(); return [r.left, r.top, c.bertlabTop, c.bertlabRowH]; })()`)
	do(t, ctx, 10*time.Second, "hovering a key of the head view",
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, hv[0]+rl+8, hv[1]+hv[2]+hv[3]*1.5))
	wait(t, ctx, 10*time.Second, "one key's lines", `document.querySelector('[data-role="lines-readout"]').textContent.includes('is attended to most by')`)
	lo, hi = linesIn([]int{0}, idxA, idxB[1:2])
	if n := eval[int](t, ctx, `document.querySelector('.headview canvas').bertlabLines`); n < lo || n > hi {
		t.Errorf("hovering key %d: %d lines, want %d..%d", idxB[1], n, lo, hi)
	}
	readout = eval[string](t, ctx, `document.querySelector('[data-role="lines-readout"]').textContent`)
	var best float64 = -1
	for _, i := range idxA {
		best = max(best, float64(natt.Attentions[0][i][idxB[1]]))
	}
	if !strings.Contains(readout, fmt.Sprintf("with probability %.4f", best)) {
		t.Errorf("key readout %q: want the largest attention into column %d, %.4f", readout, idxB[1], best)
	}
	screenshot(t, ctx, "attention-headview-hover-key")

	// Every head of the layer at once, then the export.
	do(t, ctx, 10*time.Second, "all heads", chromedp.Click(chromedp.CSS(`input[data-role="all-heads"]`)))
	wait(t, ctx, 10*time.Second, "all heads drawn", `location.hash.includes('heads=all') && document.querySelectorAll('.swatch').length === `+itoa(c.NumAttentionHeads))
	heads := make([]int, c.NumAttentionHeads)
	for h := range heads {
		heads[h] = h
	}
	lo, hi = lines(heads, idxA)
	if n := eval[int](t, ctx, `document.querySelector('.headview canvas').bertlabLines`); n < lo || n > hi {
		t.Errorf("all heads: %d lines, want %d..%d", n, lo, hi)
	}
	screenshot(t, ctx, "attention-headview-all")
	exported := func(name string) {
		t.Helper()
		wait(t, ctx, 10*time.Second, "the export of "+name,
			`document.querySelector('a[data-role="export-link"]') && document.querySelector('a[data-role="export-link"]').download === `+jsString(name))
		sig := eval[[]int](t, ctx, `fetch(document.querySelector('a[data-role="export-link"]').href).then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b.slice(0, 4))))`)
		if fmt.Sprint(sig) != "[137 80 78 71]" {
			t.Errorf("%s starts with %v, not a PNG signature", name, sig)
		}
	}
	do(t, ctx, 10*time.Second, "exporting the head view", chromedp.Click(chromedp.CSS(`button[data-role="export-png"]`)))
	exported("bertlab-headview-layer0-allheads.png")
	do(t, ctx, 10*time.Second, "back to the heatmap", chromedp.Click(chromedp.CSS(`button[data-show="map"]`)))
	wait(t, ctx, 10*time.Second, "the heatmap again", `document.querySelector('.heatmap canvas') && document.querySelector('.heatmap canvas').bertlabCols === `+itoa(nB))
	do(t, ctx, 10*time.Second, "exporting the heatmap", chromedp.Click(chromedp.CSS(`button[data-role="export-png"]`)))
	exported("bertlab-attention-layer0-head0.png")

	// All: the full maps again.
	do(t, ctx, 10*time.Second, "no filter", chromedp.Click(chromedp.CSS(`button[data-seg="all"]`)))
	wait(t, ctx, 10*time.Second, "the full maps", `[...document.querySelectorAll('.thumb canvas')].every(c => c.width === `+itoa(nA+nB)+` && c.height === `+itoa(nA+nB)+`) && !location.hash.includes('seg=')`)
}
