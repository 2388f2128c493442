//go:build !js

package browsertest

import (
	"compress/gzip"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/api"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
)

// encodings records the Content-Encoding of every .wasm answer.
type encodings struct {
	mu  sync.Mutex
	got map[string][]string
}

// recordingWriter notes the Content-Encoding of its answer when the header is sent.
type recordingWriter struct {
	http.ResponseWriter
	path  string
	e     *encodings
	wrote bool
}

func (w *recordingWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.e.mu.Lock()
		w.e.got[w.path] = append(w.e.got[w.path], w.Header().Get("Content-Encoding"))
		w.e.mu.Unlock()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// TestServedByBertlab opens the page as `make run` serves it: through the API's handler
// (`bertlab serve`), with the gzip twins that `make wasm` writes. Chromium must get app.wasm
// gzipped, compile it as it downloads, and show the native model's predictions.
func TestServedByBertlab(t *testing.T) {
	_, model, dir := tinySite(t, 1)
	for _, name := range []string{"app.wasm", "app-scalar.wasm"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, name+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		if _, err := zw.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	e, err := engine.New("tiny-random", model.Model, model.Tok)
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(e, api.Options{Static: os.DirFS(dir)})
	if err != nil {
		t.Fatal(err)
	}
	enc := &encodings{got: map[string][]string{}}
	url := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".wasm") {
			w = &recordingWriter{ResponseWriter: w, path: r.URL.Path, e: enc}
		}
		h.ServeHTTP(w, r)
	}))
	ctx := browser(t)
	text := "The man went to the store to buy some milk."
	do(t, ctx, 30*time.Second, "opening the page served by the API's handler",
		chromedp.Navigate(url+"#mask?text="+strings.ReplaceAll(text, " ", "%20")+"&masks=5"))
	wait(t, ctx, 60*time.Second, "predictions for the masked word",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card[data-mask="5"]:not(.stale) .pred').length === 5`)
	enc.mu.Lock()
	got := enc.got["/app.wasm"]
	enc.mu.Unlock()
	if len(got) == 0 || got[0] != "gzip" {
		t.Errorf("app.wasm was answered with Content-Encoding %q, want gzip", got)
	}
	if how := eval[string](t, ctx, `window.bertlabCompile`); how != "streaming" {
		t.Errorf("the page compiled app.wasm %q, want streaming", how)
	}
	want, err := pipeline.FillMask(model.Model, model.Tok, "The man went to the [MASK] to buy some milk.", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("5")), want.Masks[0], "served by the API's handler")
}
