package engine

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// familyDir is where scripts/familyref writes the family fixtures; familyVocab is a 120-token
// WordPiece vocabulary ([PAD] [UNK] [CLS] [SEP] [MASK], then English words) that lets the engine,
// which needs a tokenizer, load them.
const (
	familyDir   = "../bert/testdata"
	familyVocab = "../bert/testdata/family-vocab.txt"
)

// familyFS is a family fixture's config and weights with vocab as its vocab.txt.
func familyFS(t *testing.T, fixture string, vocab []string) fstest.MapFS {
	t.Helper()
	files := fstest.MapFS{"vocab.txt": &fstest.MapFile{Data: []byte(strings.Join(vocab, "\n") + "\n")}}
	for _, name := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(familyDir, fixture, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = &fstest.MapFile{Data: b}
	}
	return files
}

func readVocab(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(familyVocab)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// words is the text whose WordPiece tokens are ids (each a whole word of vocab).
func words(vocab []string, ids ...int) string {
	w := make([]string, len(ids))
	for i, id := range ids {
		w[i] = vocab[id]
	}
	return strings.Join(w, " ")
}

func fixtureTensors(t *testing.T, path string) map[string][]float32 {
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

// TestDescribeFamily describes every family fixture: what scripts/familyref built each one as
// (its SOURCE.md) is what the card must say.
func TestDescribeFamily(t *testing.T) {
	type heads struct{ mlm, nsp, sop, rtd bool }
	for _, tc := range []struct {
		fixture    string
		name, role string
		E, H       int
		proj       bool
		layerOf    []int
		kind       string
		positions  []string // substrings of Positions
		shared     []string // substrings of Shared, in order; nil: none
		heads      heads
		idea       string
		terms      []string
	}{
		{fixture: "bert-tiny-random", name: "BERT", E: 64, H: 64, layerOf: []int{0, 1}, kind: "absolute",
			positions: []string{"32 positions"}, shared: []string{"(tied)"}, heads: heads{mlm: true, nsp: true}, idea: "follow each other"},
		{fixture: "bert-tiny-relkq", name: "BERT", E: 64, H: 64, layerOf: []int{0, 1}, kind: "relative",
			positions: []string{"relative_key_query"}, shared: []string{"(tied)"}, heads: heads{mlm: true, nsp: true}},
		{fixture: "distilbert-tiny-random", name: "DistilBERT", E: 48, H: 48, layerOf: []int{0, 1, 2}, kind: "absolute",
			positions: []string{"16 positions"}, shared: []string{"(tied)"}, heads: heads{mlm: true}, idea: "distillation"},
		{fixture: "distilbert-tiny-sinusoidal", name: "DistilBERT", E: 48, H: 48, layerOf: []int{0, 1, 2}, kind: "sinusoidal",
			positions: []string{"not learned"}},
		{fixture: "roberta-tiny-random", name: "RoBERTa", E: 48, H: 48, layerOf: []int{0, 1, 2}, kind: "absolute",
			positions: []string{"18 positions", "pad_token_id+1 = 2"}, shared: []string{"(tied)"}, heads: heads{mlm: true}},
		{fixture: "albert-tiny-random", name: "ALBERT", E: 16, H: 48, proj: true, layerOf: []int{0, 0, 0}, kind: "absolute",
			shared: []string{"all 3 layers run the same weights", "(tied)"}, heads: heads{mlm: true, sop: true}},
		{fixture: "albert-tiny-groups", name: "ALBERT", E: 24, H: 48, proj: true, layerOf: []int{0, 0, 1}, kind: "absolute",
			shared: []string{"3 layers share 2 sets of weights (layer groups): layers 0–1 run group 0, layer 2 runs group 1"}},
		{fixture: "electra-tiny-discriminator", name: "ELECTRA", role: "discriminator", E: 16, H: 48, proj: true, layerOf: []int{0, 1, 2},
			kind: "absolute", shared: []string{"this checkpoint is the discriminator"}, heads: heads{rtd: true}, idea: "every token"},
		{fixture: "electra-tiny-generator", name: "ELECTRA", role: "generator", E: 48, H: 48, layerOf: []int{0, 1, 2},
			kind: "absolute", shared: []string{"(tied)", "this checkpoint is the generator"}, heads: heads{mlm: true}},
		{fixture: "deberta-tiny-random", name: "DeBERTa", E: 48, H: 48, layerOf: []int{0, 1, 2}, kind: "relative buckets",
			positions: []string{"in 8 buckets each way (exact up to ±4, then log-spaced up to ±16)", "no absolute positions"},
			shared:    []string{"(tied)", "one table of 16 relative-position embeddings"}, heads: heads{mlm: true}, idea: "position-to-content",
			terms: []string{"c2c", "c2p", "p2c"}},
		{fixture: "deberta-tiny-nobuckets", name: "DeBERTa", E: 48, H: 48, layerOf: []int{0, 1, 2}, kind: "relative",
			positions: []string{"clamped to ±6", "16 absolute positions"}, shared: []string{"one table of 12 relative-position embeddings"}, terms: []string{"c2c", "c2p"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			f, err := hf.LoadFolder(filepath.Join(familyDir, tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			n := f.Model.NumParams()
			c := DescribeFamily(f.Model, n)
			if c.Name != tc.name || c.Role != tc.role || c.Parameters != n || c.Paper == "" {
				t.Errorf("name %q role %q parameters %d paper %q; want %q, %q, %d", c.Name, c.Role, c.Parameters, c.Paper, tc.name, tc.role, n)
			}
			if c.EmbeddingSize != tc.E || c.HiddenSize != tc.H || c.EmbeddingProjection != tc.proj {
				t.Errorf("E %d H %d projection %v; want %d, %d, %v", c.EmbeddingSize, c.HiddenSize, c.EmbeddingProjection, tc.E, tc.H, tc.proj)
			}
			distinct := len(slices.Compact(slices.Clone(tc.layerOf)))
			if !slices.Equal(c.LayerOf, tc.layerOf) || c.Blocks != len(tc.layerOf) || c.DistinctLayers != distinct {
				t.Errorf("layer of each block %v (%d blocks, %d distinct); want %v", c.LayerOf, c.Blocks, c.DistinctLayers, tc.layerOf)
			}
			if c.PositionKind != tc.kind {
				t.Errorf("position kind %q, want %q", c.PositionKind, tc.kind)
			}
			for _, s := range tc.positions {
				if !strings.Contains(c.Positions, s) {
					t.Errorf("positions %q lack %q", c.Positions, s)
				}
			}
			if len(c.Shared) != len(tc.shared) {
				t.Errorf("shared %q, want %d sentences %q", c.Shared, len(tc.shared), tc.shared)
			} else {
				for i, s := range tc.shared {
					if !strings.Contains(c.Shared[i], s) {
						t.Errorf("shared[%d] %q lacks %q", i, c.Shared[i], s)
					}
				}
			}
			got := map[string]bool{}
			for _, h := range c.Heads {
				got[h.Name] = h.Present
			}
			if len(c.Heads) != 4 || (heads{got["MLM"], got["NSP"], got["SOP"], got["RTD"]}) != tc.heads {
				t.Errorf("heads %+v, want %+v", c.Heads, tc.heads)
			}
			if !slices.Equal(c.ScoreTerms, tc.terms) {
				t.Errorf("score terms %q, want %q", c.ScoreTerms, tc.terms)
			}
			if !strings.Contains(c.Idea, tc.idea) {
				t.Errorf("idea %q lacks %q", c.Idea, tc.idea)
			}
		})
	}
}

// TestInfoFamily: the engine's load answer carries the card.
func TestInfoFamily(t *testing.T) {
	e, err := Open(familyFS(t, "albert-tiny-groups", readVocab(t)), "albert")
	if err != nil {
		t.Fatal(err)
	}
	info := e.Info()
	if info.Family == nil || info.Family.Name != "ALBERT" || info.Family.Parameters != info.Parameters {
		t.Fatalf("family %+v", info.Family)
	}
}

// TestReplacedMatchesFixture runs the ELECTRA discriminator fixture through the engine: with a
// vocabulary in which the fixture's ids are whole words, its two sequences as text give the
// logits of scripts/familyref's PyTorch reference (the second sequence without its padding).
func TestReplacedMatchesFixture(t *testing.T) {
	vocab := readVocab(t)
	e, err := Open(familyFS(t, "electra-tiny-discriminator", vocab), "electra")
	if err != nil {
		t.Fatal(err)
	}
	want := fixtureTensors(t, filepath.Join(familyDir, "electra-tiny-discriminator", "outputs.safetensors"))["logits"] // [2, 10]
	// inputs.json: [CLS] 17 23 55 [SEP] | 91 7 33 118 [SEP], and [CLS] 64 8 [MASK] [SEP] | 40 [SEP] + 3 pads.
	for _, tc := range []struct {
		text, pair string
		row, n     int
	}{
		{words(vocab, 17, 23, 55), words(vocab, 91, 7, 33, 118), 0, 10},
		{words(vocab, 64, 8, 4), words(vocab, 40), 1, 7},
	} {
		r, err := e.Replaced(tc.text, &tc.pair)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Logits) != tc.n || len(r.Replaced) != tc.n || len(r.Tokens) != tc.n {
			t.Fatalf("%q / %q: %d logits, %d probabilities, %d tokens; want %d", tc.text, tc.pair, len(r.Logits), len(r.Replaced), len(r.Tokens), tc.n)
		}
		if err := approx.Check("logits", r.Logits, want[tc.row*10:tc.row*10+tc.n], 1e-4, 1e-4); err != nil {
			t.Error(err)
		}
		for i, z := range want[tc.row*10 : tc.row*10+tc.n] {
			if p := 1 / (1 + math.Exp(-float64(z))); math.Abs(float64(r.Replaced[i])-p) > 1e-5 {
				t.Errorf("token %d %q: probability %g, the reference's sigmoid %g", i, r.Tokens[i], r.Replaced[i], p)
			}
		}
		if !r.Special[0] || !r.Special[tc.n-1] || r.Special[1] || r.WordIDs[1] != 0 || r.TypeIDs[tc.n-1] != 1 {
			t.Errorf("special %v, word ids %v, types %v", r.Special, r.WordIDs, r.TypeIDs)
		}
	}
	// A model without the head: a clear error.
	g, err := Open(familyFS(t, "electra-tiny-generator", vocab), "generator")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Replaced("the cat", nil); err == nil || !strings.Contains(err.Error(), "ElectraForPreTraining") {
		t.Errorf("the generator has no replaced-token head: error %v", err)
	}
}

// TestAttentionPartsMatchesFixture runs the DeBERTa fixture through the engine with a
// vocabulary that spells its first sequence ([CLS] 1, [SEP] 2, [UNK] 3): every layer's parts
// equal parts.safetensors (PyTorch float64) for that sequence.
func TestAttentionPartsMatchesFixture(t *testing.T) {
	vocab := readVocab(t)
	vocab[1], vocab[2], vocab[3] = "[CLS]", "[SEP]", "[UNK]"
	e, err := Open(familyFS(t, "deberta-tiny-random", vocab), "deberta")
	if err != nil {
		t.Fatal(err)
	}
	want := fixtureTensors(t, filepath.Join(familyDir, "deberta-tiny-random", "parts.safetensors")) // [2, A, S, S]
	// inputs.json row 0: [CLS] 17 [UNK] 55 [SEP] 91 [UNK] 33 118 [SEP].
	text, pair := words(vocab, 17)+" zzz "+words(vocab, 55), words(vocab, 91)+" zzz "+words(vocab, 33, 118)
	const S, A = 10, 2
	for l := range 3 {
		r, err := e.AttentionParts(text, &pair, l)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Tokens) != S || r.NumHeads != A || r.Tokens[2] != "[UNK]" {
			t.Fatalf("tokens %q, %d heads", r.Tokens, r.NumHeads)
		}
		if math.Abs(r.Divisor-math.Sqrt(24*3)) > 1e-12 {
			t.Errorf("divisor %g, want √(24·3)", r.Divisor)
		}
		for name, got := range map[string][][][]float32{"c2c": r.C2C, "c2p": r.C2P, "p2c": r.P2C, "sum": r.Sum, "probs": r.Probs} {
			var flat []float32
			for _, h := range got {
				for _, row := range h {
					flat = append(flat, row...)
				}
			}
			w := want["layer."+string(rune('0'+l))+"."+name][:A*S*S] // batch row 0
			if err := approx.Check(name, flat, w, 1e-5, 1e-4); err != nil {
				t.Errorf("layer %d: %v", l, err)
			}
		}
	}
	// Another family: a clear error.
	el, err := Open(familyFS(t, "electra-tiny-discriminator", vocab), "electra")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := el.AttentionParts("to milk", nil, 0); err == nil || !strings.Contains(err.Error(), "DeBERTa") {
		t.Errorf("ELECTRA has no disentangled attention: error %v", err)
	}
}
