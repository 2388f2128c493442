package pipeline

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

const fixture = "../bert/testdata/bert-tiny-random"

func loadFixture(t *testing.T) *hf.Folder {
	t.Helper()
	f, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAttentionIsSoftmaxOfScores recomputes every head's probabilities from the traced query and
// key projections: Attentions[h][i][j] is softmax_j(q_i·k_j/√d) of head h.
func TestAttentionIsSoftmaxOfScores(t *testing.T) {
	f := loadFixture(t)
	m, tok := f.Model, f.Tokenizer
	pair := "on the mat"
	for layer := 0; layer < m.Config.NumHiddenLayers; layer++ {
		res, err := Attention(m, tok, "the cat sat", &pair, layer)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := Encode(tok, "the cat sat", &pair, 0)
		if strings.Join(res.Tokens, " ") != strings.Join(enc.Tokens, " ") || res.Truncated {
			t.Fatalf("tokens %v truncated %v, want %v", res.Tokens, res.Truncated, enc.Tokens)
		}
		if res.Layer != layer || res.NumLayers != 2 || res.NumHeads != 4 || len(res.Attentions) != 4 {
			t.Fatalf("header %d %d %d %d", res.Layer, res.NumLayers, res.NumHeads, len(res.Attentions))
		}
		S, H, A := enc.Len(), m.Config.HiddenSize, m.Config.NumAttentionHeads
		d := H / A
		out, err := m.Forward(bert.Batch{B: 1, S: S, InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, bert.Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		q, k := out.Trace.Layers[layer].Query.Data, out.Trace.Layers[layer].Key.Data // [1, S, H]
		for h := 0; h < A; h++ {
			if len(res.Attentions[h]) != S {
				t.Fatalf("head %d: %d rows, want %d", h, len(res.Attentions[h]), S)
			}
			for i := 0; i < S; i++ {
				row := res.Attentions[h][i]
				if len(row) != S {
					t.Fatalf("head %d row %d: %d columns", h, i, len(row))
				}
				scores := make([]float64, S)
				mx := math.Inf(-1)
				for j := range scores {
					var s float64
					for c := h * d; c < (h+1)*d; c++ {
						s += float64(q[i*H+c]) * float64(k[j*H+c])
					}
					scores[j] = s / math.Sqrt(float64(d))
					mx = math.Max(mx, scores[j])
				}
				var sum, rowSum float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				for j := range scores {
					want := scores[j] / sum
					rowSum += float64(row[j])
					if math.Abs(float64(row[j])-want) > 1e-5 {
						t.Fatalf("layer %d head %d [%d][%d] = %v, want %v", layer, h, i, j, row[j], want)
					}
				}
				if math.Abs(rowSum-1) > 1e-5 {
					t.Errorf("layer %d head %d row %d sums to %v", layer, h, i, rowSum)
				}
			}
		}
	}
}

func TestAttentionLimits(t *testing.T) {
	f := loadFixture(t)
	for _, layer := range []int{-1, 2} {
		if _, err := Attention(f.Model, f.Tokenizer, "x", nil, layer); err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
			t.Errorf("layer %d: %v", layer, err)
		}
	}
	res, err := Attention(f.Model, f.Tokenizer, strings.Repeat("cat ", 100), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	P := f.Model.Config.MaxPositionEmbeddings
	if !res.Truncated || len(res.Tokens) != P || len(res.Attentions[0]) != P || res.Tokens[P-1] != "[SEP]" {
		t.Errorf("long text: truncated %v, %d tokens (last %q), want %d", res.Truncated, len(res.Tokens), res.Tokens[len(res.Tokens)-1], P)
	}
}

// TestAttentionLayers: all layers from one pass equal Attention layer by layer.
func TestAttentionLayers(t *testing.T) {
	f := loadFixture(t)
	pair := "on the mat"
	all, err := AttentionLayers(f.Model, f.Tokenizer, "the cat sat", &pair)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != f.Model.Config.NumHiddenLayers {
		t.Fatalf("%d layers", len(all))
	}
	for l := range all {
		one, err := Attention(f.Model, f.Tokenizer, "the cat sat", &pair, l)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(all[l], *one) {
			t.Errorf("layer %d differs from Attention", l)
		}
	}
}
