package hub_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/hub"
	"github.com/bertlab/bertlab/internal/hub/hubtest"
	"github.com/bertlab/bertlab/internal/hubid"
)

// fixture is a real model folder: the tiny random BERT the engine's tests use.
const fixture = "../../core/bert/testdata/bert-tiny-random"

func fixtureFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range []string{"config.json", "model.safetensors", "vocab.txt"} {
		b, err := os.ReadFile(filepath.Join(fixture, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	return files
}

func client(srv *hubtest.Server, cache string, progress *bytes.Buffer) *hub.Client {
	c := hub.New(hub.Env{Endpoint: srv.URL, CacheDir: cache}, nil)
	if progress != nil {
		c.Progress = progress
	}
	return c
}

func ref(t *testing.T, id string) hubid.Ref {
	t.Helper()
	r, err := hubid.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustContain(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one naming %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q should contain %q", err, w)
		}
	}
}

// TestDownload fetches a model folder and checks HF's cache layout file by file: blobs named
// by the Hub's ETag (sha256 for LFS files, git blob sha1 for small ones), relative snapshot
// links, refs/main, .no_exist for the tokenizer files the repository lacks, and that the
// folder loads.
func TestDownload(t *testing.T) {
	srv := hubtest.New(t, "")
	files := fixtureFiles(t)
	commit := srv.Push("bertlab/tiny", "main", files)
	cache := t.TempDir()
	var progress bytes.Buffer
	s, err := client(srv, cache, &progress).Download(context.Background(), ref(t, "bertlab/tiny"))
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(cache, "models--bertlab--tiny")
	if s.Commit != commit || s.Dir != filepath.Join(repo, "snapshots", commit) {
		t.Errorf("snapshot %s at %s, want %s", s.Commit, s.Dir, commit)
	}
	if want := []string{"config.json", "model.safetensors", "vocab.txt"}; !slices.Equal(s.Files, want) {
		t.Errorf("files %v, want %v", s.Files, want)
	}
	var total int64
	for name, data := range files {
		total += int64(len(data))
		etag := hubtest.GitBlobSHA1(data)
		if hubtest.IsLFS(name, data) {
			etag = hubtest.SHA256(data)
		}
		link := filepath.Join(s.Dir, name)
		target, err := os.Readlink(link)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := filepath.Join("..", "..", "blobs", etag); target != want {
			t.Errorf("%s links to %s, want %s", name, target, want)
		}
		got, err := os.ReadFile(link)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: content differs (%v)", name, err)
		}
	}
	if s.Fetched != total {
		t.Errorf("fetched %d bytes, want %d", s.Fetched, total)
	}
	if b, err := os.ReadFile(filepath.Join(repo, "refs", "main")); err != nil || string(b) != commit {
		t.Errorf("refs/main = %q (%v), want %s", b, err, commit)
	}
	if _, err := os.Stat(filepath.Join(repo, ".no_exist", commit, "tokenizer.json")); err != nil {
		t.Errorf(".no_exist: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, ".locks", "models--bertlab--tiny", hubtest.SHA256(files["model.safetensors"])+".lock")); err != nil {
		t.Errorf("lock file: %v", err)
	}
	if !strings.Contains(progress.String(), "hub: fetching bertlab/tiny@main model.safetensors") {
		t.Errorf("progress lines:\n%s", progress.String())
	}
	for _, r := range srv.Requests() {
		if r.Auth != "" {
			t.Errorf("%s %s sent a token without one set", r.Method, r.Path)
		}
	}
	f, err := hf.LoadFolder(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Tokenizer == nil {
		t.Error("no tokenizer loaded")
	}
}

// TestCacheHit checks that a second download fetches no bytes, that the cache answers when
// the Hub is unreachable, and that a commit hash complete in the cache needs no request.
func TestCacheHit(t *testing.T) {
	srv := hubtest.New(t, "")
	commit := srv.Push("bertlab/tiny", "main", fixtureFiles(t))
	cache := t.TempDir()
	ctx := context.Background()
	first, err := client(srv, cache, nil).Download(ctx, ref(t, "bertlab/tiny"))
	if err != nil {
		t.Fatal(err)
	}
	gets := len(srv.Gets())
	s, err := client(srv, cache, nil).Download(ctx, ref(t, "bertlab/tiny"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Gets()) - gets; n != 0 || s.Fetched != 0 || s.Dir != first.Dir {
		t.Errorf("second download: %d GETs, %d bytes, dir %s", n, s.Fetched, s.Dir)
	}
	before := len(srv.Requests())
	if _, err := client(srv, cache, nil).Download(ctx, ref(t, "bertlab/tiny@"+commit)); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("commit complete in the cache: %d requests, want 0", n)
	}
	srv.Close()
	var note bytes.Buffer
	s, err = client(srv, cache, &note).Download(ctx, ref(t, "bertlab/tiny"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir != first.Dir || !strings.Contains(note.String(), "using the cached snapshot") {
		t.Errorf("unreachable Hub: dir %s, note %q", s.Dir, note.String())
	}
	// Unreachable and not cached: the error says the Hub did not answer.
	_, err = client(srv, t.TempDir(), nil).Download(ctx, ref(t, "bertlab/tiny"))
	mustContain(t, err, "bertlab/tiny@main", "config.json", "did not answer")
}

// TestOffline checks HF_HUB_OFFLINE: the cache alone answers, with no request, and a file
// missing from it is named.
func TestOffline(t *testing.T) {
	srv := hubtest.New(t, "")
	commit := srv.Push("bertlab/tiny", "main", fixtureFiles(t))
	cache := t.TempDir()
	ctx := context.Background()
	off := hub.New(hub.Env{Endpoint: srv.URL, CacheDir: cache, Offline: true}, nil)
	_, err := off.Download(ctx, ref(t, "bertlab/tiny"))
	mustContain(t, err, "bertlab/tiny@main", "HF_HUB_OFFLINE", "no snapshot", filepath.Join("refs", "main"))
	s, err := client(srv, cache, nil).Download(ctx, ref(t, "bertlab/tiny"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(srv.Requests())
	for _, id := range []string{"bertlab/tiny", "bertlab/tiny@" + commit} {
		got, err := off.Download(ctx, ref(t, id))
		if err != nil {
			t.Fatal(err)
		}
		if got.Dir != s.Dir || !slices.Equal(got.Files, s.Files) {
			t.Errorf("%s offline: %s %v, want %s %v", id, got.Dir, got.Files, s.Dir, s.Files)
		}
	}
	if len(srv.Requests()) != n {
		t.Error("offline mode made requests")
	}
	os.Remove(filepath.Join(s.Dir, "model.safetensors"))
	_, err = off.Download(ctx, ref(t, "bertlab/tiny"))
	mustContain(t, err, "bertlab/tiny@main", "model.safetensors", "in the cache")
	os.Remove(filepath.Join(s.Dir, "config.json"))
	_, err = off.Download(ctx, ref(t, "bertlab/tiny"))
	mustContain(t, err, "bertlab/tiny@main", "config.json is not in the cache", filepath.Join(s.Dir, "config.json"))
}

// TestBadSHA checks that a download whose bytes do not hash to the Hub's ETag is refused
// and removed, for an LFS file (sha256) and a small one (git blob sha1).
func TestBadSHA(t *testing.T) {
	for _, c := range []struct{ file, kind string }{{"model.safetensors", "sha256"}, {"config.json", "git blob sha1"}} {
		t.Run(c.file, func(t *testing.T) {
			srv := hubtest.New(t, "")
			files := fixtureFiles(t)
			srv.Push("bertlab/tiny", "main", files)
			srv.Corrupt(files[c.file])
			cache := t.TempDir()
			_, err := client(srv, cache, nil).Download(context.Background(), ref(t, "bertlab/tiny"))
			mustContain(t, err, "bertlab/tiny@main", c.file, c.kind, "corrupt")
			blobs, _ := os.ReadDir(filepath.Join(cache, "models--bertlab--tiny", "blobs"))
			for _, b := range blobs {
				if strings.Contains(b.Name(), hubtest.SHA256(files[c.file])) || strings.Contains(b.Name(), hubtest.GitBlobSHA1(files[c.file])) {
					t.Errorf("%s left in the cache", b.Name())
				}
			}
		})
	}
}

// TestResume cuts a download off half way and checks that it goes on from there with a
// Range request, within the run and in a later run (a .incomplete left by a crash).
func TestResume(t *testing.T) {
	files := fixtureFiles(t)
	model := files["model.safetensors"]
	half := int64(len(model) / 2)
	t.Run("cut connection", func(t *testing.T) {
		srv := hubtest.New(t, "")
		srv.Push("bertlab/tiny", "main", files)
		srv.CutAfter(model, half)
		var progress bytes.Buffer
		s, err := client(srv, t.TempDir(), &progress).Download(context.Background(), ref(t, "bertlab/tiny"))
		if err != nil {
			t.Fatal(err)
		}
		checkRanges(t, srv, model, []string{"", "bytes=" + itoa(half) + "-"})
		if got, _ := os.ReadFile(filepath.Join(s.Dir, "model.safetensors")); !bytes.Equal(got, model) {
			t.Error("resumed file differs")
		}
		if !strings.Contains(progress.String(), "resuming") {
			t.Errorf("progress should say it resumes:\n%s", progress.String())
		}
	})
	t.Run("left by an earlier run", func(t *testing.T) {
		srv := hubtest.New(t, "")
		srv.Push("bertlab/tiny", "main", files)
		cache := t.TempDir()
		blobs := filepath.Join(cache, "models--bertlab--tiny", "blobs")
		os.MkdirAll(blobs, 0o755)
		third := int64(len(model) / 3)
		if err := os.WriteFile(filepath.Join(blobs, hubtest.SHA256(model)+".incomplete"), model[:third], 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := client(srv, cache, nil).Download(context.Background(), ref(t, "bertlab/tiny"))
		if err != nil {
			t.Fatal(err)
		}
		checkRanges(t, srv, model, []string{"bytes=" + itoa(third) + "-"})
		if s.Fetched != int64(len(model))-third+int64(len(files["config.json"])+len(files["vocab.txt"])) {
			t.Errorf("fetched %d bytes", s.Fetched)
		}
		if got, _ := os.ReadFile(filepath.Join(s.Dir, "model.safetensors")); !bytes.Equal(got, model) {
			t.Error("resumed file differs")
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// checkRanges checks the Range headers of the storage server's GETs of data.
func checkRanges(t *testing.T, srv *hubtest.Server, data []byte, want []string) {
	t.Helper()
	var got []string
	for _, r := range srv.Gets() {
		if r.Server == "cdn" && strings.HasSuffix(r.Path, hubtest.SHA256(data)) {
			got = append(got, r.Range)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("storage GETs with Range %q, want %q", got, want)
	}
}

// TestRevisions checks that a commit hash, a branch, a tag and a branch with '/' in its
// name each get their own files, and that refs/ records where names pointed.
func TestRevisions(t *testing.T) {
	srv := hubtest.New(t, "")
	files := fixtureFiles(t)
	v1 := map[string][]byte{"config.json": files["config.json"], "model.safetensors": files["model.safetensors"]}
	c1 := srv.Push("bertlab/tiny", "v1.0", v1)
	v2 := map[string][]byte{"config.json": bytes.Replace(files["config.json"], []byte("{"), []byte("{\"note\": 2, "), 1), "model.safetensors": files["model.safetensors"], "vocab.txt": files["vocab.txt"]}
	c2 := srv.Push("bertlab/tiny", "main", v2)
	c3 := srv.Push("bertlab/tiny", "refs/pr/1", v1)
	cache := t.TempDir()
	ctx := context.Background()
	for _, c := range []struct {
		id, commit, config string
		files              []string
	}{
		{"bertlab/tiny@" + c1, c1, string(v1["config.json"]), []string{"config.json", "model.safetensors"}},
		{"bertlab/tiny", c2, string(v2["config.json"]), []string{"config.json", "model.safetensors", "vocab.txt"}},
		{"bertlab/tiny@v1.0", c1, string(v1["config.json"]), []string{"config.json", "model.safetensors"}},
		{"bertlab/tiny@refs/pr/1", c3, string(v1["config.json"]), []string{"config.json", "model.safetensors"}},
	} {
		s, err := client(srv, cache, nil).Download(ctx, ref(t, c.id))
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if s.Commit != c.commit || !slices.Equal(s.Files, c.files) {
			t.Errorf("%s: commit %s files %v, want %s %v", c.id, s.Commit, s.Files, c.commit, c.files)
		}
		if b, _ := os.ReadFile(filepath.Join(s.Dir, "config.json")); string(b) != c.config {
			t.Errorf("%s: config.json of the wrong commit", c.id)
		}
	}
	for name, want := range map[string]string{"main": c2, "v1.0": c1, "refs/pr/1": c3} {
		if b, _ := os.ReadFile(filepath.Join(cache, "models--bertlab--tiny", "refs", filepath.FromSlash(name))); string(b) != want {
			t.Errorf("refs/%s = %q, want %s", name, b, want)
		}
	}
	// Every file after config.json is asked for at the commit config.json came from.
	for _, r := range srv.Requests() {
		if r.Server == "hub" && !strings.Contains(r.Path, "config.json") && !strings.Contains(r.Path, "/resolve/"+c1+"/") && !strings.Contains(r.Path, "/resolve/"+c2+"/") && !strings.Contains(r.Path, "/resolve/"+c3+"/") {
			t.Errorf("%s %s: not pinned to a commit", r.Method, r.Path)
		}
	}
}

// TestHubErrors checks the errors of a missing repository, revision or file, a gated
// repository with no token, a wrong one and the right one, and a repository without
// safetensors weights: each names the repository, the revision and the file.
func TestHubErrors(t *testing.T) {
	srv := hubtest.New(t, "hf_secret")
	files := fixtureFiles(t)
	srv.Push("bertlab/tiny", "main", files)
	srv.Push("bertlab/gated", "main", files)
	srv.Gate("bertlab/gated")
	srv.Push("bertlab/noconfig", "main", map[string][]byte{"model.safetensors": files["model.safetensors"]})
	srv.Push("bertlab/pytorch", "main", map[string][]byte{"config.json": files["config.json"], "pytorch_model.bin": []byte("pickle")})
	ctx := context.Background()
	tests := []struct {
		id, token string
		wants     []string
	}{
		{"bertlab/missing", "", []string{"bertlab/missing@main", "config.json", "401", "HF_TOKEN"}},
		{"bertlab/missing", "hf_secret", []string{"bertlab/missing@main", "404", "no such repository"}},
		{"bertlab/tiny@nope", "", []string{"bertlab/tiny@nope", "config.json", "no such revision"}},
		{"bertlab/noconfig", "", []string{"bertlab/noconfig@main", "config.json", "404", "no such file"}},
		{"bertlab/pytorch", "", []string{"bertlab/pytorch@main", "no model.safetensors", "pytorch_model.bin"}},
		{"bertlab/gated", "", []string{"bertlab/gated@main", "config.json", "401", "gated", "HF_TOKEN"}},
		{"bertlab/gated", "hf_wrong", []string{"bertlab/gated@main", "config.json", "403", "accept"}},
	}
	for _, tc := range tests {
		t.Run(tc.id+" "+tc.token, func(t *testing.T) {
			c := hub.New(hub.Env{Endpoint: srv.URL, CacheDir: t.TempDir(), Token: tc.token}, nil)
			_, err := c.Download(ctx, ref(t, tc.id))
			mustContain(t, err, tc.wants...)
		})
	}
	n := len(srv.Requests())
	c := hub.New(hub.Env{Endpoint: srv.URL, CacheDir: t.TempDir(), Token: "hf_secret"}, nil)
	if _, err := c.Download(ctx, ref(t, "bertlab/gated")); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests()[n:] {
		if want := map[string]string{"hub": "Bearer hf_secret", "cdn": ""}[r.Server]; r.Auth != want {
			t.Errorf("%s %s %s: Authorization %q, want %q", r.Server, r.Method, r.Path, r.Auth, want)
		}
	}
}

// TestShardedDownload fetches a model saved in two shards and checks it loads to the same
// parameters as the single file.
func TestShardedDownload(t *testing.T) {
	single, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	f, err := hf.Open(filepath.Join(fixture, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	names := f.Names()
	files := fixtureFiles(t)
	delete(files, "model.safetensors")
	index := `{"metadata": {"total_size": 0}, "weight_map": {`
	dir := t.TempDir()
	for i, part := range [][]string{names[:len(names)/2], names[len(names)/2:]} {
		shard := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[i]
		var ts []hf.Tensor
		for _, n := range part {
			d, shape, err := f.Float32(n)
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, hf.Tensor{Name: n, Shape: shape, Data: d})
			index += `"` + n + `": "` + shard + `", `
		}
		if err := hf.Write(filepath.Join(dir, shard), ts, hf.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		files[shard], _ = os.ReadFile(filepath.Join(dir, shard))
	}
	f.Close()
	files["model.safetensors.index.json"] = []byte(strings.TrimSuffix(index, ", ") + "}}")
	srv := hubtest.New(t, "")
	srv.Push("bertlab/sharded", "main", files)
	s, err := client(srv, t.TempDir(), nil).Download(context.Background(), ref(t, "bertlab/sharded"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "vocab.txt"}
	if !slices.Equal(s.Files, want) {
		t.Errorf("files %v, want %v", s.Files, want)
	}
	got, err := hf.LoadFolder(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ps := got.Model.Params()
	for i, p := range single.Model.Params() {
		if !slices.Equal(p.T.Data, ps[i].T.Data) {
			t.Errorf("%s differs", p.Name)
		}
	}
	// A shard the Hub lacks is an error naming it.
	delete(files, "model-00002-of-00002.safetensors")
	srv.Push("bertlab/sharded", "broken", files)
	_, err = client(srv, t.TempDir(), nil).Download(context.Background(), ref(t, "bertlab/sharded@broken"))
	mustContain(t, err, "bertlab/sharded@broken", "model-00002-of-00002.safetensors", "no such file")
}

// TestConcurrentDownloads runs two downloads of one model into one cache at once: the lock
// lets one process write each blob, so the weights are fetched once and both succeed.
func TestConcurrentDownloads(t *testing.T) {
	srv := hubtest.New(t, "")
	files := fixtureFiles(t)
	srv.Push("bertlab/tiny", "main", files)
	cache := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = client(srv, cache, nil).Download(context.Background(), ref(t, "bertlab/tiny"))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, r := range srv.Gets() {
		if r.Server == "cdn" && strings.HasSuffix(r.Path, hubtest.SHA256(files["model.safetensors"])) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the weights were fetched %d times, want 1", n)
	}
}
