//go:build !js

package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
)

// TestModelsView loads a BERT folder of the user's own through the file picker, then a broken
// one: the error names the file and the model loaded before keeps answering.
func TestModelsView(t *testing.T) {
	c, _, url, ctx := tinyPage(t)
	fixture, err := filepath.Abs(filepath.Join(root, "core/bert/testdata/bert-tiny-random"))
	if err != nil {
		t.Fatal(err)
	}
	fx, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}

	do(t, ctx, 30*time.Second, "opening the models view", chromedp.Navigate(url+"#models"))
	wait(t, ctx, 60*time.Second, "the default model's config",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('[data-key="layers"]')`)
	cfgOf := func() map[string]string {
		return eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('.cfg dd')].map(d => [d.dataset.key, d.textContent]))`)
	}
	if got := cfgOf(); got["layers"] != itoa(c.NumHiddenLayers) || got["hidden"] != itoa(c.HiddenSize) {
		t.Errorf("the default model's config: %v", got)
	}

	// The fixture folder saved in shards (F32: the same bits), picked file by file (the folder
	// picker takes the same path): the worker hands the engine the index and the shards. The
	// other tests pick one model.safetensors.
	total := 4 * fx.Model.NumParams() // bytes of F32 weights
	sharded := t.TempDir()
	if err := hf.SaveFolder(sharded, fx.Model, fx.Tokenizer, hf.SaveOptions{MaxShardSize: total/2 + 1}); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range []string{"config.json", hf.WeightsIndexFile, hf.ShardFile(1, 2), hf.ShardFile(2, 2), "vocab.txt"} {
		files = append(files, filepath.Join(sharded, f))
	}
	do(t, ctx, 10*time.Second, "picking the fixture's files",
		chromedp.SetUploadFiles(chromedp.CSS(`input[data-role="pick-files"]`), files))
	wait(t, ctx, 60*time.Second, "the fixture loaded", settled+` && document.querySelector('[data-role="load-ok"]')`)
	got := cfgOf()
	for k, v := range map[string]string{"layers": "2", "hidden": "64", "heads": "4", "vocab": "2000", "positions": "32", "act": "gelu", "intermediate": "128"} {
		if got[k] != v {
			t.Errorf("fixture config %s: page %q, want %q", k, got[k], v)
		}
	}
	if strings.ReplaceAll(got["parameters"], ",", "") != itoa(int(fx.Model.NumParams())) {
		t.Errorf("parameters %q, the fixture has %d", got["parameters"], fx.Model.NumParams())
	}
	if h := eval[string](t, ctx, `document.querySelector('header .model').textContent`); !strings.Contains(h, "2 layers × 4 heads · hidden 64") {
		t.Errorf("header %q should show the fixture's config", h)
	}
	screenshot(t, ctx, "models-view")

	// A corrupt safetensors file: the error names it, and the fixture still answers.
	bad := t.TempDir()
	for _, f := range []string{"config.json", "vocab.txt"} {
		b, err := os.ReadFile(filepath.Join(fixture, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bad, "model.safetensors"), []byte("this is not a safetensors file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, 10*time.Second, "picking a broken folder",
		chromedp.SetUploadFiles(chromedp.CSS(`input[data-role="pick-files"]`), []string{filepath.Join(bad, "config.json"), filepath.Join(bad, "model.safetensors"), filepath.Join(bad, "vocab.txt")}))
	wait(t, ctx, 60*time.Second, "the load error", settled+` && document.querySelector('[data-role="load-error"]')`)
	if e := eval[string](t, ctx, `document.querySelector('[data-role="load-error"]').textContent`); !strings.Contains(e, "model.safetensors") {
		t.Errorf("the error should name the file: %q", e)
	}
	screenshot(t, ctx, "models-load-error")
	checkFixtureMaskView(t, ctx, fx, "the fixture after a failed load")

	// Too large for the browser, dropped onto the page: refused from config.json alone.
	do(t, ctx, 10*time.Second, "the models view again", chromedp.Click(chromedp.CSS(`button[data-tab="models"]`)))
	wait(t, ctx, 10*time.Second, "the drop zone", `document.querySelector('[data-role="dropzone"]')`)
	do(t, ctx, 10*time.Second, "dropping a too large model", chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(['{"vocab_size":30522,"hidden_size":2048,"num_hidden_layers":24,"num_attention_heads":16,"intermediate_size":8192,"max_position_embeddings":512,"type_vocab_size":2}'], 'config.json'));
		dt.items.add(new File(['x'], 'model.safetensors'));
		dt.items.add(new File(['[PAD]'], 'vocab.txt'));
		const z = document.querySelector('[data-role="dropzone"]');
		z.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
		z.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`))
	wait(t, ctx, 30*time.Second, "the size refusal", settled+` && document.querySelector('[data-role="load-error"]') && document.querySelector('[data-role="load-error"]').textContent.includes('too large for the browser')`)
	screenshot(t, ctx, "models-too-large")
	if h := eval[string](t, ctx, `document.querySelector('header .model').textContent`); !strings.Contains(h, "2 layers × 4 heads · hidden 64") {
		t.Errorf("after the refusal the header should still show the fixture: %q", h)
	}

	// The folder picker: the whole fixture folder, its other files left out by name.
	do(t, ctx, 10*time.Second, "picking the fixture folder",
		chromedp.SetUploadFiles(chromedp.CSS(`input[data-role="pick-folder"]`), []string{fixture}))
	wait(t, ctx, 60*time.Second, "the folder loaded", settled+` && document.querySelector('[data-role="load-ok"]')`)
	if h := eval[string](t, ctx, `document.querySelector('.modelcard h2').textContent`); h != "bert-tiny-random (yours)" {
		t.Errorf("a picked folder's model is named %q, want the folder's name", h)
	}
}

// checkFixtureMaskView opens the mask view, whose route masks word 5 of "The capital of France
// is Paris.", and checks the page's predictions against the fixture model's natively.
func checkFixtureMaskView(t *testing.T, ctx context.Context, fx *hf.Folder, what string) {
	t.Helper()
	do(t, ctx, 10*time.Second, "the mask view", chromedp.Click(chromedp.CSS(`button[data-tab="mask"]`)))
	wait(t, ctx, 30*time.Second, "predictions", settled+` && document.querySelectorAll('.card[data-mask="5"]:not(.stale) .pred').length === 5`)
	want, err := pipeline.FillMask(fx.Model, fx.Tokenizer, "The capital of France is [MASK].", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("5")), want.Masks[0], what)
}
