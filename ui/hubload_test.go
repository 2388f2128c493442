package ui

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/hub/hubtest"
)

// filesEngine is the native engine with LoadFiles loading the files through hf.LoadFS, as
// the browser's engine does, and keeping them for the test to look at.
type filesEngine struct {
	*nativeEngine
	got []LocalFile
}

func (e *filesEngine) LoadFiles(files []LocalFile) (*ModelInfo, error) {
	e.got = files
	mem := fstest.MapFS{}
	for _, f := range files {
		mem[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	fo, err := hf.LoadFS(mem, "")
	if err != nil {
		return nil, err
	}
	info := &ModelInfo{Parameters: fo.Model.NumParams(), Heads: fo.Model.HeadNames()}
	info.Config.NumHiddenLayers = fo.Model.Config.NumHiddenLayers
	info.Config.HiddenSize = fo.Model.Config.HiddenSize
	return info, nil
}

// httpFetch is hubFetch over net/http, for tests without a browser.
func httpFetch(url string, progress func(int64)) (hubFile, error) {
	resp, err := http.Get(url)
	if err != nil {
		return hubFile{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return hubFile{status: resp.StatusCode}, nil
	}
	b, err := io.ReadAll(resp.Body)
	if progress != nil {
		progress(int64(len(b)))
	}
	return hubFile{status: 200, file: LocalFile{Data: b, Size: int64(len(b))}}, err
}

// TestHubLoad loads a model by its Hub id from a local Hub: the engine gets the Hub's files
// byte for byte and the model loads; a missing repository, a bad id, a gated repository and
// sharded weights each get an error naming the id and the file, and keep the model loaded.
func TestHubLoad(t *testing.T) {
	hubFetch = httpFetch
	defer func() { hubFetch = browserFetch }()
	const fixture = "../core/bert/testdata/bert-tiny-random"
	files := map[string][]byte{}
	for _, n := range []string{"config.json", "model.safetensors", "vocab.txt"} {
		b, err := os.ReadFile(filepath.Join(fixture, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	srv := hubtest.New(t, "")
	commit := srv.Push("bertlab/tiny", "main", files)
	srv.Push("bertlab/gated", "main", files)
	srv.Gate("bertlab/gated")
	// The fixture saved in two shards, and a repository whose index names a shard it lacks.
	ref, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	total := 4 * ref.Model.NumParams() // bytes of F32 weights
	shardDir := t.TempDir()
	if err := hf.SaveFolder(shardDir, ref.Model, ref.Tokenizer, hf.SaveOptions{MaxShardSize: total/2 + 1}); err != nil {
		t.Fatal(err)
	}
	shardFiles := map[string][]byte{}
	ents, err := os.ReadDir(shardDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if shardFiles[e.Name()], err = os.ReadFile(filepath.Join(shardDir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if shardFiles[hf.ShardFile(2, 2)] == nil {
		t.Fatalf("the sharded fixture has %d files, want two shards", len(shardFiles))
	}
	srv.Push("bertlab/sharded", "main", shardFiles)
	srv.Push("bertlab/shardless", "main", map[string][]byte{"config.json": files["config.json"], "model.safetensors.index.json": []byte(`{"weight_map":{"a":"model-00001-of-00001.safetensors"}}`)})

	eng := &filesEngine{nativeEngine: newNativeEngine(t)}
	a := &App{Eng: eng}
	a.Start(Route{View: ViewModels}, false)
	h := &HubLoad{App: a, Endpoint: srv.URL, ID: "bertlab/tiny"}
	h.load()
	if h.Err != "" || a.LoadErr != "" || !a.Loaded {
		t.Fatalf("hub error %q, load error %q", h.Err, a.LoadErr)
	}
	if a.Info.Config.NumHiddenLayers != 2 || a.Info.Config.HiddenSize != 64 || a.Model.Name != "tiny (yours)" {
		t.Errorf("loaded %+v as %q", a.Info.Config, a.Model.Name)
	}
	var names []string
	for _, f := range eng.got {
		names = append(names, f.Name)
		if !bytes.Equal(f.Data, files[f.Name]) {
			t.Errorf("%s: not the Hub's bytes", f.Name)
		}
	}
	if strings.Join(names, " ") != "config.json model.safetensors vocab.txt" {
		t.Errorf("the engine got %v", names)
	}
	// Weights in shards: the index, then each shard, byte for byte, and the model loads.
	h.ID = "bertlab/sharded"
	h.load()
	if h.Err != "" || a.LoadErr != "" || a.Info.Parameters != ref.Model.NumParams() {
		t.Fatalf("sharded: hub error %q, load error %q", h.Err, a.LoadErr)
	}
	names = nil
	for _, f := range eng.got {
		names = append(names, f.Name)
		if !bytes.Equal(f.Data, shardFiles[f.Name]) {
			t.Errorf("sharded: %s: not the Hub's bytes", f.Name)
		}
	}
	if want := "config.json model.safetensors.index.json vocab.txt tokenizer_config.json model-00001-of-00002.safetensors model-00002-of-00002.safetensors"; strings.Join(names, " ") != want {
		t.Errorf("sharded: the engine got %v, want %s", names, want)
	}
	info := a.Info
	for _, c := range []struct{ id, want string }{
		{"bertlab/missing", "bertlab/missing@main: config.json: HTTP 401"},
		{"bertlab/tiny@v9", "bertlab/tiny@v9: config.json: not found"},
		{"bertlab/gated", "gated or private"},
		{"bertlab/shardless", "model-00001-of-00001.safetensors: not in the repository"},
		{"not an id", "want org/name"},
	} {
		h.ID = c.id
		h.load()
		if !strings.Contains(h.Err, c.want) || a.Info != info {
			t.Errorf("%s: error %q, want %q; model kept: %v", c.id, h.Err, c.want, a.Info == info)
		}
	}

	// The files come at the commit the repository info named, and each was checked.
	pinned := 0
	for _, r := range srv.Requests() {
		if r.Server == "hub" && strings.HasPrefix(r.Path, "/bertlab/tiny/resolve/main/") {
			t.Errorf("%s %s: not pinned to the commit", r.Method, r.Path)
		}
		if strings.HasPrefix(r.Path, "/bertlab/tiny/resolve/"+commit+"/") {
			pinned++
		}
	}
	if pinned != 3 {
		t.Errorf("%d requests at the commit, want 3 (config.json, model.safetensors, vocab.txt)", pinned)
	}
	for _, c := range []struct{ file, want string }{
		{"model.safetensors", "model.safetensors: sha256 "},
		{"vocab.txt", "vocab.txt: sha256 "}, // over 10 kB: in LFS
		{"config.json", "config.json: git blob sha1 "},
	} {
		bad := hubtest.New(t, "")
		bad.Push("bertlab/tiny", "main", files)
		bad.Corrupt(files[c.file])
		h := &HubLoad{App: a, Endpoint: bad.URL, ID: "bertlab/tiny"}
		h.load()
		if !strings.Contains(h.Err, c.want) || !strings.Contains(h.Err, "corrupt") || a.Info != info {
			t.Errorf("corrupt %s: error %q, want %q", c.file, h.Err, c.want)
		}
	}
	// A mirror without the repository info: the files are probed, and load.
	mirror := hubtest.New(t, "")
	mirror.Push("bertlab/tiny", "main", files)
	mirror.NoAPI()
	h2 := &HubLoad{App: a, Endpoint: mirror.URL, ID: "bertlab/tiny"}
	h2.load()
	if h2.Err != "" || a.LoadErr != "" || a.Info == info {
		t.Errorf("from a mirror without the API: %q %q", h2.Err, a.LoadErr)
	}

	// The view renders the form without a browser, with the endpoint and the error.
	var buf bytes.Buffer
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticrender.New(&buf).Render(env.RunBuild(h)); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, w := range []string{`data-role="hub-id"`, `value="` + srv.URL + `"`, `data-role="hub-error"`} {
		if !strings.Contains(html, w) {
			t.Errorf("render lacks %s:\n%s", w, html)
		}
	}
}
