//go:build !js

package browsertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/hub/hubtest"
)

// TestHubLoadPage loads a model by its Hub id in the Models view from a local Hub (another
// origin, with the Hub's LFS redirect to a third): the page asks the Hub for nothing until
// asked, then fetches the folder, loads it, and fill-mask answers as the fixture does
// natively; a repository the Hub refuses gets an error naming the id and the file.
func TestHubLoadPage(t *testing.T) {
	_, _, url, ctx := tinyPage(t)
	fixture, err := filepath.Abs(filepath.Join(root, "core/bert/testdata/bert-tiny-random"))
	if err != nil {
		t.Fatal(err)
	}
	fx, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range []string{"config.json", "model.safetensors", "vocab.txt"} {
		if files[n], err = os.ReadFile(filepath.Join(fixture, n)); err != nil {
			t.Fatal(err)
		}
	}
	srv := hubtest.New(t, "")
	srv.Push("bertlab/tiny-hub", "main", files)

	do(t, ctx, 30*time.Second, "opening the models view", chromedp.Navigate(url+"#models"))
	wait(t, ctx, 60*time.Second, "the default model", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('[data-role="hub-id"]')`)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the page asked the Hub %d times before being asked to", n)
	}
	do(t, ctx, 10*time.Second, "setting the Hub's address",
		chromedp.Click(chromedp.CSS(`.hubsettings summary`)),
		chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector('[data-role="hub-endpoint"]'); e.value = `+jsString(srv.URL)+`; e.dispatchEvent(new Event('change', {bubbles: true})); })()`))
	typeText(t, ctx, `[data-role="hub-id"]`, "bertlab/tiny-hub")
	wait(t, ctx, 60*time.Second, "the Hub's model loaded", settled+` && document.querySelector('[data-role="load-ok"]') && !document.querySelector('[data-role="hub-status"]')`)
	if e := eval[string](t, ctx, `(document.querySelector('[data-role="hub-error"]') || {}).textContent || ''`); e != "" {
		t.Fatalf("hub error: %s", e)
	}
	if h := eval[string](t, ctx, `document.querySelector('.modelcard h2').textContent`); h != "tiny-hub (yours)" {
		t.Errorf("the Hub's model is named %q", h)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-key="hidden"]').textContent + ' ' + document.querySelector('[data-key="vocab"]').textContent`); got != "64 2000" {
		t.Errorf("the Hub's model's config: %q", got)
	}
	var fetched []string
	for _, r := range srv.Gets() {
		fetched = append(fetched, r.Server+":"+r.Path[strings.LastIndex(r.Path, "/")+1:])
	}
	// The repository info (api/models/bertlab/tiny-hub/revision/main), then the files as the
	// Hub serves them: small files from the Hub, LFS files from its storage after a redirect.
	for _, w := range []string{"hub:main", "hub:config.json", "hub:model.safetensors", "cdn:" + hubtest.SHA256(files["model.safetensors"])} {
		if !strings.Contains(" "+strings.Join(fetched, " ")+" ", " "+w+" ") {
			t.Errorf("the page's requests %v lack %s", fetched, w)
		}
	}
	screenshot(t, ctx, "models-hub-loaded")
	checkFixtureMaskView(t, ctx, fx, "the Hub's model")

	do(t, ctx, 10*time.Second, "the models view again", chromedp.Click(chromedp.CSS(`button[data-tab="models"]`)))
	wait(t, ctx, 10*time.Second, "the Hub form", `document.querySelector('[data-role="hub-id"]')`)
	do(t, ctx, 10*time.Second, "setting the Hub's address",
		chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector('[data-role="hub-endpoint"]'); e.value = `+jsString(srv.URL)+`; e.dispatchEvent(new Event('change', {bubbles: true})); })()`))
	typeText(t, ctx, `[data-role="hub-id"]`, "bertlab/no-such-model")
	wait(t, ctx, 30*time.Second, "the refusal", `document.querySelector('[data-role="hub-error"]')`)
	if e := eval[string](t, ctx, `document.querySelector('[data-role="hub-error"]').textContent`); !strings.Contains(e, "bertlab/no-such-model@main: config.json: HTTP 401") {
		t.Errorf("the refusal: %q", e)
	}
	if h := eval[string](t, ctx, `document.querySelector('.modelcard h2').textContent`); h != "tiny-hub (yours)" {
		t.Errorf("after a refused load the model is %q", h)
	}
	screenshot(t, ctx, "models-hub-refused")

	// A Hub whose storage sends the weights with a byte changed: crypto.subtle's sha256 of the
	// download is not the Hub's, and the load is refused.
	bad := hubtest.New(t, "")
	bad.Push("bertlab/tiny-hub", "main", files)
	bad.Corrupt(files["model.safetensors"])
	do(t, ctx, 10*time.Second, "setting the corrupting Hub's address",
		chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector('[data-role="hub-endpoint"]'); e.value = `+jsString(bad.URL)+`; e.dispatchEvent(new Event('change', {bubbles: true})); })()`))
	typeText(t, ctx, `[data-role="hub-id"]`, "bertlab/tiny-hub")
	wait(t, ctx, 30*time.Second, "the corrupt download refused", `document.querySelector('[data-role="hub-error"]') && document.querySelector('[data-role="hub-error"]').textContent.includes('sha256')`)
	if e := eval[string](t, ctx, `document.querySelector('[data-role="hub-error"]').textContent`); !strings.Contains(e, "model.safetensors: sha256 ") || !strings.Contains(e, hubtest.SHA256(files["model.safetensors"])) {
		t.Errorf("the corrupt download: %q", e)
	}
	screenshot(t, ctx, "models-hub-corrupt")
}
