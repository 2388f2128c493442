//go:build !js

package browsertest

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/lab"
)

// lossPixels counts the pixels of the loss canvas in the colour of its smoothed curve.
const lossPixels = `(() => {
  const c = document.querySelector('[data-role="loss-curve"] canvas');
  if (!c || !c.width) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] < 90 && d[i+1] < 120 && d[i+2] > 180) n++;
  return n;
})()`

// pauseProbe records, for a click on Pause while training runs, how long the page took to
// run the click's handler and to show the run paused.
const pauseProbe = `(() => {
  const p = window.bertlabTrainProbe = {};
  const view = document.querySelector('.trainview');
  document.addEventListener('click', (e) => {
    if (!e.target.closest('[data-role="pause"]')) return;
    p.handler = performance.now() - e.timeStamp;
    p.state = view.dataset.state;
    p.steps = +view.dataset.steps;
    new MutationObserver((_, obs) => {
      if (view.dataset.state === 'paused' && p.render === undefined) { p.render = performance.now() - e.timeStamp; obs.disconnect(); }
    }).observe(view, {attributes: true});
  }, true);
})()`

// typeTry puts text into the "try it" box as typing does (one input event).
func typeTry(text string) string {
	return `(() => { const el = document.querySelector('[data-role="try-text"]'); el.value = ` + jsString(text) + `; el.dispatchEvent(new Event('input', {bubbles: true})); })()`
}

// trainHoldMs is the least time a training step keeps the engine busy in the training lab
// tests (holdEngine): their runs of 40-60 steps then last 12 s or more on any CPU, however
// loaded.
const trainHoldMs = 300

type trainProbe struct {
	Handler float64 `json:"handler"`
	Render  float64 `json:"render"`
	State   string  `json:"state"`
	Steps   int     `json:"steps"`
}

