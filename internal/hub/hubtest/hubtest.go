// Package hubtest is a local stand-in for the HuggingFace Hub in tests: it answers
// {url}/{org}/{name}/resolve/{revision}/{file} as the Hub does (X-Repo-Commit, ETag as the
// git blob sha1 of small files, 302 redirects of LFS files to a separate storage server with
// X-Linked-Etag (sha256) and X-Linked-Size, Range requests, 401/403 for gated repositories,
// 404 with X-Error-Code for a missing repository, revision or file) and can misbehave on
// purpose: corrupt a file, cut a download off part way. It also answers the repository info
// the page reads, api/models/{org}/{name}/revision/{revision}?blobs=true (unless NoAPI).
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Request is one request a Server answered.
type Request struct {
	Server string // "hub" or "cdn"
	Method string
	Path   string // unescaped
	Range  string // the Range header
	Auth   string // the Authorization header
	Status int
}

type repo struct {
	commits map[string]map[string][]byte // commit -> file -> bytes
	refs    map[string]string            // branch or tag -> commit
	gated   bool
}

// Server is a fake Hub. URL is its endpoint (HF_ENDPOINT); LFS files are served by a second
// server, as the Hub's storage is another host.
type Server struct {
	URL string

	hub, cdn *httptest.Server
	token    string

	mu      sync.Mutex
	repos   map[string]*repo
	blobs   map[string][]byte // sha256 -> bytes, for the storage server
	corrupt map[string]bool   // sha256 of files served wrong
	cut     map[string]int64  // sha256 -> bytes after which the next download is cut off
	noAPI   bool              // answer 404 to api/models/..., as a mirror without the API
	log     []Request
}

// New starts a fake Hub that takes token (if not empty) as the bearer token of gated
// repositories. It is closed when the test ends.
func New(t interface {
	Cleanup(func())
}, token string) *Server {
	s := &Server{token: token, repos: map[string]*repo{}, blobs: map[string][]byte{}, corrupt: map[string]bool{}, cut: map[string]int64{}}
	s.cdn = httptest.NewServer(s.recorded("cdn", s.serveCDN))
	s.hub = httptest.NewServer(s.recorded("hub", s.serveHub))
	s.URL = s.hub.URL
	t.Cleanup(s.Close)
	return s
}

// Close shuts both servers down; afterwards every request fails to connect, as without a
// network.
func (s *Server) Close() {
	s.hub.Close()
	s.cdn.Close()
}

// Push makes a commit of repo ("org/name") holding exactly files, points branch at it and
// returns its hash.
func (s *Server) Push(repoID, branch string, files map[string][]byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[repoID]
	if r == nil {
		r = &repo{commits: map[string]map[string][]byte{}, refs: map[string]string{}}
		s.repos[repoID] = r
	}
	h := sha1.New()
	fmt.Fprintf(h, "%s %s %d\n", repoID, branch, len(r.commits))
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	snap := map[string][]byte{}
	for _, n := range names {
		fmt.Fprintf(h, "%s %x\n", n, sha256.Sum256(files[n]))
		snap[n] = bytes.Clone(files[n])
		if IsLFS(n, files[n]) {
			sum := sha256.Sum256(files[n])
			s.blobs[hex.EncodeToString(sum[:])] = snap[n]
		}
	}
	c := hex.EncodeToString(h.Sum(nil))
	r.commits[c] = snap
	r.refs[branch] = c
	return c
}

// Gate makes repo answer only requests with the server's token.
func (s *Server) Gate(repoID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[repoID].gated = true
}

// Corrupt makes the server send data with one byte changed, under the right headers.
func (s *Server) Corrupt(data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.corrupt[SHA256(data)] = true
}

// CutAfter makes the next download of data (whole, without Range) stop after n bytes, the
// connection dropped.
func (s *Server) CutAfter(data []byte, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut[SHA256(data)] = n
}

// NoAPI makes the server answer 404 to the repository info (api/models/...), as a mirror
// that serves only the resolve URLs.
func (s *Server) NoAPI() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noAPI = true
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Gets returns the GET requests answered so far (downloads of bytes).
func (s *Server) Gets() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

// IsLFS says whether the Hub stores a file in LFS: safetensors and other binary weights, and
// anything over 10 kB.
func IsLFS(name string, data []byte) bool {
	return strings.HasSuffix(name, ".safetensors") || strings.HasSuffix(name, ".bin") || len(data) > 10<<10
}

