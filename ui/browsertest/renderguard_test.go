//go:build !js

package browsertest

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestEventDuringRender: Chrome fires "blur" and "change" synchronously on a focused, edited
// textarea that a render removes. vugu's renderer holds its lock while it writes the DOM and its
// event handler waits for that lock, so without the page's guard (wasm/app/renderguard.go) the Go
// program stopped there with "all goroutines are asleep - deadlock!" (vugu/vugu#229; it stopped a
// CI run in TestLessons). Here the sentence box is edited, left focused, and removed by a route
// change; the page must go on answering.
func TestEventDuringRender(t *testing.T) {
	_, _, url, ctx := tinyPage(t)
	do(t, ctx, 30*time.Second, "opening the page", chromedp.Navigate(url+"#mask"))
	wait(t, ctx, 60*time.Second, "the first predictions", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card .pred').length > 0`)

	// Edit the box without committing: focus stays in it and its value differs from the last
	// "change", so leaving it fires "change".
	do(t, ctx, 10*time.Second, "editing the sentence",
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#text').focus()`),
		chromedp.SendKeys(chromedp.CSS("#text"), " And more."))
	if !eval[bool](t, ctx, `document.activeElement === document.querySelector('#text')`) {
		t.Fatal("the sentence box should have the focus")
	}
	renders := eval[int](t, ctx, `window.bertlabRender.count`)

	// The training view has no sentence box: this render removes the focused textarea.
	goHash(t, ctx, "#train")
	wait(t, ctx, 30*time.Second, "the training view", `!document.querySelector('#text') && window.bertlabRender.count > `+itoa(renders))
	if n := eval[int](t, ctx, `window.bertlabDeferred + window.bertlabDropped`); n == 0 {
		t.Fatal("no event arrived during a render: Chrome no longer fires blur or change when a render removes the focused box, so this test checks nothing; find another way to fire one")
	}
	t.Logf("events during the render: %d deferred, %d dropped (their element gone)",
		eval[int](t, ctx, `window.bertlabDeferred`), eval[int](t, ctx, `window.bertlabDropped`))

	// The page still answers: back to the sentence, and a word masked by a click predicts.
	goHash(t, ctx, "#mask")
	wait(t, ctx, 30*time.Second, "the sentence view again", settled+` && document.querySelectorAll('button.word').length > 2`)
	do(t, ctx, 10*time.Second, "clicking a word", chromedp.Click(chromedp.CSS(`button.word[data-word="2"]`)))
	wait(t, ctx, 30*time.Second, "predictions for the clicked word", settled+` && document.querySelectorAll('.card[data-mask="2"]:not(.stale) .pred').length > 0`)
}
