// Package hubid holds what names a model on the HuggingFace Hub: a repo id with an optional
// revision ("org/name@revision"), its resolve URLs, and the files of a model folder that
// bertlab fetches. It has no networking, so the page (wasm) and the native downloader
// (internal/hub) share it.
package hubid

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// DefaultRevision is the revision asked for when an id names none.
const DefaultRevision = "main"

// Files of a model folder, in the order they are fetched.
const (
	ConfigFile       = "config.json"
	WeightsFile      = "model.safetensors"
	WeightsIndexFile = "model.safetensors.index.json"
)

// TokenizerFiles are the tokenizer files a model folder may hold; each is optional.
var TokenizerFiles = []string{
	"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
	"vocab.txt", "vocab.json", "merges.txt", "spiece.model", "spm.model",
}

// Ref is a model on the Hub: its repo id and the revision (a branch, a tag or a commit hash).
type Ref struct {
	Repo     string // "org/name"
	Revision string // "main" when the id named none
}

// String is the id as Parse reads it: "org/name@revision".
func (r Ref) String() string { return r.Repo + "@" + r.Revision }

// IsCommit reports whether the revision is a full commit hash (40 lowercase hex digits), which
// names files that never change.
func (r Ref) IsCommit() bool { return IsCommitHash(r.Revision) }

// IsCommitHash reports whether s is a full git commit hash: 40 lowercase hex digits.
func IsCommitHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// maxPart is the longest org or model name the Hub accepts.
const maxPart = 96

// maxRevision bounds a revision's length.
const maxRevision = 256

// Parse reads a Hub id "org/name" or "org/name@revision". Names follow the Hub's rules: letters,
// digits, '-', '_' and '.', at most 96 characters, not starting or ending with '-' or '.', without
// "--" or ".."; a revision is a branch, tag or commit hash ("main", "v1.0", "refs/pr/1", 40 hex
// digits) and may not climb out of a folder. The error says what is wrong with s.
func Parse(s string) (Ref, error) {
	repo, rev, hasRev := strings.Cut(s, "@")
	if hasRev && rev == "" {
		return Ref{}, fmt.Errorf("hub id %q: empty revision after '@'", s)
	}
	if !hasRev {
		rev = DefaultRevision
	}
	org, name, ok := strings.Cut(repo, "/")
	if !ok {
		return Ref{}, fmt.Errorf("hub id %q: want org/name (for example google-bert/bert-base-uncased)", s)
	}
	if strings.Contains(name, "/") {
		return Ref{}, fmt.Errorf("hub id %q: want org/name, got more than one '/'", s)
	}
	for _, p := range []struct{ what, v string }{{"org", org}, {"name", name}} {
		if err := checkPart(p.v); err != nil {
			return Ref{}, fmt.Errorf("hub id %q: %s %q %w", s, p.what, p.v, err)
		}
	}
	if strings.HasSuffix(name, ".git") {
		return Ref{}, fmt.Errorf("hub id %q: name may not end in .git", s)
	}
	if err := checkRevision(rev); err != nil {
		return Ref{}, fmt.Errorf("hub id %q: revision %q %w", s, rev, err)
	}
	return Ref{Repo: repo, Revision: rev}, nil
}

func checkPart(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty")
	case len(p) > maxPart:
		return fmt.Errorf("is longer than %d characters", maxPart)
	case strings.Contains(p, "--") || strings.Contains(p, ".."):
		return fmt.Errorf("may not contain -- or ..")
	case strings.ContainsAny(p[:1], "-.") || strings.ContainsAny(p[len(p)-1:], "-."):
		return fmt.Errorf("may not start or end with - or .")
	}
	for _, c := range p {
		if !isNameChar(c) {
			return fmt.Errorf("has %q: only letters, digits, '-', '_' and '.' are allowed", c)
		}
	}
	return nil
}

func isNameChar(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// checkRevision keeps a revision safe as a path under a cache's refs/ folder.
func checkRevision(r string) error {
	if len(r) > maxRevision {
		return fmt.Errorf("is longer than %d characters", maxRevision)
	}
	for _, c := range r {
		if !isNameChar(c) && c != '/' {
			return fmt.Errorf("has %q: only letters, digits, '-', '_', '.' and '/' are allowed", c)
		}
	}
	for _, seg := range strings.Split(r, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("has an empty, . or .. path segment")
		}
	}
	return nil
}

// ResolveURL is the address of file at ref on the Hub at endpoint ("" for DefaultEndpoint):
// {endpoint}/{org}/{name}/resolve/{revision}/{file}, the revision escaped as one path segment
// ("refs/pr/1" becomes "refs%2Fpr%2F1") as huggingface_hub does.
func ResolveURL(endpoint string, ref Ref, file string) string {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimRight(endpoint, "/") + "/" + ref.Repo + "/resolve/" + url.PathEscape(ref.Revision) + "/" + strings.Join(segs, "/")
}
