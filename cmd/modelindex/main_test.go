package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
}
