//go:build !js

package browsertest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bertlab/bertlab/core/pipeline"
)

// noError is true when the page shows no error.
const noError = `!document.querySelector('p.error')`

// TestBadText gives the page the two texts a user can get wrong: none at all, and one longer than
// the model's positions. Every view that reads the text must take them without an error, the
// empty text with a word on what to do and the long one with a visible notice that it was cut;
// what is shown of the long text must be what the model computes for it natively.
func TestBadText(t *testing.T) {
	c, model, base, ctx := tinyPage(t)
	do(t, ctx, 30*time.Second, "opening the page", chromedp.Navigate(base+"#mask")) // without a fragment a first visit lands on the lessons
	wait(t, ctx, 60*time.Second, "the model to load", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card .pred').length > 0`)

	// No text: the box emptied and committed.
	do(t, ctx, 10*time.Second, "emptying the text box",
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#text').select()`),
		chromedp.SendKeys(chromedp.CSS("#text"), kb.Delete),
		chromedp.KeyEvent(kb.Enter))
	wait(t, ctx, 30*time.Second, "the empty text's hint",
		settled+` && `+noError+` && document.querySelector('[data-role="blank"]') && document.querySelectorAll('button.word').length === 0 && document.querySelectorAll('.card').length === 0`)
	screenshot(t, ctx, "mask-view-empty")
	for _, tab := range []string{"attention", "steps", "masking", "embeddings", "compare", "mask"} {
		do(t, ctx, 10*time.Second, "opening "+tab+" with no text", chromedp.Click(chromedp.CSS(`button[data-tab="`+tab+`"]`)))
		wait(t, ctx, 30*time.Second, tab+" with no text, without an error", settled+` && `+noError)
	}

	// A text of 700 tokens: the tiny model has 512 positions.
	long := strings.Repeat("The cat sat on the mat. ", 100)
	do(t, ctx, 30*time.Second, "opening a text longer than the model's positions",
		chromedp.Navigate(base+"#mask?text="+url.PathEscape(long)+"&masks=3"))
	wait(t, ctx, 60*time.Second, "the long text's predictions",
		settled+` && `+noError+` && document.querySelectorAll('.card[data-mask="3"]:not(.stale) .pred').length === 5`)
	if !eval[bool](t, ctx, `!!document.querySelector('.maskview p.truncated') && document.querySelector('.maskview p.truncated').offsetParent !== null`) {
		t.Error("the mask view shows no notice that the text was cut")
	}
	full, err := model.Tok.Encode(long, 0)
	if err != nil {
		t.Fatal(err)
	}
	P := c.MaxPositionEmbeddings
	wantNote := fmt.Sprintf("The text makes %d tokens and the model has %d positions: the %d tokens not shown are not seen by the model.", full.Len(), P, full.Len()-P)
	if note := eval[string](t, ctx, `document.querySelector('.maskview p.truncated').textContent`); note != wantNote {
		t.Errorf("the notice says %q, want %q", note, wantNote)
	}
	maxWords := c.MaxPositionEmbeddings - 2 // [CLS] and [SEP]
	if n := eval[int](t, ctx, `document.querySelectorAll('button.word').length`); n == 0 || n > maxWords {
		t.Errorf("the page shows %d words of the long text; the model sees at most %d tokens of it", n, maxWords)
	}
	want, err := pipeline.FillMask(model.Model, model.Tok, strings.Replace(long, "on", "[MASK]", 1), nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Masks) != 1 {
		t.Fatalf("native: %d masks", len(want.Masks))
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("3")), want.Masks[0], "the long text, word 3")
	screenshot(t, ctx, "mask-view-truncated")

	do(t, ctx, 10*time.Second, "opening attention with the long text", chromedp.Click(chromedp.CSS(`button[data-tab="attention"]`)))
	wait(t, ctx, 60*time.Second, "attention's notice for the long text", settled+` && `+noError+` && !!document.querySelector('p.truncated')`)
	do(t, ctx, 10*time.Second, "opening the masking lab with the long text", chromedp.Click(chromedp.CSS(`button[data-tab="masking"]`)))
	wait(t, ctx, 60*time.Second, "the masking lab's notice for the long text", settled+` && `+noError+` && !!document.querySelector('p.truncated')`)
}
