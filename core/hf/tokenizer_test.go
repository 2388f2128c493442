package hf

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestFolderTokenizers loads each family's fixture folder with its tokenizer files, writes it
// back with SaveFolder and loads the copy: the same kind of tokenizer, the same files byte for
// byte, the same ids for the fixture's sentences as HuggingFace tokenizers gave.
func TestFolderTokenizers(t *testing.T) {
	kinds := map[string]string{"distilbert": tokenizer.KindWordPiece, "electra": tokenizer.KindWordPiece,
		"roberta": tokenizer.KindBPE, "albert": tokenizer.KindUnigram, "deberta": tokenizer.KindUnigram}
	for _, family := range familyfixture.Families {
		t.Run(family, func(t *testing.T) {
			dir := familyfixture.Dir(family)
			f, err := LoadFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			if f.Encoder == nil || f.Encoder.Kind() != kinds[family] {
				t.Fatalf("encoder %v, want %s", f.Encoder, kinds[family])
			}
			if (f.Tokenizer != nil) != (kinds[family] == tokenizer.KindWordPiece) {
				t.Errorf("WordPiece tokenizer %v for %s", f.Tokenizer != nil, kinds[family])
			}
			out := t.TempDir()
			if err := SaveFolder(out, f.Model, f.Tokenizer, SaveOptions{TokenizerFiles: f.TokenizerFiles}); err != nil {
				t.Fatal(err)
			}
			g, err := LoadFolder(out)
			if err != nil {
				t.Fatal(err)
			}
			if g.Encoder == nil || g.Encoder.Kind() != f.Encoder.Kind() {
				t.Fatalf("copy's encoder %v", g.Encoder)
			}
			if len(f.TokenizerFiles) == 0 {
				t.Fatal("no tokenizer files kept")
			}
			for name, data := range f.TokenizerFiles {
				orig, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || !bytes.Equal(orig, data) {
					t.Errorf("%s: kept %d bytes, the folder's %d (%v)", name, len(data), len(orig), err)
				}
				if f.Tokenizer != nil {
					continue // SaveDir writes vocab.txt and tokenizer_config.json itself
				}
				if copied, err := os.ReadFile(filepath.Join(out, name)); err != nil || !bytes.Equal(copied, data) {
					t.Errorf("%s: not copied as it was (%v)", name, err)
				}
			}
			fx, err := familyfixture.Read(family)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range fx.Items {
				enc, err := g.Encoder.Encode(it.Text, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(enc.IDs, it.IDs) {
					t.Errorf("%q: ids %v, HF %v", it.Text, enc.IDs, it.IDs)
				}
			}
		})
	}
}

// TestFolderTokenizerErrors: a tokenizer larger than vocab_size and a broken tokenizer file are
// errors naming the folder; a folder without tokenizer files loads without one.
func TestFolderTokenizerErrors(t *testing.T) {
	model := filepath.Join("..", "bert", "testdata", "roberta-tiny-random") // vocab_size 120
	bpe := familyfixture.Dir("roberta")
	link := func(dst string, files map[string]string) {
		for name, src := range files {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := map[string]string{ConfigFile: filepath.Join(model, ConfigFile), WeightsFile: filepath.Join(model, WeightsFile)}

	bare := t.TempDir()
	link(bare, base)
	f, err := LoadFolder(bare)
	if err != nil || f.Encoder != nil || f.Tokenizer != nil {
		t.Errorf("no tokenizer files: %v, encoder %v", err, f)
	}

	big := t.TempDir()
	link(big, base)
	link(big, map[string]string{"vocab.json": filepath.Join(bpe, "vocab.json"), "merges.txt": filepath.Join(bpe, "merges.txt")})
	if _, err := LoadFolder(big); err == nil || !strings.Contains(err.Error(), "bpe tokenizer has 1001 tokens but config.json vocab_size is 120") || !strings.Contains(err.Error(), big) {
		t.Errorf("vocabulary larger than vocab_size: %v", err)
	}

	broken := t.TempDir()
	link(broken, base)
	if err := os.WriteFile(filepath.Join(broken, "tokenizer.json"), []byte(`{"model": {"type": "Unigram", "vocab": 3}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFolder(broken); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("broken tokenizer.json: %v", err)
	}
}
