package ui

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"
)

func TestPickModelFiles(t *testing.T) {
	got, err := PickModelFiles([]LocalFile{
		{Name: "bert/config.json"}, {Name: "bert/README.md"}, {Name: "bert/model.safetensors"},
		{Name: "bert/vocab.txt"}, {Name: "bert/tokenizer_config.json"}, {Name: "bert/pytorch_model.bin"},
	})
	if err != nil || len(got) != 4 {
		t.Fatalf("picked %v, %v", got, err)
	}
	if _, err := PickModelFiles([]LocalFile{{Name: "config.json"}, {Name: "vocab.txt"}}); err == nil || !strings.Contains(err.Error(), "model.safetensors") {
		t.Errorf("a folder without weights: %v", err)
	}
}

func TestCheckModelSize(t *testing.T) {
	// The fixture: the estimate is the engine's own count.
	cfg, err := os.ReadFile("../core/bert/testdata/bert-tiny-random/config.json")
	if err != nil {
		t.Fatal(err)
	}
	c, n, err := CheckModelSize(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := m.NumParams(); n != want {
		t.Errorf("estimate %d parameters, the model has %d", n, want)
	}
	// BERT-large loads; a 1B-parameter model is refused with the reason.
	if _, _, err := CheckModelSize([]byte(`{"vocab_size":30522,"hidden_size":1024,"num_hidden_layers":24,"num_attention_heads":16,"intermediate_size":4096,"max_position_embeddings":512,"type_vocab_size":2}`)); err != nil {
		t.Errorf("BERT-large: %v", err)
	}
	_, _, err = CheckModelSize([]byte(`{"vocab_size":30522,"hidden_size":2048,"num_hidden_layers":24,"num_attention_heads":16,"intermediate_size":8192,"max_position_embeddings":512,"type_vocab_size":2}`))
	if err == nil || !strings.Contains(err.Error(), "too large for the browser") {
		t.Errorf("a 1.2B model: %v", err)
	}
}

func TestLoadLocalKeepsModel(t *testing.T) {
	a := &App{Eng: newNativeEngine(t)}
	a.Start(Route{View: ViewModels}, false)
	info := a.Info
	cfg, _ := os.ReadFile("../core/bert/testdata/bert-tiny-random/config.json")
	a.LoadLocal([]LocalFile{{Name: "config.json", Data: cfg}, {Name: "model.safetensors", Data: []byte("junk")}, {Name: "vocab.txt", Data: []byte("a")}})
	if !strings.Contains(a.LoadErr, "model.safetensors") || a.Info != info || !a.Loaded {
		t.Errorf("a failed load: error %q, info kept %v", a.LoadErr, a.Info == info)
	}
	a.LoadLocal([]LocalFile{{Name: "config.json", Data: cfg}})
	if !strings.Contains(a.LoadErr, "missing model.safetensors, vocab.txt") {
		t.Errorf("missing files: %q", a.LoadErr)
	}

	// The view renders without a browser: the config, and the error.
	var buf bytes.Buffer
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	want := fmt.Sprintf(`data-key="layers">%d<`, a.Info.Config.NumHiddenLayers)
	if !strings.Contains(html, want) || !strings.Contains(html, `data-role="load-error"`) || strings.Contains(html, `id="text"`) {
		t.Errorf("static render of the models view: want %s and the error, no sentence box:\n%s", want, html)
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 207826: "207,826", 110106428: "110,106,428"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
	if got := localName([]LocalFile{{Name: "config.json", Path: "bert-tiny/config.json"}}); got != "bert-tiny (yours)" {
		t.Errorf("localName %q", got)
	}
}

// TestPickModelFilesNested: a folder dropped or picked whole, with subfolders and other
// files, gives the files of the shallowest folder that has all three needed ones, never a mix.
func TestPickModelFilesNested(t *testing.T) {
	f := func(p string) LocalFile { return LocalFile{Name: p[strings.LastIndex(p, "/")+1:], Path: p} }
	got, err := PickModelFiles([]LocalFile{
		f("bert/checkpoint-500/config.json"), f("bert/checkpoint-500/model.safetensors"), f("bert/checkpoint-500/vocab.txt"),
		f("bert/.git/config"), f("bert/README.md"), f("bert/onnx/model.safetensors"),
		f("bert/config.json"), f("bert/model.safetensors"), f("bert/vocab.txt"), f("bert/tokenizer_config.json"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, g := range got {
		paths = append(paths, g.Path)
	}
	if strings.Join(paths, " ") != "bert/config.json bert/model.safetensors bert/vocab.txt bert/tokenizer_config.json" {
		t.Errorf("picked %v", paths)
	}
	if n := localName(got); n != "bert (yours)" {
		t.Errorf("name %q", n)
	}

	// The top folder lacks the weights: the complete subfolder is taken whole.
	got, err = PickModelFiles([]LocalFile{f("run/config.json"), f("run/vocab.txt"), f("run/ckpt/config.json"), f("run/ckpt/model.safetensors"), f("run/ckpt/vocab.txt")})
	if err != nil || len(got) != 3 || got[0].Path != "run/ckpt/config.json" || got[2].Path != "run/ckpt/vocab.txt" || localName(got) != "ckpt (yours)" {
		t.Errorf("picked %+v, %v", got, err)
	}

	// No folder has everything: the error names what the top folder lacks, and the weights
	// of another format it has.
	_, err = PickModelFiles([]LocalFile{f("m/config.json"), f("m/vocab.txt"), f("m/pytorch_model.bin"), f("m/sub/vocab.txt")})
	if err == nil || !strings.Contains(err.Error(), "missing model.safetensors in m/") || !strings.Contains(err.Error(), "pytorch_model.bin") {
		t.Errorf("error %v", err)
	}
	// Weights in shards: the index and the shards go along; other safetensors files do not.
	got, err = PickModelFiles([]LocalFile{f("s/model-00002-of-00002.safetensors"), f("s/config.json"), f("s/model.safetensors.index.json"),
		f("s/vocab.txt"), f("s/model-00001-of-00002.safetensors"), f("s/adapter.safetensors"), f("s/pytorch_model.bin")})
	paths = nil
	for _, g := range got {
		paths = append(paths, g.Name)
	}
	if err != nil || strings.Join(paths, " ") != "config.json model.safetensors.index.json vocab.txt model-00001-of-00002.safetensors model-00002-of-00002.safetensors" {
		t.Errorf("sharded: picked %v, %v", paths, err)
	}
	if _, err := PickModelFiles(nil); err == nil || !strings.Contains(err.Error(), "missing config.json, model.safetensors, vocab.txt:") {
		t.Errorf("nothing dropped: %v", err)
	}
}
