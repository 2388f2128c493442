package hub

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/bertlab/bertlab/internal/hubid"
)

// cache is one repository's folder in the HF cache.
type cache struct {
	root string // <cache>/models--org--name
	lock string // <cache>/.locks/models--org--name
}

func newCache(dir, repo string) cache {
	name := "models--" + strings.ReplaceAll(repo, "/", "--")
	return cache{root: filepath.Join(dir, name), lock: filepath.Join(dir, ".locks", name)}
}

func (c cache) blob(etag string) string { return filepath.Join(c.root, "blobs", etag) }

func (c cache) snapshot(commit string) string { return filepath.Join(c.root, "snapshots", commit) }

func (c cache) file(commit, name string) string { return filepath.Join(c.snapshot(commit), name) }

func (c cache) noExist(commit, name string) string {
	return filepath.Join(c.root, ".no_exist", commit, name)
}

func (c cache) ref(revision string) string {
	return filepath.Join(c.root, "refs", filepath.FromSlash(revision))
}

// commit returns the commit a revision names in the cache: the revision itself when it is a
// commit hash, else the content of refs/<revision>.
func (c cache) commit(revision string) (string, error) {
	if hubid.IsCommitHash(revision) {
		return revision, nil
	}
	b, err := os.ReadFile(c.ref(revision))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if !hubid.IsCommitHash(s) {
		return "", fmt.Errorf("%s holds %q, not a commit hash", c.ref(revision), s)
	}
	return s, nil
}

// has reports whether the snapshot of commit holds name (a link whose blob is there).
func (c cache) has(commit, name string) bool {
	st, err := os.Stat(c.file(commit, name))
	return err == nil && st.Mode().IsRegular()
}

// knownMissing reports whether the Hub said name does not exist at commit.
func (c cache) knownMissing(commit, name string) bool {
	_, err := os.Stat(c.noExist(commit, name))
	return err == nil
}

// writeRef records that revision points to commit.
func (c cache) writeRef(revision, commit string) error {
	if revision == commit {
		return nil
	}
	if old, err := c.commit(revision); err == nil && old == commit {
		return nil
	}
	return writeAtomic(c.ref(revision), []byte(commit))
}

// markMissing records that name does not exist at commit (huggingface_hub's .no_exist).
func (c cache) markMissing(commit, name string) error {
	p := c.noExist(commit, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// link makes snapshots/<commit>/<name> a relative symlink to the blob etag, replacing what
// was there; where symlinks cannot be made (Windows without developer mode) the blob is
// copied, as huggingface_hub does.
func (c cache) link(commit, name, etag string) error {
	dst := c.file(commit, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if target, err := os.Readlink(dst); err == nil && filepath.Base(target) == etag {
		return nil
	}
	rel, err := filepath.Rel(filepath.Dir(dst), c.blob(etag))
	if err != nil {
		return err
	}
	// A name of this process and call, as another process may be linking the same file.
	tmp := fmt.Sprintf("%s.tmp-link-%d-%d", dst, os.Getpid(), linkSeq.Add(1))
	if err := os.Symlink(rel, tmp); err != nil {
		return copyFile(c.blob(etag), dst)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// linkSeq numbers the temporary links of this process.
var linkSeq atomic.Int64

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeAtomicFrom(dst, in)
}

func writeAtomic(path string, data []byte) error {
	return writeAtomicFrom(path, strings.NewReader(string(data)))
}

// writeAtomicFrom writes r to a temporary file beside path and renames it over path.
func writeAtomicFrom(path string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// notExist reports whether err says a file is absent.
func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
