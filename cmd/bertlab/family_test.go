package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The family fixtures of scripts/familyref.
var familyFixtures = []string{
	"../../core/bert/testdata/distilbert-tiny-random",
	"../../core/bert/testdata/distilbert-tiny-sinusoidal",
	"../../core/bert/testdata/roberta-tiny-random",
	"../../core/bert/testdata/albert-tiny-random",
	"../../core/bert/testdata/albert-tiny-groups",
	"../../core/bert/testdata/electra-tiny-discriminator",
	"../../core/bert/testdata/electra-tiny-generator",
	"../../core/bert/testdata/deberta-tiny-random",
	"../../core/bert/testdata/deberta-tiny-nobuckets",
}

// TestDumpFamiliesMatchFixtures: bertlab dump of each family fixture writes exactly the
// reference's outputs (HF's names: logits and loss for …ForMaskedLM) and intermediates.
func TestDumpFamiliesMatchFixtures(t *testing.T) {
	for _, dir := range familyFixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			tmp := t.TempDir()
			out, inter := filepath.Join(tmp, "out.safetensors"), filepath.Join(tmp, "inter.safetensors")
			_, stderr, code := bertlab(t, "", "dump", "--model", dir, "--inputs", filepath.Join(dir, "inputs.json"), "--out", out, "--intermediates", inter)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			tol := func(name string) (float64, float64) {
				if strings.HasSuffix(name, "logits") || name == "loss" {
					return 1e-4, 1e-4
				}
				return 1e-5, 1e-4
			}
			matchSafetensors(t, out, filepath.Join(dir, "outputs.safetensors"), tol)
			matchSafetensors(t, inter, filepath.Join(dir, "intermediates.safetensors"), tol)
		})
	}
}

// TestFillMaskDistilBERT runs fill-mask on the DistilBERT fixture given a WordPiece vocabulary
// of its size (ids 0-4 are [PAD], [UNK], [CLS], [SEP], [MASK], as the fixture's inputs use them).
func TestFillMaskDistilBERT(t *testing.T) {
	src := familyFixtures[0]
	dir := t.TempDir()
	for _, name := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for i := len(vocab); i < 120; i++ {
		vocab = append(vocab, fmt.Sprintf("w%d", i))
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(strings.Join(vocab, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := bertlab(t, "", "fill-mask", "--model", dir, "--json", "--top-k", "4", "--pair", "w9 w10", "w17 [MASK] w55")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Masks []struct {
			Position    int `json:"position"`
			Predictions []struct {
				Token string  `json:"token"`
				Score float64 `json:"score"`
			} `json:"predictions"`
		} `json:"masks"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(res.Masks) != 1 || res.Masks[0].Position != 2 || len(res.Masks[0].Predictions) != 4 {
		t.Fatalf("fill-mask: %s", stdout)
	}
}
