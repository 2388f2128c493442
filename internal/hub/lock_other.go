//go:build !unix

package hub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// lockFile creates path exclusively, waiting while another process holds it, until ctx is
// done. Without flock a crashed process leaves the file: one older than an hour is taken as
// stale. Call the returned func to release.
func lockFile(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > time.Hour {
			os.Remove(path)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: waiting for another download of the same file: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
