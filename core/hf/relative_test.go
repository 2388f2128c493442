package hf_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// relKQDir is a HF folder of a relative_key_query model (HF 4.x), with its distance embeddings.
const relKQDir = "../bert/testdata/bert-tiny-relkq"

// TestRelativeFolderRoundTrip loads the relative_key_query fixture (every tensor used, the
// distance embeddings by their HF names), saves it and loads it back: the config keeps the
// type and the saved file holds the same tensors.
func TestRelativeFolderRoundTrip(t *testing.T) {
	f, err := hf.LoadFolder(relKQDir)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Model
	if m.Config.PositionEmbeddingType != bert.PositionRelativeKeyQuery {
		t.Fatalf("position_embedding_type %q", m.Config.PositionEmbeddingType)
	}
	if len(f.Report.Ignored) != 0 {
		t.Errorf("tensors ignored: %v", f.Report.Ignored)
	}
	for l, layer := range m.Layers {
		if layer.Distance == nil || layer.Distance.Shape[0] != 63 || layer.Distance.Shape[1] != 16 {
			t.Fatalf("layer %d: distance embedding %v, want [63 16]", l, layer.Distance)
		}
	}
	dir := filepath.Join(t.TempDir(), "saved")
	if err := hf.SaveFolder(dir, m, f.Tokenizer, hf.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, hf.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), `"position_embedding_type": "relative_key_query"`) {
		t.Errorf("saved config.json lacks the position type:\n%s", cfg)
	}
	saved, err := hf.Open(filepath.Join(dir, hf.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer saved.Close()
	for _, name := range []string{"bert.encoder.layer.0.attention.self.distance_embedding.weight", "bert.encoder.layer.1.attention.self.distance_embedding.weight"} {
		if !slices.Contains(saved.Names(), name) {
			t.Errorf("saved file lacks %s", name)
		}
	}
	back, err := hf.LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, want := back.Model.Params(), m.Params()
	if len(got) != len(want) {
		t.Fatalf("%d params back, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || approx.MaxAbsDiff(got[i].T.Data, want[i].T.Data) != 0 {
			t.Fatalf("param %s did not round-trip", want[i].Name)
		}
	}
}

// TestRelativeFolderErrors checks what a mismatch between config and tensors gives: a missing
// distance embedding is an error naming it and its shape; distance embeddings under an
// absolute config are listed as ignored (as transformers lists unused weights).
func TestRelativeFolderErrors(t *testing.T) {
	src, err := hf.Open(filepath.Join(relKQDir, hf.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var ts []hf.Tensor
	for _, n := range src.Names() {
		d, shape, err := src.Float32(n)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, hf.Tensor{Name: n, Shape: shape, Data: d})
	}
	cfg, err := os.ReadFile(filepath.Join(relKQDir, hf.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	folder := func(t *testing.T, cfg string, ts []hf.Tensor) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, hf.ConfigFile), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := hf.Write(filepath.Join(dir, hf.WeightsFile), ts, hf.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	t.Run("missing distance embedding", func(t *testing.T) {
		const gone = "bert.encoder.layer.1.attention.self.distance_embedding.weight"
		kept := slices.DeleteFunc(slices.Clone(ts), func(x hf.Tensor) bool { return x.Name == gone })
		_, err := hf.LoadFolder(folder(t, string(cfg), kept))
		if err == nil || !strings.Contains(err.Error(), gone) || !strings.Contains(err.Error(), "[63,16]") {
			t.Errorf("error %v should name %s and its shape [63,16]", err, gone)
		}
	})
	t.Run("absolute config", func(t *testing.T) {
		abs := strings.Replace(string(cfg), "relative_key_query", "absolute", 1)
		f, err := hf.LoadFolder(folder(t, abs, ts))
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Report.Ignored) != 2 || !strings.Contains(strings.Join(f.Report.Ignored, " "), "distance_embedding") {
			t.Errorf("ignored %v, want the two distance embeddings", f.Report.Ignored)
		}
	})
	t.Run("unknown type", func(t *testing.T) {
		bad := strings.Replace(string(cfg), "relative_key_query", "rotary", 1)
		_, err := hf.LoadFolder(folder(t, bad, ts))
		if err == nil || !strings.Contains(err.Error(), "rotary") {
			t.Errorf("error %v should name the unknown type", err)
		}
	})
}
