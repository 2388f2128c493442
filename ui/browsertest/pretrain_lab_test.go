//go:build !js

package browsertest

import (
	"archive/zip"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/pipeline"
)

// fillJS reads the "try it" fill-mask answer the page shows: per mask, its predictions.
const fillJS = `[...document.querySelectorAll('[data-role="fill"]')].map(m => [...m.querySelectorAll('.fillrow')].map(r => ({token: r.dataset.token, id: +r.dataset.id, score: +r.dataset.p})))`

// TestPretrainLab pre-trains a tiny MLM from scratch in the page's worker (40 steps, a
// vocabulary trained on the sample corpus): the loss curve grows step by step and falls,
// the held-out accuracy is drawn at every evaluation, the page answers clicks meanwhile,
// "try it" fills the mask, and the downloaded BertForMaskedLM folder, loaded natively with
// hf.LoadFolder, gives the page's predictions.
func TestPretrainLab(t *testing.T) {
	_, _, siteDir := tinySite(t, 1)
	url, ctx := serve(t, siteDir), browser(t)
	// Each step keeps the engine busy at least trainHoldMs, so the run is still training when
	// the test looks at it early on and clicks, however fast the CPU is.
	do(t, ctx, 10*time.Second, "holding the engine busy", holdEngine(t, siteDir, map[string]int{"trainStep": trainHoldMs}))
	downloads := t.TempDir()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatal(err)
	}
	const steps = 40
	do(t, ctx, 30*time.Second, "opening the training lab",
		chromedp.Navigate(url+"#train?text=x&task=mlm&lr=0.005&bs=16&steps=40&hidden=64"))
	wait(t, ctx, 60*time.Second, "the model", `document.querySelector('.app[data-loaded]') && document.querySelector('[data-role="train"]') && !document.querySelector('[data-role="train"]').disabled`)
	if v := eval[string](t, ctx, `['task', 'steps', 'lr', 'batch', 'mlm-size', 'mlm-vocab', 'mlm-corpus'].map(r => document.querySelector('[data-role="' + r + '"]').value).join(' ')`); v != "mlm 40 0.005 16 64 corpus sample" {
		t.Errorf("the form shows %q, want the route's settings", v)
	}
	if eval[bool](t, ctx, `!!document.querySelector('[data-role="epochs"]')`) {
		t.Error("pre-training shows the epochs field")
	}
	screenshot(t, ctx, "pretrain-lab-form")

	do(t, ctx, 10*time.Second, "pressing Train", chromedp.Click(chromedp.CSS(`[data-role="train"]`)))
	wait(t, ctx, 120*time.Second, "a few steps", `+document.querySelector('.trainview').dataset.steps >= 4`)
	early := eval[int](t, ctx, `[...document.querySelector('[data-role="loss-curve"] canvas').bertlabLosses].length`)
	if n := eval[int](t, ctx, lossPixels); n < 20 {
		t.Errorf("the loss curve has %d pixels of its colour: not drawn", n)
	}
	info := eval[string](t, ctx, `document.querySelector('[data-role="mlm-info"]').textContent`)
	if !strings.Contains(info, "2 layers, hidden 64, 2 heads") || !strings.Contains(info, "held out") {
		t.Errorf("the run's description: %q", info)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-role="mlm-vocabulary"] .vtok').length`); n < 500 || n > lab.MLMDefaultVocab {
		t.Errorf("the vocabulary shows %d tokens", n)
	}
	// A click while training runs is answered (the worker trains, the page draws): the
	// vocabulary opens, and the run was still training when it did (the state is recorded at the
	// toggle, so a slow machine cannot turn the check into a race with the run's end).
	do(t, ctx, 10*time.Second, "watching the vocabulary", chromedp.Evaluate[chromedp.Void](`document.addEventListener('toggle', (e) => {
		if (e.target.matches('[data-role="mlm-vocabulary"]') && !window.bertlabVocabToggle) window.bertlabVocabToggle = {open: e.target.open, state: document.querySelector('.trainview').dataset.state};
	}, true)`))
	do(t, ctx, 10*time.Second, "opening the vocabulary", chromedp.Click(chromedp.CSS(`[data-role="mlm-vocabulary"] summary`)))
	wait(t, ctx, 60*time.Second, "the vocabulary open", `window.bertlabVocabToggle && document.querySelector('[data-role="mlm-vocabulary"]').open`)
	if tg := eval[map[string]any](t, ctx, `window.bertlabVocabToggle`); tg["open"] != true || tg["state"] != "running" {
		t.Errorf("the vocabulary toggled %v while the run was %v, want open while running", tg["open"], tg["state"])
	}
	screenshot(t, ctx, "pretrain-lab-running")

	wait(t, ctx, 300*time.Second, "the end of the run", `document.querySelector('.trainview').dataset.state === 'done'`)
	losses := eval[[]float64](t, ctx, `[...document.querySelector('[data-role="loss-curve"] canvas').bertlabLosses]`)
	metrics := eval[[]float64](t, ctx, `[...(document.querySelector('[data-role="metric-curve"] canvas').bertlabMetrics || [])]`)
	if len(losses) != steps || early >= steps {
		t.Fatalf("%d losses at the end (%d early on), want the curve to grow to %d", len(losses), early, steps)
	}
	first, last := mean(losses[:5]), mean(losses[len(losses)-5:])
	vocab := eval[int](t, ctx, `document.querySelectorAll('[data-role="mlm-vocabulary"] .vtok').length`)
	t.Logf("loss: first 5 steps %.4f, last 5 %.4f (ln V %.4f); held-out accuracy %v", first, last, math.Log(float64(vocab)), metrics)
	if !(last < first) || !(last < math.Log(float64(vocab))) {
		t.Errorf("the loss did not fall: first 5 steps %.4f, last 5 %.4f", first, last)
	}
	if len(metrics) != 11 {
		t.Errorf("%d evaluations drawn, want 11 (before the first step, then every 4 steps)", len(metrics))
	}
	if !eval[bool](t, ctx, `document.querySelector('[data-role="mlm-vocabulary"]').open`) {
		t.Error("the vocabulary list, opened during the run, closed again as the page redrew")
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.evals tr[data-role="eval"]').length`); n != 11 {
		t.Errorf("the table has %d evaluations", n)
	}

	// Try it: the sentence the page offers, with its [MASK].
	text := eval[string](t, ctx, `document.querySelector('[data-role="try-text"]').value`)
	if !strings.Contains(text, "[MASK]") {
		t.Fatalf("the try-it box offers %q", text)
	}
	do(t, ctx, 10*time.Second, "pressing Predict", chromedp.Click(chromedp.CSS(`[data-role="try"]`)))
	wait(t, ctx, 30*time.Second, "the fill-mask answer", `document.querySelectorAll('[data-role="fill"] .fillrow').length === 5`)
	got := eval[[][]pagePred](t, ctx, fillJS)
	screenshot(t, ctx, "pretrain-lab")

	do(t, ctx, 10*time.Second, "pressing Download", chromedp.Click(chromedp.CSS(`[data-role="download"]`)))
	dir := unzipDownload(t, filepath.Join(downloads, "bertlab-mlm.zip"))
	f, err := hf.LoadFolder(filepath.Join(dir, "bertlab-mlm"))
	if err != nil {
		t.Fatalf("the downloaded folder: %v", err)
	}
	if f.Tokenizer == nil || f.Tokenizer.Vocab().Len() != vocab || f.Model.Pooler != nil || f.Model.MLM == nil {
		t.Fatalf("the downloaded folder: tokenizer %v, heads %v", f.Tokenizer, f.Model.HeadNames())
	}
	want, err := pipeline.FillMask(f.Model, f.Tokenizer, text, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.Masks) {
		t.Fatalf("the page fills %d masks, natively %d", len(got), len(want.Masks))
	}
	t.Logf("page %v; native from the download %v", got[0], want.Masks[0].Predictions)
	checkPreds(t, got[0], want.Masks[0], "fill-mask with the downloaded pre-trained model")
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// unzipDownload waits (up to 30 s) for the browser's download at zipPath and unpacks it into a
// temporary folder, which it returns. The training lab tests share it.
func unzipDownload(t *testing.T, zipPath string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var zr *zip.ReadCloser
	var err error
	for {
		if zr, err = zip.OpenReader(zipPath); err == nil {
			break
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(filepath.Dir(zipPath))
			t.Fatalf("no download at %s (%v; the folder holds %v)", zipPath, err, entries)
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer zr.Close()
	dir := t.TempDir()
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nestedFolder writes a model folder as users have them: the model's files with others
// beside them, and a subfolder with a broken checkpoint that must not be taken.
func nestedFolder(t *testing.T, fixture, name string) string {
	t.Helper()
	top := filepath.Join(t.TempDir(), name)
	for _, d := range []string{"checkpoint-9", ".git"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"config.json", "model.safetensors", "vocab.txt"} {
		b, err := os.ReadFile(filepath.Join(fixture, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// The subfolder's copy is broken: picked, it would fail to load.
		if err := os.WriteFile(filepath.Join(top, "checkpoint-9", f), []byte("broken"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"README.md": "# my bert\n", "training_args.bin": "x", ".git/HEAD": "ref: refs/heads/main\n"} {
		if err := os.WriteFile(filepath.Join(top, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return top
}

// TestModelsFolderDrop drops a whole model folder onto the models view (a real drag of the
// directory, through the DevTools protocol), then picks one with the folder picker: both
// load the model's files from the top folder, leaving the rest alone. A folder without
// weights is refused with the reason, and the model loaded before keeps answering.
func TestModelsFolderDrop(t *testing.T) {
	_, _, siteDir := tinySite(t, 1)
	url, ctx := serve(t, siteDir), browser(t)
	// Each step keeps the engine busy at least trainHoldMs, so the run is still training when
	// the test looks at it early on and clicks, however fast the CPU is.
	do(t, ctx, 10*time.Second, "holding the engine busy", holdEngine(t, siteDir, map[string]int{"trainStep": trainHoldMs}))
	fixture, err := filepath.Abs(filepath.Join(root, "core/bert/testdata/bert-tiny-random"))
	if err != nil {
		t.Fatal(err)
	}
	fx, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	top := nestedFolder(t, fixture, "my-bert")

	do(t, ctx, 30*time.Second, "opening the models view", chromedp.Navigate(url+"#models"))
	wait(t, ctx, 60*time.Second, "the default model", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('[data-key="layers"]')`)
	if l := eval[string](t, ctx, `[...document.querySelectorAll('.picker')].map(p => p.textContent.trim()).join(' | ')`); l != "Choose a folder… | Choose files…" {
		t.Errorf("pickers %q", l)
	}

	drop := func(paths ...string) {
		t.Helper()
		// The drop goes to a point of the viewport: the zone is scrolled into it first (the
		// family card above it can push it below the fold).
		box := eval[[]float64](t, ctx, `(() => { const z = document.querySelector('[data-role="dropzone"]'); z.scrollIntoView({block: 'center'}); const r = z.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
		data := &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1}
		for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: box[0], Y: box[1], Data: data}); err != nil {
				t.Fatalf("dispatching %s: %v", typ, err)
			}
		}
	}

	// A folder without weights: refused, naming what is missing.
	empty := filepath.Join(t.TempDir(), "no-weights")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.json", "vocab.txt"} {
		b, _ := os.ReadFile(filepath.Join(fixture, f))
		os.WriteFile(filepath.Join(empty, f), b, 0o644)
	}
	os.WriteFile(filepath.Join(empty, "pytorch_model.bin"), []byte("x"), 0o644)
	drop(empty)
	wait(t, ctx, 30*time.Second, "the refusal", settled+` && document.querySelector('[data-role="load-error"]')`)
	if e := eval[string](t, ctx, `document.querySelector('[data-role="load-error"]').textContent`); !strings.Contains(e, "missing model.safetensors in no-weights/") || !strings.Contains(e, "pytorch_model.bin") {
		t.Errorf("the refusal: %q", e)
	}
	screenshot(t, ctx, "models-folder-refused")

	// The nested folder, dropped whole.
	drop(top)
	wait(t, ctx, 60*time.Second, "the dropped folder loaded", settled+` && document.querySelector('[data-role="load-ok"]')`)
	if h := eval[string](t, ctx, `document.querySelector('.modelcard h2').textContent`); h != "my-bert (yours)" {
		t.Errorf("the dropped folder's model is named %q", h)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-key="hidden"]').textContent + ' ' + document.querySelector('[data-key="vocab"]').textContent`); got != "64 2000" {
		t.Errorf("the dropped model's config: %q", got)
	}
	screenshot(t, ctx, "models-folder-drop")
	checkFixtureMaskView(t, ctx, fx, "the dropped folder's model")

	// The folder picker takes the same nested folder.
	do(t, ctx, 10*time.Second, "the models view again", chromedp.Click(chromedp.CSS(`button[data-tab="models"]`)))
	wait(t, ctx, 10*time.Second, "the folder picker", `document.querySelector('input[data-role="pick-folder"]')`)
	picked := nestedFolder(t, fixture, "picked-bert")
	do(t, ctx, 10*time.Second, "picking the nested folder", chromedp.SetUploadFiles(chromedp.CSS(`input[data-role="pick-folder"]`), []string{picked}))
	wait(t, ctx, 60*time.Second, "the picked folder loaded", settled+` && document.querySelector('[data-role="load-ok"]') && document.querySelector('.modelcard h2').textContent === 'picked-bert (yours)'`)
	screenshot(t, ctx, "models-folder-picked")
}
