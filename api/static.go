package api

import (
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
)

// serveStatic serves the file of Options.Static named by the path, or a folder's index.html.
// Anything else (no such file, a folder without index.html, a hidden name such as .git) is a
// JSON 404, like every other error of the handler; folders are never listed. A file with a
// gzipped twin NAME.gz (`make wasm` writes them for the page's wasm) is sent as that twin to
// clients that accept gzip, as nginx's gzip_static does, unless the twin is older than the
// file.
func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	notFound := func() { writeError(w, http.StatusNotFound, "not found: "+r.URL.Path) }
	if h.files == nil {
		notFound()
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "."
	}
	if !fs.ValidPath(name) {
		notFound()
		return
	}
	for _, elem := range strings.Split(name, "/") {
		if strings.HasPrefix(elem, ".") && elem != "." {
			notFound()
			return
		}
	}
	fi, err := fs.Stat(h.opt.Static, name)
	if err != nil {
		notFound()
		return
	}
	if fi.IsDir() {
		if _, err := fs.Stat(h.opt.Static, path.Join(name, "index.html")); err != nil {
			notFound()
			return
		}
	} else if gz, err := fs.Stat(h.opt.Static, name+".gz"); err == nil && gz.Mode().IsRegular() && !gz.ModTime().Before(fi.ModTime()) {
		w.Header().Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) && h.serveGzip(w, r, name, gz) {
			return
		}
	}
	h.files.ServeHTTP(w, r)
}

// serveGzip sends name's gzipped twin as name with Content-Encoding gzip. It reports false,
// having written nothing, when the twin cannot be read as a seekable file.
func (h *Handler) serveGzip(w http.ResponseWriter, r *http.Request, name string, gz fs.FileInfo) bool {
	f, err := h.opt.Static.Open(name + ".gz")
	if err != nil {
		return false
	}
	defer f.Close()
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		return false
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Encoding", "gzip")
	http.ServeContent(w, r, name, gz.ModTime(), rs)
	return true
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip: named with a q-value
// above 0, or, when gzip is not named, through * with a q-value above 0.
func acceptsGzip(header string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip":
			gzipQ = q
		case "*":
			starQ = q
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// DefaultAssets is the page folder `bertlab serve` serves when none is named: assets/ when run
// from the repository, else none ("").
func DefaultAssets() string {
	if fi, err := os.Stat("assets"); err == nil && fi.IsDir() {
		return "assets"
	}
	return ""
}

// AssetsFS is the page folder dir as a file system for Options.Static; "" gives nil (API only).
func AssetsFS(dir string) (fs.FS, error) {
	if dir == "" {
		return nil, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("assets %s: not a folder", dir)
	}
	return os.DirFS(dir), nil
}
