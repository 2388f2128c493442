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

	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/pipeline"
)

type pageVec struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// stepVecsJS reads the vectors the step card shows, with the numbers each strip was drawn from.
const stepVecsJS = `[...document.querySelectorAll('.stepcard .vec')].map(v => ({name: v.dataset.vec, values: Array.from((v.querySelector('canvas') || {}).bertlabValues || [])}))`

// checkStep compares the step card with the native pipeline's step id for layer and token.
func checkStep(t *testing.T, got []pageVec, f *folder, text string, layer, token int, id string) {
	t.Helper()
	want, err := pipeline.Steps(f.Model, f.Tok, text, nil, layer, token)
	if err != nil {
		t.Fatal(err)
	}
	ws := want.Step(id)
	if len(got) != len(ws.Vectors) {
		t.Fatalf("step %s: page shows %d vectors, native %d", id, len(got), len(ws.Vectors))
	}
	for k, wv := range ws.Vectors {
		g := got[k]
		if g.Name != wv.Name || len(g.Values) != len(wv.Values) {
			t.Fatalf("step %s vector %d: page %q with %d values, native %q with %d", id, k, g.Name, len(g.Values), wv.Name, len(wv.Values))
		}
		for j, w := range wv.Values {
			// The browser runs the pure-Go kernels, natively the assembly: float32 rounding differs.
			if d := math.Abs(g.Values[j] - float64(w)); d > 1e-4*(1+math.Abs(float64(w))) {
				t.Errorf("step %s, %s[%d]: page %g, native %g", id, wv.Name, j, g.Values[j], w)
				break
			}
		}
	}
}

// blankCanvases counts, in JavaScript, the canvases matching sel that have nothing but white drawn.
func blankCanvases(sel string) string {
	return `[...document.querySelectorAll('` + sel + `')].filter(c => {
		if (!c.width || !c.height) return true;
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < d.length; i += 4) if (d[i+3] > 0 && (d[i] < 230 || d[i+1] < 230 || d[i+2] < 230)) return false;
		return true;
	}).length`
}

