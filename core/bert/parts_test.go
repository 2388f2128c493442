package bert_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// TestDisentangledParts splits every block's scores of the DeBERTa fixtures into c2c, c2p and
// p2c and compares each with scripts/familyref's parts.safetensors (PyTorch float64, each term
// computed on its own there), and checks that the parts add up to the scores.
func TestDisentangledParts(t *testing.T) {
	for _, fx := range []struct {
		dir      string
		c2p, p2c bool
	}{
		{"testdata/deberta-tiny-random", true, true},
		{"testdata/deberta-tiny-nobuckets", true, false},
	} {
		t.Run(filepath.Base(fx.dir), func(t *testing.T) {
			f, err := hf.LoadFolder(fx.dir)
			if err != nil {
				t.Fatal(err)
			}
			b, _, _ := familyBatch(t, fx.dir)
			want := readAll(t, filepath.Join(fx.dir, "parts.safetensors"))
			for l := range f.Model.Config.NumHiddenLayers {
				p, err := f.Model.DisentangledParts(b, l)
				if err != nil {
					t.Fatal(err)
				}
				if (p.C2P != nil) != fx.c2p || (p.P2C != nil) != fx.p2c {
					t.Fatalf("layer %d: c2p %v, p2c %v; want %v, %v", l, p.C2P != nil, p.P2C != nil, fx.c2p, fx.p2c)
				}
				got := map[string][]float32{"c2c": p.C2C.Data, "sum": p.Sum.Data, "probs": p.Probs.Data}
				if p.C2P != nil {
					got["c2p"] = p.C2P.Data
				}
				if p.P2C != nil {
					got["p2c"] = p.P2C.Data
				}
				for name, g := range got {
					key := fmt.Sprintf("layer.%d.%s", l, name)
					w, ok := want[key]
					if !ok {
						t.Fatalf("%s: not in the reference", key)
					}
					if err := approx.Check(key, g, w, actAtol, actRtol); err != nil {
						t.Error(err)
					}
				}
				// The parts add up to the forward pass's scores.
				sum := make([]float32, len(p.C2C.Data))
				for i := range sum {
					sum[i] = p.C2C.Data[i]
					if p.C2P != nil {
						sum[i] += p.C2P.Data[i]
					}
					if p.P2C != nil {
						sum[i] += p.P2C.Data[i]
					}
				}
				if err := approx.Check(fmt.Sprintf("layer %d: c2c+c2p+p2c", l), sum, p.Sum.Data, 1e-6, 1e-5); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestDisentangledPartsErrors: a model without disentangled attention, and a layer out of range.
func TestDisentangledPartsErrors(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		layer int
		want  string
	}{
		{"testdata/electra-tiny-discriminator", 0, "DeBERTa-v2/v3 only"},
		{"testdata/deberta-tiny-random", 3, "layer 3 outside 0..2"},
		{"testdata/deberta-tiny-random", -1, "layer -1 outside"},
	} {
		f, err := hf.LoadFolder(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := familyBatch(t, tc.dir)
		if _, err := f.Model.DisentangledParts(b, tc.layer); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s layer %d: error %v, want %q", tc.dir, tc.layer, err, tc.want)
		}
	}
}
