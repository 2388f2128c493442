package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer/auto"
	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestIndexFamilies: the index lists each family folder's tokenizer files (what the page's
// worker fetches), and a folder without any is an error.
func TestIndexFamilies(t *testing.T) {
	dir := t.TempDir()
	copyDir := func(src, dst string, skip ...string) {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if slices.Contains(skip, e.Name()) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string][]string{
		"distilbert": {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"},
		"roberta":    {"config.json", "model.safetensors", "vocab.json", "merges.txt"},
		"albert":     {"config.json", "model.safetensors", "spiece.model", "tokenizer_config.json"},
		"deberta":    {"config.json", "model.safetensors", "tokenizer.json"},
	}
	for family := range want {
		copyDir(familyfixture.Dir(family), filepath.Join(dir, family))
	}
	// A BERT folder saved in shards: the index, then its shards, in the order the worker
	// fetches them.
	bert, err := hf.LoadFolder("../../core/bert/testdata/bert-tiny-random")
	if err != nil {
		t.Fatal(err)
	}
	total := 4 * bert.Model.NumParams() // bytes of F32 weights
	if err := hf.SaveFolder(filepath.Join(dir, "sharded"), bert.Model, bert.Tokenizer, hf.SaveOptions{MaxShardSize: total/2 + 1}); err != nil {
		t.Fatal(err)
	}
	want["sharded"] = []string{"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "vocab.txt", "tokenizer_config.json"}
	idx, err := Index(dir, "roberta")
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Models) != len(want) {
		t.Fatalf("%d models, want %d", len(idx.Models), len(want))
	}
	for _, m := range idx.Models {
		if !slices.Equal(m.Files, want[m.Name]) {
			t.Errorf("%s: files %v, want %v", m.Name, m.Files, want[m.Name])
		}
	}
	copyDir(familyfixture.Dir("roberta"), filepath.Join(dir, "bare"), "vocab.json", "merges.txt")
	if _, err := Index(dir, ""); !errors.Is(err, auto.ErrNone) {
		t.Errorf("a folder without tokenizer files: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "bare")); err != nil {
		t.Fatal(err)
	}
	copyDir(familyfixture.Dir("roberta"), filepath.Join(dir, "noweights"), "model.safetensors")
	if _, err := Index(dir, ""); err == nil || !strings.Contains(err.Error(), "noweights") || !strings.Contains(err.Error(), "no model.safetensors") {
		t.Errorf("a folder without weights: %v, want an error naming it and model.safetensors", err)
	}
}
