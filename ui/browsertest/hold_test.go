//go:build !js

package browsertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// holdScript makes the engine slow on purpose, wherever it runs: once the engine's global
// `bertlab` object appears in scope (the worker's global scope, or the page's window), each
// call of a function named in holds returns no sooner than that many milliseconds after it
// began; the engine's thread spins until then, after computing the real answer. Tests that need
// the engine busy when they click (the page must answer while the engine computes) make that
// condition with it instead of hoping the CPU is slow enough. window.bertlabHeld counts the
// held calls by function.
func holdScript(holds map[string]int) string {
	b, err := json.Marshal(holds)
	if err != nil {
		panic(err) // a map of string to int always marshals
	}
	return `(function (scope, holds) {
  let api;
  const held = scope.bertlabHeld = {};
  Object.defineProperty(scope, 'bertlab', {configurable: true, get: () => api, set: (v) => {
    for (const [fn, ms] of Object.entries(holds)) {
      const real = v[fn];
      if (typeof real !== 'function') continue;
      v[fn] = (...args) => {
        const until = performance.now() + ms;
        const result = real(...args);
        while (performance.now() < until) {}
        held[fn] = (held[fn] || 0) + 1;
        return result;
      };
    }
    api = v;
  }});
})(self, ` + string(b) + `);
`
}

// holdEngine puts holdScript(holds) at the top of the site's worker.js, so the engine in the
// page's Web Worker is held; with page set it also runs in the page before the page's own
// scripts, so that an engine moved to the page's thread would be held the same way (the
// responsiveness tests must then fail).
func holdEngine(t *testing.T, siteDir string, holds map[string]int) chromedp.Action[chromedp.Void] {
	t.Helper()
	path := filepath.Join(siteDir, "worker.js")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	script := holdScript(holds)
	if err := os.WriteFile(path, append([]byte(script), src...), 0o644); err != nil {
		t.Fatal(err)
	}
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
		return err
	})
}
