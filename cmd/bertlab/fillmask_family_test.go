package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestFillMaskFamilies runs `bertlab fill-mask --json` on each family's fixture folder, and again
// on the folder `bertlab convert` wrote from it (tokenizer files kept), against the PyTorch
// reference's top 5; the text output shows readable words.
func TestFillMaskFamilies(t *testing.T) {
	for _, family := range familyfixture.Families {
		t.Run(family, func(t *testing.T) {
			fx, err := familyfixture.Read(family)
			if err != nil {
				t.Fatal(err)
			}
			dir := familyfixture.Dir(family)
			conv := filepath.Join(t.TempDir(), family)
			if _, stderr, code := bertlab(t, "", "convert", "--model", dir, "--out", conv, "--dtype", "F32"); code != 0 {
				t.Fatalf("convert: exit %d: %s", code, stderr)
			}
			for _, model := range []string{dir, conv} {
				for _, it := range fx.Items {
					stdout, stderr, code := bertlab(t, "", "fill-mask", "--model", model, "--json", it.Text)
					if code != 0 {
						t.Fatalf("%s: exit %d: %s", model, code, stderr)
					}
					if err := familyfixture.Compare([]byte(stdout), it); err != nil {
						t.Errorf("%s: %v", model, err)
					}
				}
			}
			stdout, stderr, code := bertlab(t, "", "fill-mask", "--model", dir, fx.Items[0].Text)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.ContainsAny(stdout, "Ġ▁") {
				t.Errorf("text output with tokenizer marks:\n%s", stdout)
			}
			for _, name := range []string{"tokenizer.json", "vocab.json", "merges.txt", "spiece.model"} {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					continue
				}
				a, _ := os.ReadFile(filepath.Join(dir, name))
				b, err := os.ReadFile(filepath.Join(conv, name))
				if err != nil || string(a) != string(b) {
					t.Errorf("convert did not keep %s (%v)", name, err)
				}
			}
		})
	}
}

// TestTokenizeFamilies: `bertlab tokenize` reads any family's tokenizer files and gives
// HuggingFace tokenizers' ids for the fixture sentences.
func TestTokenizeFamilies(t *testing.T) {
	for _, family := range familyfixture.Families {
		fx, err := familyfixture.Read(family)
		if err != nil {
			t.Fatal(err)
		}
		var in strings.Builder
		for _, it := range fx.Items {
			in.WriteString(it.Text + "\n")
		}
		stdout, stderr, code := bertlab(t, in.String(), "tokenize", "--model", familyfixture.Dir(family))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", family, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != len(fx.Items) {
			t.Fatalf("%s: %d lines for %d texts", family, len(lines), len(fx.Items))
		}
		for i, it := range fx.Items {
			var got struct {
				IDs []int `json:"input_ids"`
			}
			if err := json.Unmarshal([]byte(lines[i]), &got); err != nil || !slices.Equal(got.IDs, it.IDs) {
				t.Errorf("%s %q: ids %v (%v), HF %v", family, it.Text, got.IDs, err, it.IDs)
			}
		}
	}
}
