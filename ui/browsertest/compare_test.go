//go:build !js

package browsertest

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
)

// pageCmpRow is a row of the compare view's tables.
type pageCmpRow struct {
	Token string  `json:"token"`
	P1    float64 `json:"p1"`
	P2    float64 `json:"p2"`
	Diff  float64 `json:"diff"`
	Below string  `json:"below"`
}

const cmpRowsJS = `[...document.querySelectorAll('.cmpmask')].map(m => [...m.querySelectorAll('tr.cmprow')].map(e => ({token: e.dataset.token, p1: parseFloat(e.dataset.p1), p2: parseFloat(e.dataset.p2), diff: parseFloat(e.dataset.diff), below: e.dataset.below || ''})))`

// probClose compares a probability or a difference of two the page computed with the native
// one, relative to scale (the probabilities involved): closeTo's absolute 1e-4 would accept any
// value for the tiny random model, whose probabilities are near 1/30522 and differ by 1e-7.
func probClose(got, want, scale float64) bool {
	return math.Abs(got-want) <= 1e-4*math.Abs(scale)+1e-3*math.Abs(want)
}

// TestCompareView compares two sentences in "Compare": the tables' probabilities and
// differences against native pipeline.FillMask of each sentence, the attention difference of two
// heads against native attention, and each sentence's own heatmap when their lengths differ;
// the state survives a reload, and the heatmap exports as a PNG.
func TestCompareView(t *testing.T) {
	_, model, url, ctx := tinyPage(t)
	eng, err := engine.New("tiny-random", model.Model, model.Tok)
	if err != nil {
		t.Fatal(err)
	}
	const (
		s1 = "The [MASK] sat on the mat."
		s2 = "The [MASK] ran to the door."
		s3 = "A [MASK] is sleeping."
	)
	fill := func(s string) *pipeline.FillMaskResult {
		t.Helper()
		f, err := pipeline.FillMask(model.Model, model.Tok, s, nil, pipeline.MaxTopK)
		if err != nil {
			t.Fatalf("native fill-mask %q: %v", s, err)
		}
		return f
	}
	att := func(s string) []pipeline.AttentionResult {
		t.Helper()
		a, err := eng.Attention(s, nil)
		if err != nil {
			t.Fatalf("native attention %q: %v", s, err)
		}
		return a
	}
	prob := func(m pipeline.MaskResult, tok string) (float64, bool) {
		for _, p := range m.Predictions {
			if p.Token == tok {
				return p.Score, true
			}
		}
		return 0, false
	}

	// Sentence 1 from the page's box with a masked word, sentence 2 typed with [MASK].
	do(t, ctx, 30*time.Second, "opening the compare view", chromedp.Navigate(url+"#compare?text=The%20cat%20sat%20on%20the%20mat.&masks=1&layer=1&head=1"))
	wait(t, ctx, 60*time.Second, "the compare view", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('[data-role="compare-text"]')`)
	do(t, ctx, 10*time.Second, "typing sentence 2", chromedp.SendKeys(`[data-role="compare-text"]`, s2))
	click(t, ctx, `[data-role="compare-go"]`)
	wait(t, ctx, 60*time.Second, "the comparison", settled+` && location.hash.includes('&c=The%20%5BMASK%5D%20ran') && document.querySelectorAll('tr.cmprow').length > 0 && document.querySelector('[data-role="compare-diff"] canvas') && document.querySelector('[data-role="compare-diff"] canvas').bertlabDiff`)

	f1, f2 := fill(s1), fill(s2)
	got := eval[[][]pageCmpRow](t, ctx, cmpRowsJS)
	if len(got) != 1 || len(f1.Masks) != 1 || len(f2.Masks) != 1 {
		t.Fatalf("the page compares %d masks; native: %d and %d", len(got), len(f1.Masks), len(f2.Masks))
	}
	m1, m2 := f1.Masks[0], f2.Masks[0]
	// The rows are the union of both native top 5s.
	var union []string
	for _, m := range []pipeline.MaskResult{m1, m2} {
		for _, p := range m.Predictions[:5] {
			if !slices.Contains(union, p.Token) {
				union = append(union, p.Token)
			}
		}
	}
	var shown []string
	for _, r := range got[0] {
		shown = append(shown, r.Token)
	}
	if a, b := slices.Sorted(slices.Values(shown)), slices.Sorted(slices.Values(union)); !slices.Equal(a, b) {
		t.Errorf("the page's candidates %v, native top 5s %v", a, b)
	}
	moved := false
	for i, r := range got[0] {
		w1, ok1 := prob(m1, r.Token)
		w2, ok2 := prob(m2, r.Token)
		if !ok1 || !ok2 {
			t.Fatalf("%s is not among the native top %d of both sentences: the test needs a vocabulary the lists cover", r.Token, pipeline.MaxTopK)
		}
		if r.Below != "" || !probClose(r.P1, w1, w1) || !probClose(r.P2, w2, w2) || !probClose(r.Diff, w2-w1, max(w1, w2)) {
			t.Errorf("row %d: page %+v, native p1 %g p2 %g diff %g", i, r, w1, w2, w2-w1)
		}
		if i > 0 && math.Abs(r.Diff) > math.Abs(got[0][i-1].Diff)+1e-12 {
			t.Errorf("row %d (|diff| %g) after a smaller change (%g): not sorted", i, math.Abs(r.Diff), math.Abs(got[0][i-1].Diff))
		}
		// The tiny model is random: its probabilities are near 1/vocabulary, and move by
		// fractions of a percent; ten times the tolerance of probClose is a change it can see.
		moved = moved || math.Abs(w2-w1) > 1e-3*max(w1, w2)
	}
	if !moved {
		t.Fatal("no candidate's probability changed by 0.1% between the sentences: pick others")
	}

	checkDiff := func(what string, l, h int) {
		t.Helper()
		a1, a2 := att(s1), att(s2)
		want1, want2 := a1[l].Attentions[h], a2[l].Attentions[h]
		if len(want1) != len(want2) {
			t.Fatalf("%s: native lengths %d and %d: pick sentences of the same length", what, len(want1), len(want2))
		}
		vals := strings.Split(eval[string](t, ctx, `document.querySelector('[data-role="compare-diff"] canvas').bertlabDiff`), ",")
		if len(vals) != len(want1)*len(want1) {
			t.Fatalf("%s: the page drew %d values, native %d×%d", what, len(vals), len(want1), len(want1))
		}
		largest := 0.0
		for i := range want1 {
			for j := range want1[i] {
				w := float64(want2[i][j]) - float64(want1[i][j])
				g, _ := strconv.ParseFloat(vals[i*len(want1)+j], 64)
				if !probClose(g, w, 0.1) { // 1e-5 absolute, and 0.1% of the change
					t.Errorf("%s [%d][%d]: page %g, native %g", what, i, j, g, w)
				}
				largest = max(largest, math.Abs(w))
			}
		}
		// A hundred times probClose's tolerance: the check can tell the difference from zero.
		if largest < 1e-3 {
			t.Errorf("%s: the native attention difference is at most %g: the check cannot tell it from zero", what, largest)
		}
		t.Logf("%s: largest attention change %.4g", what, largest)
	}
	checkDiff("layer 1 head 1", 1, 1)
	screenshot(t, ctx, "compare")

	click(t, ctx, `.compareview button[data-layer="0"]`)
	click(t, ctx, `.compareview button[data-head="0"]`)
	wait(t, ctx, 30*time.Second, "layer 0 head 0", settled+` && location.hash.endsWith('&layer=0&head=0') && document.querySelector('[data-role="compare-attnote"]').textContent.startsWith('Layer 0, head 0')`)
	checkDiff("layer 0 head 0", 0, 0)

	// The state is in the URL: a reload shows the same.
	hash := eval[string](t, ctx, `location.hash`)
	do(t, ctx, 30*time.Second, "reloading", chromedp.Reload())
	wait(t, ctx, 60*time.Second, "the comparison after a reload", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('[data-role="compare-diff"] canvas') && document.querySelector('[data-role="compare-diff"] canvas').bertlabDiff`)
	if h := eval[string](t, ctx, `location.hash`); h != hash {
		t.Errorf("after a reload the URL is %s, was %s", h, hash)
	}
	if v := eval[string](t, ctx, `document.querySelector('[data-role="compare-text"]').value`); v != s2 {
		t.Errorf("after a reload sentence 2 is %q", v)
	}
	checkDiff("layer 0 head 0 after a reload", 0, 0)

	do(t, ctx, 10*time.Second, "exporting the heatmap", chromedp.Click(chromedp.CSS(`button[data-role="compare-export"]`)))
	wait(t, ctx, 10*time.Second, "the export link", `document.querySelector('a[data-role="export-link"]') && document.querySelector('a[data-role="export-link"]').download === 'bertlab-compare-layer0-head0.png'`)
	sig := eval[[]int](t, ctx, `fetch(document.querySelector('a[data-role="export-link"]').href).then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b.slice(0, 8))))`)
	if len(sig) != 8 || sig[0] != 137 || sig[1] != 80 || sig[2] != 78 || sig[3] != 71 {
		t.Errorf("the export starts with %v, not the PNG signature", sig)
	}

	// Sentences of different lengths: each one's own heatmap and a note, no difference.
	do(t, ctx, 10*time.Second, "typing a shorter sentence 2", chromedp.SetValue(`[data-role="compare-text"]`, s3), chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-role="compare-text"]').dispatchEvent(new Event('input', {bubbles: true}))`))
	click(t, ctx, `[data-role="compare-go"]`)
	wait(t, ctx, 60*time.Second, "the two heatmaps", settled+` && location.hash.includes('&c=A%20%5BMASK%5D') && document.querySelector('[data-role="compare-att2"] canvas') && document.querySelector('[data-role="compare-att2"] canvas').bertlabValues && !document.querySelector('[data-role="compare-diff"]')`)
	a1, a3 := att(s1), att(s3)
	if len(a1[0].Tokens) == len(a3[0].Tokens) {
		t.Fatalf("%q and %q have the same number of tokens: pick another", s1, s3)
	}
	if note := eval[string](t, ctx, `document.querySelector('[data-role="compare-attnote"]').textContent`); !strings.Contains(note, "no token-by-token difference") || !strings.Contains(note, "sentence 2 has "+strconv.Itoa(len(a3[0].Tokens))) {
		t.Errorf("the note says %q", note)
	}
	for role, want := range map[string][][]float32{"compare-att1": a1[0].Attentions[0], "compare-att2": a3[0].Attentions[0]} {
		vals := strings.Split(eval[string](t, ctx, `document.querySelector('[data-role="`+role+`"] canvas').bertlabValues`), ",")
		if len(vals) != len(want)*len(want) {
			t.Fatalf("%s: page %d values, native %d×%d", role, len(vals), len(want), len(want))
		}
		for i := range want {
			for j := range want[i] {
				g, _ := strconv.ParseFloat(vals[i*len(want)+j], 64)
				if !probClose(g, float64(want[i][j]), 0.1) {
					t.Errorf("%s [%d][%d]: page %g, native %g", role, i, j, g, want[i][j])
				}
			}
		}
	}
	// The tables still compare the one mask, against the new sentence.
	f3 := fill(s3)
	got = eval[[][]pageCmpRow](t, ctx, cmpRowsJS)
	if len(got) != 1 || len(got[0]) == 0 {
		t.Fatalf("after the change the page compares %d masks", len(got))
	}
	r := got[0][0]
	w1, _ := prob(m1, r.Token)
	w3, _ := prob(f3.Masks[0], r.Token)
	if !probClose(r.P1, w1, w1) || !probClose(r.P2, w3, w3) || !probClose(r.Diff, w3-w1, max(w1, w3)) {
		t.Errorf("first row after the change: page %+v, native p1 %g p2 %g", r, w1, w3)
	}
	screenshot(t, ctx, "compare-lengths")
}
