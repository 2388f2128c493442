package hubid

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// InfoURL is the address of the Hub's description of ref's files with their shas:
// {endpoint}/api/models/{org}/{name}/revision/{revision}?blobs=true, as huggingface_hub's
// model_info(files_metadata=True) asks it. The page reads it, since a browser's fetch cannot
// see the X-Linked-Etag behind a LFS file's redirect.
func InfoURL(endpoint string, ref Ref) string {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	return strings.TrimRight(endpoint, "/") + "/api/models/" + ref.Repo + "/revision/" + url.PathEscape(ref.Revision) + "?blobs=true"
}

// FileInfo is one file of a repository as the Hub describes it.
type FileInfo struct {
	Size   int64
	BlobID string // the git blob sha1 (40 hex digits)
	SHA256 string // a LFS file's sha256 (64 hex digits); "" for a file in git
}

// Info is the Hub's description of a revision: its commit and its files.
type Info struct {
	Commit string
	Files  map[string]FileInfo
}

// maxInfoSize bounds the description: a model repository lists tens of files, a large one a
// few thousand (about 300 bytes each).
const maxInfoSize = 16 << 20

// ParseInfo reads the Hub's answer at InfoURL: {"sha": commit, "siblings": [{"rfilename",
// "size", "blobId", "lfs": {"sha256", "size"}}]}. The commit must be a commit hash; a file's
// shas must be lowercase hex of the right length; its name must be a relative path without
// "." or ".." segments. Fields the page does not use are ignored.
func ParseInfo(data []byte) (*Info, error) {
	if len(data) > maxInfoSize {
		return nil, fmt.Errorf("repository info: %d bytes, more than %d MiB", len(data), maxInfoSize>>20)
	}
	var raw struct {
		SHA      string `json:"sha"`
		Siblings []struct {
			Name   string `json:"rfilename"`
			Size   *int64 `json:"size"`
			BlobID string `json:"blobId"`
			LFS    *struct {
				SHA256 string `json:"sha256"`
				Size   int64  `json:"size"`
			} `json:"lfs"`
		} `json:"siblings"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("repository info: %w", err)
	}
	if !IsCommitHash(raw.SHA) {
		return nil, fmt.Errorf("repository info: sha %q is not a commit hash", raw.SHA)
	}
	x := &Info{Commit: raw.SHA, Files: make(map[string]FileInfo, len(raw.Siblings))}
	for _, s := range raw.Siblings {
		if err := checkPath(s.Name); err != nil {
			return nil, fmt.Errorf("repository info: file %q %w", s.Name, err)
		}
		if _, dup := x.Files[s.Name]; dup {
			return nil, fmt.Errorf("repository info: file %q listed twice", s.Name)
		}
		fi := FileInfo{Size: -1, BlobID: s.BlobID}
		if s.Size != nil {
			fi.Size = *s.Size
		}
		if fi.BlobID != "" && !isHexLen(fi.BlobID, 40) {
			return nil, fmt.Errorf("repository info: file %q: blobId %q is not a git sha1", s.Name, fi.BlobID)
		}
		if s.LFS != nil {
			if !isHexLen(s.LFS.SHA256, 64) {
				return nil, fmt.Errorf("repository info: file %q: lfs.sha256 %q is not a sha256", s.Name, s.LFS.SHA256)
			}
			fi.SHA256, fi.Size = s.LFS.SHA256, s.LFS.Size
		}
		if fi.Size < -1 {
			return nil, fmt.Errorf("repository info: file %q: size %d", s.Name, fi.Size)
		}
		x.Files[s.Name] = fi
	}
	return x, nil
}

func isHexLen(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkPath accepts a file's path in a repository: relative, '/'-separated, without empty,
// "." or ".." segments.
func checkPath(p string) error {
	if p == "" || strings.ContainsAny(p, "\\\x00") {
		return fmt.Errorf("is not a file path in a repository")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("has an empty, . or .. path segment")
		}
	}
	return nil
}
