// Package hub fetches a model folder from the HuggingFace Hub by its id ("org/name@revision")
// into HuggingFace's own cache layout, so that bertlab, transformers and huggingface_hub share
// one cache:
//
//	$HF_HUB_CACHE (else $HF_HOME/hub, else ~/.cache/huggingface/hub)
//	  models--org--name/
//	    blobs/<etag>                 the files' bytes, named by the Hub's ETag (sha256 for LFS files)
//	    snapshots/<commit>/<file>    relative symlinks to ../../blobs/<etag>
//	    refs/<revision>              the commit a branch or tag pointed to at the last download
//	    .no_exist/<commit>/<file>    optional files the Hub said do not exist
//	  .locks/models--org--name/<etag>.lock
//
// Files come from {HF_ENDPOINT}/{org}/{name}/resolve/{revision}/{file}; downloads are checked
// against the sha the Hub gives, written to <etag>.incomplete and renamed, resumed with Range
// after an interruption, and locked so that two processes never write the same blob.
package hub

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/bertlab/bertlab/internal/hubid"
)

// Env is the part of the environment that the Hub client reads, by huggingface_hub's names.
type Env struct {
	Endpoint   string // HF_ENDPOINT, else https://huggingface.co
	CacheDir   string // HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub
	Token      string // HF_TOKEN, else the file HF_TOKEN_PATH or $HF_HOME/token names
	Offline    bool   // HF_HUB_OFFLINE: serve from the cache only
	NoProgress bool   // HF_HUB_DISABLE_PROGRESS_BARS
}

// EnvFrom reads Env through getenv (os.Getenv in a program, a map in tests).
func EnvFrom(getenv func(string) string) Env {
	e := Env{
		Endpoint:   strings.TrimRight(getenv("HF_ENDPOINT"), "/"),
		CacheDir:   getenv("HF_HUB_CACHE"),
		Token:      strings.TrimSpace(getenv("HF_TOKEN")),
		Offline:    truthy(getenv("HF_HUB_OFFLINE")),
		NoProgress: truthy(getenv("HF_HUB_DISABLE_PROGRESS_BARS")),
	}
	if e.Endpoint == "" {
		e.Endpoint = hubid.DefaultEndpoint
	}
	home := getenv("HF_HOME")
	if home == "" {
		if x := getenv("XDG_CACHE_HOME"); x != "" {
			home = filepath.Join(x, "huggingface")
		} else if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".cache", "huggingface")
		}
	}
	if e.CacheDir == "" {
		e.CacheDir = filepath.Join(home, "hub")
	}
	if e.Token == "" {
		e.Token = strings.TrimSpace(getenv("HUGGING_FACE_HUB_TOKEN")) // huggingface_hub's old name
	}
	if e.Token == "" {
		p := getenv("HF_TOKEN_PATH")
		if p == "" && home != "" {
			p = filepath.Join(home, "token")
		}
		if b, err := os.ReadFile(p); err == nil && p != "" {
			e.Token = strings.TrimSpace(string(b))
		}
	}
	return e
}

// truthy reads a boolean variable as huggingface_hub does: 1, ON, YES or TRUE, in any case.
func truthy(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}
