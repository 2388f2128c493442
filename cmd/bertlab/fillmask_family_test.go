package main

import (
	"os"
	"path/filepath"
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
