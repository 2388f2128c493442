//go:build !js

package browsertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
)

const (
	root  = "../.."
	vocab = root + "/core/tokenizer/testdata/bert-base-uncased"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// simdGoEnv reads the environment that the Makefile's SIMD_GO sets for the go command
// ("GOTOOLCHAIN=... GOEXPERIMENT=..."), so that the tests build app.wasm as `make wasm` does.
func simdGoEnv() ([]string, error) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^SIMD_GO\s*=\s*(.*)\$\(GO\)\s*$`).FindSubmatch(mk)
	if m == nil {
		return nil, fmt.Errorf("Makefile: no line SIMD_GO = ... $(GO)")
	}
	return strings.Fields(string(m[1])), nil
}

// pageGCFlags is the Makefile's WASM_GCFLAGS: the page's ui package is built without inlining
// (a smaller module), and the tests run that build.
const pageGCFlags = "-gcflags=github.com/bertlab/bertlab/ui=-l"

// builtWasm builds the page's module once for all tests of the package, in its two builds as
// `make wasm` makes them: app.wasm with the Makefile's SIMD_GO (Go 1.27's simd package; what
// Chromium runs) and app-scalar.wasm with the Go running the tests (browsers without SIMD).
func builtWasm(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
		if err != nil {
			buildErr = err
			return
		}
		if !strings.Contains(string(mk), "WASM_GCFLAGS := "+pageGCFlags+"\n") {
			buildErr = fmt.Errorf("the Makefile's WASM_GCFLAGS is not %s: build the tested page as make wasm does", pageGCFlags)
			return
		}
		var simdEnv []string
		if simdEnv, buildErr = simdGoEnv(); buildErr != nil {
			return
		}
		buildDir, buildErr = os.MkdirTemp("", "bertlab-browsertest-")
		if buildErr != nil {
			return
		}
		for _, b := range []struct {
			out string
			env []string
		}{
			{"app.wasm", simdEnv},
			{"app-scalar.wasm", nil},
		} {
			cmd := exec.Command("go", "build", pageGCFlags, "-o", filepath.Join(buildDir, b.out), "./wasm/app")
			cmd.Dir = root
			cmd.Env = append(append(os.Environ(), "GOOS=js", "GOARCH=wasm"), b.env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("building %s from ./wasm/app: %v\n%s", b.out, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// site lays out the page as `make wasm` and the model folders leave assets/: the page's files,
// the page's wasm module in its two builds, wasm_exec.js and models/NAME/ with models/index.json.
func site(t *testing.T, models map[string]*folder) string {
	t.Helper()
	wasm := builtWasm(t)
	dir := t.TempDir()
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"index.html", "style.css", "worker.js"} {
		copyFile(filepath.Join(root, "assets", f), filepath.Join(dir, f))
	}
	copyFile(filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"), filepath.Join(dir, "wasm_exec.js"))
	for _, f := range []string{"app.wasm", "app-scalar.wasm"} {
		copyFile(filepath.Join(wasm, f), filepath.Join(dir, f))
	}
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, f := range models {
		out := filepath.Join(dir, "models", name)
		if err := hf.SaveFolder(out, f.Model, f.Tok, hf.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		f.Dir = out
	}
	cmd := exec.Command("go", "run", "./cmd/modelindex", filepath.Join(dir, "models"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("modelindex: %v\n%s", err, out)
	}
	return dir
}

// folder is a model the test writes into the site and computes with natively.
type folder struct {
	Model *bert.Model
	Tok   *tokenizer.Tokenizer
	Dir   string
}

// randomModel is a randomly initialised model with the real bert-base-uncased vocabulary.
func randomModel(t *testing.T, c bert.Config, seed uint64) *folder {
	t.Helper()
	tok, err := tokenizer.LoadDir(vocab)
	if err != nil {
		t.Fatal(err)
	}
	c.VocabSize = tok.Vocab().Len()
	m, err := bert.NewRandom(c, bert.AllHeads, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &folder{Model: m, Tok: tok}
}

// tinySite checks for the browser, then builds a site whose only model, tiny-random, is a
// random Tiny one from seed; it returns the model's config, the model and the site's folder.
func tinySite(t *testing.T, seed uint64) (bert.Config, *folder, string) {
	t.Helper()
	chrome(t) // before the builds: without a browser, say so at once
	c, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	model := randomModel(t, c, seed)
	return c, model, site(t, map[string]*folder{"tiny-random": model})
}

// tinyPage serves tinySite's site (seed 1) with a plain file server and opens a fresh browser:
// the set-up most page tests share.
func tinyPage(t *testing.T) (bert.Config, *folder, string, context.Context) {
	t.Helper()
	c, model, dir := tinySite(t, 1)
	return c, model, serve(t, dir), browser(t)
}

// serve serves dir on 127.0.0.1 with a plain file server, as any static server would.
func serve(t *testing.T, dir string) string {
	t.Helper()
	return serveHandler(t, http.FileServer(http.Dir(dir)))
}

// serveHandler serves h on 127.0.0.1 and returns its URL.
func serveHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// chrome finds the browser: BERTLAB_CHROME, else Debian's chromium.
func chrome(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BERTLAB_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the browser tests need Chromium: apt-get install -y chromium chromium-driver (or set BERTLAB_CHROME to a Chrome binary)")
	return ""
}

// browser starts a fresh headless Chromium and returns a context for its tab. Console
// messages are logged; an uncaught exception in the page fails the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 900),
	}
	var mu sync.Mutex
	var exceptions []string
	done := false
	listener := chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		switch e := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					parts = append(parts, strings.Trim(string(a.Value), `"`))
				} else {
					parts = append(parts, a.Description)
				}
			}
			t.Logf("console.%s: %s", e.Type, strings.Join(parts, " "))
		case *cdpruntime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			exceptions = append(exceptions, msg)
		}
	})
	// Chromium now and then exits at start-up on these machines ("chrome failed to start",
	// 1 test in about 40 of a CI run, the others fine): a test gets three tries at a browser.
	var ctx context.Context
	var cancel, cancelAlloc context.CancelFunc
	for try := 1; ; try++ {
		var actx context.Context
		// A fresh profile each try: a browser that died may have left its lock behind.
		actx, cancelAlloc = chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(t.TempDir()))...)
		ctx, cancel = chromedp.NewContext(actx, listener)
		err := chromedp.Do(ctx) // starts the browser
		if err == nil {
			break
		}
		cancel()
		cancelAlloc()
		if try == 3 {
			t.Fatalf("starting %s (3 tries): %v", chrome(t), err)
		}
		t.Logf("starting %s, try %d: %v", chrome(t), try, err)
		time.Sleep(time.Second)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		mu.Lock()
		defer mu.Unlock()
		done = true
		for _, e := range exceptions {
			t.Errorf("uncaught exception in the page: %s", e)
		}
	})
	return ctx
}

// do runs steps with a time limit.
func do(t *testing.T, ctx context.Context, limit time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// wait polls a JavaScript predicate until it holds; the message says what was awaited.
func wait(t *testing.T, ctx context.Context, limit time.Duration, what, pred string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, limit+5*time.Second)
	defer cancel()
	deadline := time.Now().Add(limit)
	_, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingTimeout(limit)))
	// Right after a navigation the poll can start in the old document's context: try again.
	for err != nil && strings.Contains(err.Error(), "Cannot find context") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		_, err = chromedp.Run(c, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingTimeout(time.Until(deadline))))
	}
	if err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('.error') || document.querySelector('#boot') || {textContent: ''}).textContent + ' | ' + location.hash`))
		t.Fatalf("waiting for %s: %v (page: %s)", what, err, state)
	}
}

// screenshot saves a PNG of the page under the test's temp dir and, with BERTLAB_SCREENSHOTS
// set, in that folder too.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("BERTLAB_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
}
