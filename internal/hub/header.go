package hub

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// Headers the Hub answers a resolve request with.
const (
	headerCommit     = "X-Repo-Commit"   // the commit the revision resolved to
	headerLinkedETag = "X-Linked-Etag"   // an LFS file's sha256 (the ETag is then the pointer's)
	headerLinkedSize = "X-Linked-Size"   // an LFS file's size
	headerErrorCode  = "X-Error-Code"    // RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo
	headerErrorMsg   = "X-Error-Message" // the Hub's words for the error
)

// maxETag bounds an ETag: a sha256 is 64 hex digits.
const maxETag = 128

// ParseETag reads an ETag header value as the blob name huggingface_hub gives it: without a
// weak validator's W/ and without the quotes. The result names a file in the cache, so it must
// be 1 to 128 letters, digits, '-', '_' or '.', and not start with '.'.
func ParseETag(v string) (string, error) {
	e := strings.TrimSpace(v)
	e = strings.TrimPrefix(e, "W/")
	if len(e) >= 2 && e[0] == '"' && e[len(e)-1] == '"' {
		e = e[1 : len(e)-1]
	}
	if e == "" {
		return "", fmt.Errorf("empty ETag %q", v)
	}
	if len(e) > maxETag {
		return "", fmt.Errorf("ETag of %d characters, more than %d", len(e), maxETag)
	}
	if e[0] == '.' {
		return "", fmt.Errorf("ETag %q starts with '.'", v)
	}
	for _, c := range []byte(e) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", fmt.Errorf("ETag %q has %q: not usable as a file name", v, c)
		}
	}
	return e, nil
}

// ParseContentRange reads a 206 answer's "Content-Range: bytes first-last/total" (total may
// be "*"; -1 then).
func ParseContentRange(v string) (first, last, total int64, err error) {
	bad := func() (int64, int64, int64, error) {
		return 0, 0, 0, fmt.Errorf("Content-Range %q: want bytes first-last/total", v)
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !ok {
		return bad()
	}
	span, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return bad()
	}
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		return bad()
	}
	num := func(s string) (int64, bool) {
		if s == "" || s[0] == '+' || s[0] == '-' {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	if first, ok = num(a); !ok {
		return bad()
	}
	if last, ok = num(b); !ok || last < first {
		return bad()
	}
	total = -1
	if tot != "*" {
		if total, ok = num(tot); !ok || total <= last {
			return bad()
		}
	}
	return first, last, total, nil
}

// HTTPError is the Hub's refusal of a request, with its X-Error-Code when it gave one.
type HTTPError struct {
	Status  int
	Code    string // X-Error-Code: RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo
	Message string // X-Error-Message
	Token   bool   // whether a token was sent
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	switch {
	case e.Code == "RepoNotFound":
		s += ": no such repository"
	case e.Code == "RevisionNotFound":
		s += ": no such revision"
	case e.Code == "EntryNotFound" || e.Status == http.StatusNotFound:
		s += ": no such file"
	}
	if e.Message != "" {
		s += " (the Hub says: " + e.Message + ")"
	}
	switch {
	case e.Status == http.StatusUnauthorized && !e.Token:
		s += "; the repository is gated or private, or does not exist: for a gated or private one, set HF_TOKEN to a token of an account that has access"
	case e.Status == http.StatusUnauthorized:
		s += "; HF_TOKEN was refused"
	case e.Status == http.StatusForbidden:
		s += "; this token has no access: accept the model's conditions on its page, or use a token with read access"
	}
	return s
}

// fileMissing reports whether err is the Hub saying a file does not exist at a revision
// that does (a 404 that is not about the repository or the revision).
func fileMissing(err error) bool {
	e, ok := err.(*HTTPError)
	return ok && e.Status == http.StatusNotFound && e.Code != "RepoNotFound" && e.Code != "RevisionNotFound"
}

func httpError(resp *http.Response, token bool) *HTTPError {
	msg := resp.Header.Get(headerErrorMsg)
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return &HTTPError{Status: resp.StatusCode, Code: resp.Header.Get(headerErrorCode), Message: msg, Token: token}
}

// checksum says how a file's ETag can be checked: a sha256 (64 hex digits, an LFS file's
// X-Linked-Etag) or a git blob sha1 (40 hex digits, a small file's ETag); nil when the ETag is
// neither (a mirror's own), and the file is then taken as it comes.
func checksum(etag string) (newHash func() hash.Hash, kind string, gitBlob bool) {
	if !isHex(etag) {
		return nil, "", false
	}
	switch len(etag) {
	case 64:
		return sha256.New, "sha256", false
	case 40:
		return sha1.New, "git blob sha1", true
	}
	return nil, "", false
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// verify hashes the file at path as the ETag says (see checksum) and compares. It returns
// what was checked ("sha256", "git blob sha1", or "" when the ETag is not a hash).
func verify(path, etag string) (string, error) {
	newHash, kind, gitBlob := checksum(etag)
	if newHash == nil {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return kind, err
	}
	defer f.Close()
	h := newHash()
	if gitBlob {
		st, err := f.Stat()
		if err != nil {
			return kind, err
		}
		fmt.Fprintf(h, "blob %d\x00", st.Size())
	}
	if _, err := io.Copy(h, f); err != nil {
		return kind, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != etag {
		return kind, fmt.Errorf("%s of the download is %s, the Hub gave %s", kind, got, etag)
	}
	return kind, nil
}
