package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/internal/hub/hubtest"
)

// TestFillMaskFromHub runs fill-mask with --model set to a Hub id served by a local Hub and
// checks the answer equals the one from the same folder on disk; then the same id offline
// (from the cache), and errors for an id that is not in the cache offline and a bad id.
func TestFillMaskFromHub(t *testing.T) {
	files := map[string][]byte{}
	for _, n := range []string{"config.json", "model.safetensors", "vocab.txt"} {
		b, err := os.ReadFile(filepath.Join(fixture, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	srv := hubtest.New(t, "")
	srv.Push("bertlab/tiny", "main", files)
	cache := t.TempDir()
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	const text = "w17 [MASK] w55"
	want, stderr, code := bertlab(t, "", "fill-mask", "--model", fixture, "--json", text)
	if code != 0 {
		t.Fatalf("local: exit %d: %s", code, stderr)
	}
	got, stderr, code := bertlab(t, "", "fill-mask", "--model", "bertlab/tiny", "--json", text)
	if code != 0 {
		t.Fatalf("hub: exit %d: %s", code, stderr)
	}
	if got != want {
		t.Errorf("from the Hub:\n%s\nfrom the folder:\n%s", got, want)
	}
	if !strings.Contains(stderr, "fetching bertlab/tiny@main model.safetensors") {
		t.Errorf("stderr should show the download:\n%s", stderr)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	got, stderr, code = bertlab(t, "", "fill-mask", "--model=bertlab/tiny@main", "--json", text)
	if code != 0 || got != want {
		t.Errorf("offline: exit %d, %s\n%s", code, got, stderr)
	}
	_, stderr, code = bertlab(t, "", "fill-mask", "--model", "bertlab/other", text)
	if code != 1 || !strings.Contains(stderr, "bertlab/other@main") || !strings.Contains(stderr, "HF_HUB_OFFLINE") {
		t.Errorf("offline, not cached: exit %d: %s", code, stderr)
	}
	_, stderr, code = bertlab(t, "", "fill-mask", "--model", "bertlab/bad--name", text)
	if code != 1 || !strings.Contains(stderr, "not a Hub id") {
		t.Errorf("bad id: exit %d: %s", code, stderr)
	}
}
