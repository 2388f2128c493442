package dump

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

func readFile(t *testing.T, path string) map[string][]float32 {
	t.Helper()
	f, err := hf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float32{}
	for _, n := range f.Names() {
		v, _, err := f.Float32(n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = v
	}
	return out
}

// TestDumpFamilies dumps the family fixtures of scripts/familyref from their inputs.json: every
// tensor of the reference's outputs and intermediates comes out under HF's name and matches it,
// and the gradients are named as the family's checkpoints name the parameters.
func TestDumpFamilies(t *testing.T) {
	tests := []struct {
		dir     string
		grads   bool
		wantGra []string // gradient names that must be there
	}{
		{"../../core/bert/testdata/distilbert-tiny-random", true, []string{"distilbert.transformer.layer.2.ffn.lin1.weight", "vocab_projector.weight", "vocab_projector.bias"}},
		{"../../core/bert/testdata/distilbert-tiny-sinusoidal", false, nil},
		{"../../core/bert/testdata/roberta-tiny-random", true, []string{"roberta.embeddings.token_type_embeddings.weight", "lm_head.decoder.weight", "lm_head.bias"}},
		{"../../core/bert/testdata/albert-tiny-random", false, nil},
		{"../../core/bert/testdata/albert-tiny-groups", false, nil},
		{"../../core/bert/testdata/electra-tiny-discriminator", false, nil},
		{"../../core/bert/testdata/deberta-tiny-random", false, nil},
		{"../../core/bert/testdata/deberta-tiny-nobuckets", false, nil},
		{"../../core/bert/testdata/electra-tiny-generator", true, []string{"electra.encoder.layer.0.attention.self.query.weight", "generator_lm_head.weight", "generator_lm_head.bias"}},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			f, err := hf.LoadFolder(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			inputs := filepath.Join(tc.dir, "inputs.json")
			in, err := ReadInputs(inputs)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			o := Options{Out: filepath.Join(tmp, "out.safetensors"), Intermediates: filepath.Join(tmp, "inter.safetensors")}
			if tc.grads {
				o.Grads = filepath.Join(tmp, "grads.safetensors")
			}
			if err := Write(f.Model, in, inputs, o, io.Discard); err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]string{{o.Out, "outputs.safetensors"}, {o.Intermediates, "intermediates.safetensors"}} {
				got := readFile(t, pair[0])
				for name, want := range readFile(t, filepath.Join(tc.dir, pair[1])) {
					g, ok := got[name]
					if !ok {
						t.Errorf("%s: not dumped", name)
						continue
					}
					atol := 1e-5
					if strings.HasSuffix(name, "logits") || name == "loss" {
						atol = 1e-4
					}
					if err := approx.Check(name, g, want, atol, 1e-4); err != nil {
						t.Error(err)
					}
				}
			}
			if tc.grads {
				got := readFile(t, o.Grads)
				for _, n := range tc.wantGra {
					if _, ok := got[n]; !ok {
						names := make([]string, 0, len(got))
						for k := range got {
							names = append(names, k)
						}
						slices.Sort(names)
						t.Errorf("gradient %q not written; have %q", n, names)
					}
				}
			}
		})
	}
}
