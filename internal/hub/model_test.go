package hub_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/internal/hub"
	"github.com/bertlab/bertlab/internal/hub/hubtest"
)

func TestLooksLikeID(t *testing.T) {
	for arg, want := range map[string]bool{
		"org/name": true, "org/name@v1": true, "org/name@refs/pr/1": true, "org/na me": true,
		"name": false, "./org/name": false, "/abs/path": false, "~/models/x": false, "a/b/c": false,
		"org/": false, `C:\models\x`: false, "../x/y": false, "": false,
	} {
		if got := hub.LooksLikeID(arg); got != want {
			t.Errorf("%q: %v, want %v", arg, got, want)
		}
	}
}

// TestModelArgs checks that --model's value, in each spelling of the flag, becomes the
// snapshot folder; a local folder, other flags and arguments after "--" are left alone.
func TestModelArgs(t *testing.T) {
	srv := hubtest.New(t, "")
	commit := srv.Push("bertlab/tiny", "main", fixtureFiles(t))
	cache := t.TempDir()
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_TOKEN", "")
	snap := filepath.Join(cache, "models--bertlab--tiny", "snapshots", commit)
	ctx := context.Background()
	for _, c := range []struct{ in, want []string }{
		{[]string{"--model", "bertlab/tiny", "--json", "x"}, []string{"--model", snap, "--json", "x"}},
		{[]string{"-model=bertlab/tiny@main"}, []string{"-model=" + snap}},
		{[]string{"--model=" + fixture, "--top-k", "3"}, []string{"--model=" + fixture, "--top-k", "3"}},
		{[]string{"--models", "bertlab/tiny", "--", "--model", "bertlab/tiny"}, []string{"--models", "bertlab/tiny", "--", "--model", "bertlab/tiny"}},
		{[]string{"--model"}, []string{"--model"}},
	} {
		got, err := hub.ModelArgs(ctx, c.in, nil)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	// A relative folder that exists is a folder, even when it looks like an id.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(t.TempDir())
	os.MkdirAll("bertlab/tiny", 0o755)
	if got, err := hub.ModelArgs(ctx, []string{"--model", "bertlab/tiny"}, nil); err != nil || got[1] != "bertlab/tiny" {
		t.Errorf("local folder: %q, %v", got, err)
	}
	_, err := hub.ModelArgs(ctx, []string{"--model", "org/na me"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no such folder, and not a Hub id") || !strings.Contains(err.Error(), "' '") {
		t.Errorf("bad id: %v", err)
	}
}