func TestStepsAndMaskingViews(t *testing.T) {
	c, model, url, ctx := tinyPage(t)
	text := "The cat sat on the mat."
	A := c.NumAttentionHeads

	// A shared link opens the step view at layer 1, token 2 ("cat"), step 6 (softmax).
	do(t, ctx, 30*time.Second, "opening the step view",
		chromedp.Navigate(url+"#steps?text=The%20cat%20sat%20on%20the%20mat.&layer=1&token=2&step=5"))
	wait(t, ctx, 60*time.Second, "the softmax step",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('.stepcard[data-step-id="softmax"]:not(.stale)') && document.querySelectorAll('.stepcard .strip canvas').length === `+itoa(A))
	checkStep(t, eval[[]pageVec](t, ctx, stepVecsJS), model, text, 1, 2, "softmax")
	if n := eval[int](t, ctx, blankCanvases(".stepcard .strip canvas")); n != 0 {
		t.Errorf("%d blank strips", n)
	}
	if s := eval[string](t, ctx, `document.querySelector('.stok.selected').textContent`); s != "cat" {
		t.Errorf("the selected token is %q, want cat", s)
	}
	screenshot(t, ctx, "steps-softmax")

	// Hovering a strip reads out one number.
	box := eval[[]float64](t, ctx, `(() => { const r = document.querySelector('.stepcard .strip canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	do(t, ctx, 10*time.Second, "hovering a strip", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0]+box[2]/float64(2*8)+1, box[1]+5))
	wait(t, ctx, 10*time.Second, "the readout", `document.querySelector('[data-role="step-readout"]').textContent.includes('=')`)
	if r := eval[string](t, ctx, `document.querySelector('[data-role="step-readout"]').textContent`); !strings.HasPrefix(r, "attention head 0 → [CLS] (token 0) = ") {
		t.Errorf("readout %q", r)
	}

	// Next step (context), then another token: the walk follows.
	do(t, ctx, 10*time.Second, "the next-step button", chromedp.Click(chromedp.CSS(`button[data-step="step-next"]`)))
	wait(t, ctx, 10*time.Second, "the context step", `document.querySelector('.stepcard[data-step-id="context"]') && location.hash.includes('step=6')`)
	do(t, ctx, 10*time.Second, "clicking a token", chromedp.Click(chromedp.CSS(`button.stok[data-token="3"]`)))
	wait(t, ctx, 30*time.Second, "the walk for token 3",
		settled+` && location.hash.includes('token=3') && document.querySelector('.stepcard[data-step-id="context"]:not(.stale)')`)
	checkStep(t, eval[[]pageVec](t, ctx, stepVecsJS), model, text, 1, 3, "context")

	// Every step renders, each with the model's numbers.
	for i, id := range []string{"embed", "embed-ln", "qkv", "scores", "mask", "softmax", "context", "attn-out", "ffn", "ffn-out"} {
		do(t, ctx, 10*time.Second, "choosing step "+id, chromedp.Click(chromedp.CSS(fmt.Sprintf(`button.navstep[data-stepi="%d"]`, i))))
		wait(t, ctx, 10*time.Second, "step "+id, `document.querySelector('.stepcard[data-step-id="`+id+`"]') && [...document.querySelectorAll('.stepcard .strip')].every(s => s.querySelector('canvas') && s.querySelector('canvas').bertlabValues)`)
		checkStep(t, eval[[]pageVec](t, ctx, stepVecsJS), model, text, 1, 3, id)
		if n := eval[int](t, ctx, blankCanvases(".stepcard .strip canvas")); n != 0 && id != "mask" {
			t.Errorf("step %s: %d blank strips", id, n)
		}
		switch id {
		case "qkv":
			screenshot(t, ctx, "steps-qkv")
		case "scores":
			screenshot(t, ctx, "steps-scores")
		case "ffn-out":
			screenshot(t, ctx, "steps-ffn-out")
		}
	}

	// Arrow keys: ← the previous step, ↑ the other layer (wrapping), with the walk recomputed.
	do(t, ctx, 10*time.Second, "pressing the left and up arrows",
		chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`),
		chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.ArrowUp))
	wait(t, ctx, 30*time.Second, "layer 0, step 9",
		settled+` && location.hash.includes('layer=0') && location.hash.includes('step=8') && document.querySelector('.stepcard[data-step-id="ffn"]:not(.stale)')`)
	checkStep(t, eval[[]pageVec](t, ctx, stepVecsJS), model, text, 0, 3, "ffn")

	// The masking lab: the sentence masked with seed 0 as the native Masker does.
	do(t, ctx, 10*time.Second, "opening the masking lab", chromedp.Click(chromedp.CSS(`button[data-tab="masking"]`)))
	checkLab := func(what, text string, seed int, ww bool) {
		t.Helper()
		wait(t, ctx, 30*time.Second, what,
			settled+` && document.querySelector('.lab[data-seed="`+itoa(seed)+`"]') && document.querySelectorAll('.nsp').length === 6`)
		want, err := lab.MaskLab(model.Tok, text, c.MaxPositionEmbeddings, uint64(seed), ww)
		if err != nil {
			t.Fatal(err)
		}
		shown := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-role="masked"] .ltok')].map(s => s.textContent)`)
		kinds := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-role="masked"] .ltok')].map(s => s.dataset.kind)`)
		if strings.Join(shown, " ") != strings.Join(want.Shown, " ") || strings.Join(kinds, ",") != strings.Join(want.Kinds, ",") {
			t.Errorf("%s: page %q %q, native Masker %q %q", what, shown, kinds, want.Shown, want.Kinds)
		}
		pairs, err := lab.NSPPairs(model.Tok, uint64(seed), 6)
		if err != nil {
			t.Fatal(err)
		}
		got := eval[[]string](t, ctx, `[...document.querySelectorAll('.nsp')].map(p => p.querySelector('.nspbadge').textContent + ' ' + [...p.querySelectorAll('.labtoks .ltok')].map(s => s.textContent).join(' '))`)
		for i, p := range pairs {
			w := "NotNext "
			if p.IsNext {
				w = "IsNext "
			}
			w += strings.Join(p.Tokens, " ")
			if i >= len(got) || got[i] != w {
				t.Errorf("%s: NSP pair %d: page %q, native %q", what, i, got[min(i, len(got)-1)], w)
			}
		}
	}
	checkLab("the sentence masked with seed 0", text, 0, false)
	do(t, ctx, 10*time.Second, "re-rolling", chromedp.Click(chromedp.CSS(`button[data-role="reroll"]`)))
	checkLab("seed 1", text, 1, false)
	do(t, ctx, 10*time.Second, "whole words", chromedp.Click(chromedp.CSS(`input[data-role="whole-word"]`)))
	wait(t, ctx, 10*time.Second, "ww in the URL", `location.hash.includes('ww=1')`)
	checkLab("seed 1, whole words", text, 1, true)
	samples, err := lab.SampleSentences()
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, 10*time.Second, "a corpus sample", chromedp.Click(chromedp.CSS(`button[data-src="sample"]`)))
	wait(t, ctx, 30*time.Second, "sample 1", settled+` && location.hash.includes('sample=1') && document.querySelector('[data-role="sample"]')`)
	do(t, ctx, 10*time.Second, "the next sample", chromedp.Click(chromedp.CSS(`button[data-role="sample-next"]`)))
	wait(t, ctx, 30*time.Second, "sample 2", settled+` && location.hash.includes('sample=2')`)
	checkLab("sample 2", samples[1], 1, true)
	if h := eval[string](t, ctx, `location.hash`); !strings.HasPrefix(h, "#masking?") || !strings.Contains(h, "seed=1") {
		t.Errorf("the URL should carry the lab's state, got %q", h)
	}
	screenshot(t, ctx, "masking-lab")
}