// SHA256 is the hex sha256 of data: an LFS file's X-Linked-Etag.
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// GitBlobSHA1 is git's object id of data ("git hash-object"): a small file's ETag.
func GitBlobSHA1(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// lfsPointer is the git LFS pointer file the repository holds in place of an LFS file; its
// git sha1 is the ETag the Hub sends beside X-Linked-Etag.
func lfsPointer(data []byte) []byte {
	return fmt.Appendf(nil, "version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", SHA256(data), len(data))
}

// ReadFolder reads the files of a folder on disk, for Push.
func ReadFolder(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	return files, err
}

func (s *Server) record(server string, r *http.Request, status int) {
	p, _ := url.PathUnescape(r.URL.EscapedPath())
	s.mu.Lock()
	s.log = append(s.log, Request{Server: server, Method: r.Method, Path: p, Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization"), Status: status})
	s.mu.Unlock()
}

// recorded wraps a handler so that each request is logged when its status line is written,
// before the client can see any of the response: a client that has returned has all its
// requests in the log (logging after the handler returned raced with the test reading it).
func (s *Server) recorded(server string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rw := &recordingWriter{ResponseWriter: w, log: func(status int) { s.record(server, r, status) }}
		h(rw, r)
		rw.WriteHeader(http.StatusOK) // a handler that wrote nothing answers 200
	}
}

// recordingWriter logs the status once, at the first WriteHeader or Write.
type recordingWriter struct {
	http.ResponseWriter
	log  func(status int)
	done bool
}

func (w *recordingWriter) WriteHeader(status int) {
	if !w.done {
		w.done = true
		w.log(status)
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush lets a handler push what it wrote so far (the cut-off download does).
func (w *recordingWriter) Flush() {
	w.WriteHeader(http.StatusOK)
	w.ResponseWriter.(http.Flusher).Flush()
}

func hubError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Error-Code", code)
	w.Header().Set("X-Error-Message", msg)
	http.Error(w, msg, status)
}

// serveHub answers /{org}/{name}/resolve/{revision}/{file}.
func (s *Server) serveHub(w http.ResponseWriter, r *http.Request) {
	status := http.StatusOK
	cors(w)
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	for i := range segs {
		segs[i], _ = url.PathUnescape(segs[i])
	}
	api := len(segs) == 6 && segs[0] == "api" && segs[1] == "models" && segs[4] == "revision"
	if api {
		segs = []string{segs[2], segs[3], "resolve", segs[5], ""}
		s.mu.Lock()
		off := s.noAPI
		s.mu.Unlock()
		if off {
			status = http.StatusNotFound
			http.NotFound(w, r)
			return
		}
	}
	if len(segs) < 5 || segs[2] != "resolve" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		status = http.StatusNotFound
		http.NotFound(w, r)
		return
	}
	repoID, rev, file := segs[0]+"/"+segs[1], segs[3], strings.Join(segs[4:], "/")
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	rp := s.repos[repoID]
	var commit string
	var files map[string][]byte
	if rp != nil {
		commit = rev
		if c, ok := rp.refs[rev]; ok {
			commit = c
		}
		files = rp.commits[commit]
	}
	s.mu.Unlock()
	switch {
	case rp == nil && auth == "":
		// The Hub does not say whether a repository exists to someone not logged in.
		status = http.StatusUnauthorized
		hubError(w, status, "RepoNotFound", "Repository not found for url: "+r.URL.String()+".")
		return
	case rp == nil:
		status = http.StatusNotFound
		hubError(w, status, "RepoNotFound", "Repository not found")
		return
	case rp.gated && auth == "":
		status = http.StatusUnauthorized
		hubError(w, status, "GatedRepo", "Access to model "+repoID+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
		return
	case rp.gated && auth != "Bearer "+s.token:
		status = http.StatusForbidden
		hubError(w, status, "GatedRepo", "Access to model "+repoID+" is restricted and you are not in the authorized list.")
		return
	case files == nil:
		status = http.StatusNotFound
		hubError(w, status, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	if api {
		status = http.StatusOK
		serveInfo(w, repoID, commit, files)
		return
	}
	data, ok := files[file]
	if !ok {
		status = http.StatusNotFound
		hubError(w, status, "EntryNotFound", "Entry not found")
		return
	}
	h := w.Header()
	h.Set("X-Repo-Commit", commit)
	if IsLFS(file, data) {
		sum := SHA256(data)
		h.Set("ETag", `"`+GitBlobSHA1(lfsPointer(data))+`"`)
		h.Set("X-Linked-Etag", `"`+sum+`"`)
		h.Set("X-Linked-Size", fmt.Sprint(len(data)))
		h.Set("Location", s.cdn.URL+"/repos/"+sum[:2]+"/"+sum+"?response-content-disposition=attachment")
		status = http.StatusFound
		w.WriteHeader(status)
		return
	}
	h.Set("ETag", `"`+GitBlobSHA1(data)+`"`)
	s.mu.Lock()
	if s.corrupt[SHA256(data)] {
		data = flip(data)
	}
	s.mu.Unlock()
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// serveCDN answers /repos/xx/<sha256> with the LFS file's bytes, with Range support.
func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	cors(w)
	sum := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	s.mu.Lock()
	data, ok := s.blobs[sum]
	cut, cutting := s.cut[sum]
	if cutting && r.Header.Get("Range") == "" && r.Method == http.MethodGet {
		delete(s.cut, sum)
	} else {
		cutting = false
	}
	if s.corrupt[sum] {
		data = flip(data)
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if cutting {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drops the connection: the client sees an unexpected EOF
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// serveInfo answers api/models/{repo}/revision/{rev}?blobs=true: the commit and its files
// with their git sha1, and their sha256 when in LFS.
func serveInfo(w http.ResponseWriter, repoID, commit string, files map[string][]byte) {
	type lfs struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sibling struct {
		Name   string `json:"rfilename"`
		BlobID string `json:"blobId"`
		Size   int    `json:"size"`
		LFS    *lfs   `json:"lfs,omitempty"`
	}
	var sibs []sibling
	for _, n := range slices.Sorted(maps.Keys(files)) {
		d := files[n]
		sb := sibling{Name: n, BlobID: GitBlobSHA1(d), Size: len(d)}
		if IsLFS(n, d) {
			p := lfsPointer(d)
			sb.BlobID = GitBlobSHA1(p)
			sb.LFS = &lfs{SHA256: SHA256(d), Size: len(d), PointerSize: len(p)}
		}
		sibs = append(sibs, sb)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": repoID, "sha": commit, "siblings": sibs})
}

// cors lets a page of another origin read the answers, as the Hub and its storage do.
func cors(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Expose-Headers", "X-Repo-Commit, X-Linked-Etag, X-Linked-Size, ETag, Content-Range, X-Error-Code, X-Error-Message")
}

func flip(data []byte) []byte {
	d := bytes.Clone(data)
	if len(d) > 0 {
		d[len(d)/2] ^= 0xff
	}
	return d
}
