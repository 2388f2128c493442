// Package api is bertlab's HTTP handler: the static page and a small JSON API on the engine.
// It is portable (no syscall/js), so that the same handler runs in `bertlab serve` and, compiled
// to WebAssembly, on Cloudflare Workers (wasm/worker); `go test` covers it natively.
//
// Routes (request and answer bodies are JSON; every error is {"error": "..."}):
//
//	GET  /healthz          -> {"ok": true, "model": NAME}
//	POST /api/fill-mask    {"text", "pair"?, "top_k"?}   -> pipeline.FillMaskResult + "truncated"
//	POST /api/tokenize     {"text", "pair"?}             -> input_ids, tokens, token_type_ids, offsets, truncated
//	POST /api/attention    {"text", "pair"?, "layer"?}   -> pipeline.AttentionResult
//	POST /api/embed        {"texts", "pooling"?}         -> pipeline.EmbedResult
//	POST /api/explain/{attributions,lens,ablation}       -> explain.Report (see explain.go)
//	GET  /...              the static files of Options.Static (index.html for a folder)
//
// Every request is bounded: the body (413 beyond Options.MaxBodyBytes), the text (cut to the
// model's max_position_embeddings tokens, reported by "truncated"), top_k (1..100), the number of
// texts, the number of computations running at once (the others wait for a slot) and the time a
// request may wait and compute (503 beyond Options.Timeout). Bad requests get 400, unknown
// routes 404, wrong methods 405, fill-mask on a model without the MLM head 501; a panic is
// recovered, logged and answered with a 500 that shows no internals.
package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/bertlab/bertlab/core/engine"
)

// Options bound the handler's work; zero values take the defaults below.
type Options struct {
	// Static holds the page and its assets, served for GET requests outside /api/ (nil: none).
	Static fs.FS
	// MaxBodyBytes bounds a request body (default 64 KiB).
	MaxBodyBytes int64
	// MaxTexts bounds the texts of one /api/embed request (default 32).
	MaxTexts int
	// MaxConcurrent is the number of model computations that may run at once (default 2); the
	// others wait for a slot. It bounds memory: an attention trace of BERT-Large on 512 tokens
	// is about a gigabyte.
	MaxConcurrent int
	// Timeout bounds the time a request waits for a slot and computes (default 30 s). A
	// computation that outlives it keeps its slot until it ends, so that memory stays bounded.
	Timeout time.Duration
	// Log receives recovered panics and server-side errors (default log.Default()).
	Log *log.Logger
}

// Defaults of Options.
const (
	DefaultMaxBodyBytes  = 64 << 10
	DefaultMaxTexts      = 32
	DefaultMaxConcurrent = 2
	DefaultTimeout       = 30 * time.Second
)

// Handler serves the API and the static files. It is safe for concurrent use.
type Handler struct {
	e      *engine.Engine
	opt    Options
	sem    chan struct{}
	files  http.Handler
	routes map[string]route
}

// New returns the handler answering with e, which must hold a model (engine.Open, engine.New);
// fill-mask also needs the MLM head. /healthz reports e.Name(). The handler only asks e's
// inference questions, which may run at once.
func New(e *engine.Engine, opt Options) (*Handler, error) {
	if e == nil || e.Model() == nil {
		return nil, errors.New("api: the engine holds no model")
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opt.MaxTexts <= 0 {
		opt.MaxTexts = DefaultMaxTexts
	}
	if opt.MaxConcurrent <= 0 {
		opt.MaxConcurrent = DefaultMaxConcurrent
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Log == nil {
		opt.Log = log.Default()
	}
	h := &Handler{e: e, opt: opt, sem: make(chan struct{}, opt.MaxConcurrent)}
	if opt.Static != nil {
		h.files = http.FileServerFS(opt.Static)
	}
	h.routes = map[string]route{
		"/api/fill-mask": h.fillMask,
		"/api/tokenize":  h.tokenize,
		"/api/attention": h.attention,
		"/api/embed":     h.embed,
	}
	h.addExplainRoutes()
	h.addFamilyRoutes()
	return h, nil
}

// Health is the answer of /healthz.
type Health struct {
	OK    bool   `json:"ok"`
	Model string `json:"model"`
}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.opt.Log.Printf("api: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, p, debug.Stack())
			writeError(w, http.StatusInternalServerError, "internal error")
		}
	}()
	path := r.URL.Path
	switch {
	case path == "/healthz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		writeJSON(w, http.StatusOK, Health{OK: true, Model: h.e.Name()})
	case path == "/api" || strings.HasPrefix(path, "/api/"):
		rt, ok := h.routes[path]
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s; the API has POST %s", path, strings.Join(apiRoutes, ", ")))
			return
		}
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST")
			return
		}
		h.serveAPI(w, r, rt)
	default:
		h.serveStatic(w, r)
	}
}

// apiRoutes lists the routes of the API for the message of a 404.
var apiRoutes = []string{"/api/fill-mask", "/api/tokenize", "/api/attention", "/api/embed"}

// serveAPI reads and checks the request, then computes the answer in a computation slot within
// the request's deadline. The body is read and checked before a slot is taken, so that a slow
// client or a bad request holds no slot.
func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request, rt route) {
	body, err := readBody(w, r, h.opt.MaxBodyBytes)
	if err != nil {
		writeErr(w, err)
		return
	}
	compute, err := rt(body)
	if err != nil {
		writeErr(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.opt.Timeout)
	defer cancel()
	v, err := h.run(ctx, compute)
	if err != nil {
		// A 503 is back-pressure, not a fault: only a 500 (a recovered panic) is logged.
		var he *httpError
		if errors.As(err, &he) && he.code == http.StatusInternalServerError {
			h.opt.Log.Printf("api: %s: %v", r.URL.Path, err)
		}
		writeErr(w, err)
		return
	}
	if err := writeJSON(w, http.StatusOK, v); err != nil {
		h.opt.Log.Printf("api: %s: encoding the answer: %v", r.URL.Path, err)
	}
}

// run calls f once a computation slot is free, and returns its answer, or a 503 error when ctx
// ends first. f runs in its own goroutine, which keeps the slot until f returns even when the
// caller has stopped waiting: the model's forward pass cannot be interrupted, and the slot is
// what bounds the memory of running computations. A panic in f becomes a 500 error.
//
// Under js/wasm (no preemption) a running f is not interrupted by the timer; the Worker's own CPU
// limit bounds it there.
func (h *Handler) run(ctx context.Context, f func() (any, error)) (any, error) {
	if ctx.Err() != nil {
		return nil, errBusy(ctx)
	}
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, errBusy(ctx)
	}
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		func() {
			defer func() {
				if p := recover(); p != nil {
					res = result{err: &httpError{http.StatusInternalServerError, fmt.Sprintf("internal error: %v\n%s", p, debug.Stack())}}
				}
			}()
			res.v, res.err = f()
		}()
		// The slot is free before the answer is handed over, so that a client that has its
		// answer never sees its computation still counted as running.
		<-h.sem
		done <- res
	}()
	select {
	case res := <-done:
		return res.v, res.err
	case <-ctx.Done():
		return nil, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the request took longer than %v; try a shorter text", h.opt.Timeout)}
	}
}

func errBusy(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &httpError{http.StatusServiceUnavailable, "request canceled"}
	}
	return &httpError{http.StatusServiceUnavailable, "server busy: every computation slot stayed taken; retry later"}
}
