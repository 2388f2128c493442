//go:build js && wasm

// Command worker is bertlab's JSON API (package api) on Cloudflare Workers, through
// github.com/syumai/workers and plain Go (GOOS=js GOARCH=wasm). The page is served by Workers'
// static assets (wrangler.toml, [assets]); requests that match no asset come here.
//
// The model is the one folder under model/, embedded in the binary. Workers may start a fresh
// instance for every request (the generated worker.mjs runs a new Go program per request), so the
// model is loaded on every request: keep it small (see README.md for the measured cost).
package main

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/syumai/workers"

	"github.com/bertlab/bertlab/api"
	"github.com/bertlab/bertlab/core/engine"
)

//go:embed model
var modelFiles embed.FS

func main() {
	h, err := handler()
	if err != nil {
		// Answer every request with the reason rather than fail without a word.
		msg := fmt.Sprintf("{\"error\":%q}\n", "the worker could not start: "+err.Error())
		workers.Serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, msg)
		}))
		return
	}
	workers.Serve(h)
}

func handler() (http.Handler, error) {
	entries, err := fs.ReadDir(modelFiles, "model")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) != 1 {
		return nil, fmt.Errorf("want exactly one model folder under model/, found %v", dirs)
	}
	sub, err := fs.Sub(modelFiles, "model/"+dirs[0])
	if err != nil {
		return nil, err
	}
	e, err := engine.Open(sub, dirs[0])
	if err != nil {
		return nil, err
	}
	return api.New(e, api.Options{})
}