// TestTrainingLab fine-tunes the tiny model on the sentiment sample in the page's worker:
// the loss curve is drawn from the reported losses, a click on Pause is answered within
// 100 ms while training runs and stops the steps, the run completes after Resume, and the
// "try it" prediction equals the one computed natively from the downloaded HF folder.
func TestTrainingLab(t *testing.T) {
	_, _, siteDir := tinySite(t, 3)
	url := serve(t, siteDir)
	ctx := browser(t)
	downloads := t.TempDir()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatal(err)
	}

	// Each step keeps the engine busy at least trainHoldMs, so the run is still training when
	// Pause is clicked, however fast the CPU is.
	do(t, ctx, 10*time.Second, "holding the engine busy", holdEngine(t, siteDir, map[string]int{"trainStep": trainHoldMs}))
	do(t, ctx, 30*time.Second, "opening the training lab",
		chromedp.Navigate(url+"#train?text=x&task=sentiment&epochs=3&lr=0.001&bs=16"))
	wait(t, ctx, 60*time.Second, "the model", `document.querySelector('.app[data-loaded]') && document.querySelector('[data-role="train"]') && !document.querySelector('[data-role="train"]').disabled`)
	if v := eval[string](t, ctx, `document.querySelector('[data-role="lr"]').value + ' ' + document.querySelector('[data-role="batch"]').value + ' ' + document.querySelector('[data-role="task"]').value`); v != "0.001 16 sentiment" {
		t.Errorf("the form shows %q, want the route's settings", v)
	}
	do(t, ctx, 10*time.Second, "pressing Train", chromedp.Click(chromedp.CSS(`[data-role="train"]`)))
	wait(t, ctx, 60*time.Second, "a few steps", `+document.querySelector('.trainview').dataset.steps >= 4`)
	if n := eval[int](t, ctx, lossPixels); n < 20 {
		t.Errorf("the loss curve has %d pixels of its colour: not drawn", n)
	}

	// Pause while training runs: the click is answered at once, and the steps stop.
	do(t, ctx, 10*time.Second, "installing the probe", chromedp.Evaluate[chromedp.Void](pauseProbe))
	do(t, ctx, 10*time.Second, "pressing Pause", chromedp.Click(chromedp.CSS(`[data-role="pause"]`)))
	wait(t, ctx, 10*time.Second, "the run paused", `document.querySelector('.trainview').dataset.state === 'paused' && window.bertlabTrainProbe.render !== undefined`)
	p := eval[trainProbe](t, ctx, `bertlabTrainProbe`)
	total := eval[int](t, ctx, `(() => { const m = document.querySelector('[data-role="progress"]').textContent.match(/of (\d+)/); return m ? +m[1] : 0; })()`)
	t.Logf("Pause clicked at step %d of %d: handler after %.1f ms, shown paused after %.1f ms", p.Steps, total, p.Handler, p.Render)
	if p.State != "running" || p.Steps >= total {
		t.Fatalf("the run was not training when Pause was clicked (state %q, step %d of %d): the test proves nothing", p.State, p.Steps, total)
	}
	if p.Handler > 100 {
		t.Errorf("the page answered the click after %.1f ms while training ran, want within 100 ms", p.Handler)
	}
	if p.Render > 1000 {
		t.Errorf("the run was shown paused %.0f ms after the click", p.Render)
	}
	// The step under way when Pause was clicked may still land; none after it.
	wait(t, ctx, 30*time.Second, "the last step asked for", `document.querySelector('.trainview').dataset.stepping === '0'`)
	n1 := eval[int](t, ctx, `+document.querySelector('.trainview').dataset.steps`)
	time.Sleep(1500 * time.Millisecond)
	if n2 := eval[int](t, ctx, `+document.querySelector('.trainview').dataset.steps`); n2 != n1 {
		t.Errorf("paused, the run went on from step %d to %d", n1, n2)
	}
	screenshot(t, ctx, "training-paused")

	// Resume to the end.
	do(t, ctx, 10*time.Second, "pressing Resume", chromedp.Click(chromedp.CSS(`[data-role="train"]`)))
	wait(t, ctx, 240*time.Second, "the end of the run", `document.querySelector('.trainview').dataset.state === 'done'`)
	losses := eval[[]float64](t, ctx, `[...document.querySelector('[data-role="loss-curve"] canvas').bertlabLosses]`)
	metrics := eval[[]float64](t, ctx, `[...(document.querySelector('[data-role="metric-curve"] canvas').bertlabMetrics || [])]`)
	if len(losses) != total || total == 0 {
		t.Fatalf("%d losses reported, want %d", len(losses), total)
	}
	for i, l := range losses {
		if math.IsNaN(l) || l <= 0 {
			t.Errorf("step %d: loss %v", i+1, l)
		}
	}
	mean := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	first, last := mean(losses[:5]), mean(losses[len(losses)-5:])
	t.Logf("loss: first 5 steps %.4f, last 5 %.4f; test accuracy by epoch %v", first, last, metrics)
	if !(last < first) {
		t.Errorf("the loss did not fall: first 5 steps %.4f, last 5 %.4f", first, last)
	}
	if len(metrics) != 3 {
		t.Errorf("%d test evaluations, want one per epoch (3)", len(metrics))
	}

	// Try it, then download the model and predict natively with the downloaded folder.
	text := "a gorgeous , witty , seductive movie ."
	do(t, ctx, 10*time.Second, "typing a sentence",
		chromedp.Evaluate[chromedp.Void](typeTry(text)),
		chromedp.Click(chromedp.CSS(`[data-role="try"]`)))
	wait(t, ctx, 30*time.Second, "the prediction", `document.querySelectorAll('[data-role="prediction"] .classrow').length === 2`)
	got := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('.classrow')].map(r => [r.dataset.label, r.dataset.p]))`)
	screenshot(t, ctx, "training-lab")

	do(t, ctx, 10*time.Second, "pressing Download", chromedp.Click(chromedp.CSS(`[data-role="download"]`)))
	dir := unzipDownload(t, filepath.Join(downloads, "bertlab-sentiment.zip"))
	tf, err := hf.LoadTaskFolder(filepath.Join(dir, "bertlab-sentiment"), bert.SequenceClassification, hf.TaskLoadOptions{RequireHead: true})
	if err != nil {
		t.Fatalf("the downloaded folder: %v", err)
	}
	if tf.Tokenizer == nil {
		t.Fatal("the downloaded folder has no vocab.txt")
	}
	want, err := lab.PredictTask(tf.Model, tf.Tokenizer, text, 128)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("page %v; native, from the downloaded folder: %v %v", got, want.Labels, want.Probs)
	for i, lb := range want.Labels {
		p, err := strconv.ParseFloat(got[lb], 64)
		if err != nil {
			t.Fatalf("the page shows no probability for %s: %v", lb, got)
		}
		if math.Abs(p-want.Probs[i]) > 1e-5 {
			t.Errorf("P(%s): page %.7f, native from the download %.7f", lb, p, want.Probs[i])
		}
	}

	// Part of speech, set through the form: the route follows, and "try it" tags every word.
	do(t, ctx, 10*time.Second, "choosing part of speech, 1 epoch, batch 64", chromedp.Evaluate[chromedp.Void](`(() => {
		const set = (role, v) => { const el = document.querySelector('[data-role="' + role + '"]'); el.value = v; el.dispatchEvent(new Event('change', {bubbles: true})); };
		set('task', 'pos'); set('epochs', '1'); set('batch', '64');
	})()`))
	wait(t, ctx, 10*time.Second, "the route", `location.hash.includes('task=pos&epochs=1&lr=0.001&bs=64')`)
	do(t, ctx, 10*time.Second, "pressing Train again", chromedp.Click(chromedp.CSS(`[data-role="train"]`)))
	wait(t, ctx, 240*time.Second, "the end of the tagging run", `document.querySelector('.trainview').dataset.state === 'done' && +document.querySelector('.trainview').dataset.evals === 1`)
	do(t, ctx, 10*time.Second, "trying a sentence",
		chromedp.Evaluate[chromedp.Void](typeTry("The cat sat on the mat.")),
		chromedp.Click(chromedp.CSS(`[data-role="try"]`)))
	wait(t, ctx, 30*time.Second, "the tags", `document.querySelectorAll('[data-role="prediction"][data-task="pos"] .tagword').length > 0`)
	words := eval[string](t, ctx, `[...document.querySelectorAll('.tagword .w')].map(w => w.textContent).join(' ')`)
	tags := eval[[]string](t, ctx, `[...document.querySelectorAll('.tagword')].map(w => w.dataset.tag)`)
	if words != "the cat sat on the mat ." || len(tags) != 7 || tags[0] == "" {
		t.Errorf("words %q, tags %v", words, tags)
	}
	screenshot(t, ctx, "training-lab-pos")
}
