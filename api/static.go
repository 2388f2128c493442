package api

import (
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// serveStatic serves the file of Options.Static named by the path, or a folder's index.html.
// Anything else (no such file, a folder without index.html, a hidden name such as .git) is a
// JSON 404, like every other error of the handler; folders are never listed.
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
	}
	h.files.ServeHTTP(w, r)
}
