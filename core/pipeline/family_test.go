package pipeline

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// familyModel is a random model of the family given, with the fixture's vocabulary size, so that
// the fixture's WordPiece tokenizer can feed it (the pipelines see ids only).
func familyModel(t *testing.T, family string) *bert.Model {
	t.Helper()
	cfgs := map[string]string{
		"distilbert": `{"model_type":"distilbert","dim":32,"n_heads":2,"n_layers":2,"hidden_dim":48,"vocab_size":2000,"max_position_embeddings":32}`,
		"roberta":    `{"model_type":"roberta","hidden_size":32,"num_attention_heads":2,"num_hidden_layers":2,"intermediate_size":48,"vocab_size":2000,"max_position_embeddings":34,"type_vocab_size":1,"hidden_act":"gelu_new"}`,
		"albert":     `{"model_type":"albert","embedding_size":8,"hidden_size":32,"num_attention_heads":2,"num_hidden_layers":3,"intermediate_size":48,"vocab_size":2000,"max_position_embeddings":32}`,
		"deberta-v2": `{"model_type":"deberta-v2","hidden_size":32,"num_attention_heads":2,"num_hidden_layers":2,"intermediate_size":48,"vocab_size":2000,"max_position_embeddings":32,"relative_attention":true,"pos_att_type":["p2c","c2p"],"position_buckets":8,"norm_rel_ebd":"layer_norm","share_att_key":true,"position_biased_input":false,"type_vocab_size":0}`,
		"electra":    `{"model_type":"electra","embedding_size":8,"hidden_size":32,"num_attention_heads":2,"num_hidden_layers":2,"intermediate_size":48,"vocab_size":2000,"max_position_embeddings":32}`,
	}
	c, err := bert.ParseConfig([]byte(cfgs[family]))
	if err != nil {
		t.Fatal(err)
	}
	c.InitializerRange = 0.2
	m, err := bert.NewRandom(c, bert.Heads{MLM: true}, 7)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFamilyPipelines runs fill-mask, attention and the layer steps on DistilBERT, RoBERTa and
// ALBERT models: a sentence pair works on DistilBERT (no token types: the tokenizer's segments
// are ignored), the embedding step shows each family's sum with the position row it used, and
// ALBERT's LayerNorm step its projection to the hidden size.
func TestFamilyPipelines(t *testing.T) {
	tok := loadFixture(t).Tokenizer
	pair := "on the mat"
	for _, family := range []string{"distilbert", "roberta", "albert", "electra", "deberta-v2"} {
		t.Run(family, func(t *testing.T) {
			m := familyModel(t, family)
			var p *string
			if family == "distilbert" {
				p = &pair
			}
			fm, err := FillMask(m, tok, "the cat [MASK] here", p, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(fm.Masks) != 1 || len(fm.Masks[0].Predictions) != 3 {
				t.Fatalf("fill-mask %+v", fm)
			}
			if _, err := Attention(m, tok, "the cat sat", p, 1); err != nil {
				t.Fatal(err)
			}
			const token = 2
			r, err := Steps(m, tok, "the cat sat", p, 1, token)
			if err != nil {
				t.Fatal(err)
			}
			embed := r.Steps[0]
			vec := map[string][]float32{}
			for _, v := range embed.Vectors {
				vec[v.Name] = v.Values
			}
			want := fmt.Sprintf("position[%d]", token)
			if family == "roberta" {
				want = fmt.Sprintf("position[%d]", m.Config.PadTokenID+1+token)
			}
			if family == "deberta-v2" {
				// No absolute positions and no token types: the word row alone; the distances
				// are in the scores.
				want = "e = word["
				if !strings.Contains(r.Steps[2].Formula+r.Steps[3].Formula, "δ") {
					t.Errorf("score formulas %q, %q lack the relative terms", r.Steps[2].Formula, r.Steps[3].Formula)
				}
			}
			if !strings.Contains(embed.Formula, want) {
				t.Errorf("embedding formula %q, want %s", embed.Formula, want)
			}
			if _, ok := vec["type"]; ok == (family == "distilbert" || family == "deberta-v2") {
				t.Errorf("embedding vectors %v: a type row for %s", embed.Vectors, family)
			}
			sum := make([]float32, len(vec["word"]))
			for i := range sum {
				sum[i] = vec["word"][i]
				if p := vec["position"]; p != nil {
					sum[i] += p[i]
				}
				if ty := vec["type"]; ty != nil {
					sum[i] = vec["word"][i] + ty[i] + vec["position"][i]
				}
			}
			near(t, "embedding sum", vec["sum"], sum, 1e-6)
			ln := map[string][]float32{}
			for _, v := range r.Steps[1].Vectors {
				ln[v.Name] = v.Values
			}
			if family == "albert" || family == "electra" {
				E, H := m.Config.EmbDim(), m.Config.HiddenSize
				if len(ln["LayerNorm output"]) != E || len(ln["embedding output"]) != H || len(vec["word"]) != E {
					t.Errorf("ALBERT's LayerNorm step: %d, %d, %d values, want %d, %d, %d", len(ln["LayerNorm output"]), len(ln["embedding output"]), len(vec["word"]), E, H, E)
				}
				// The embedding output is the LayerNorm output through embedding_hidden_mapping_in.
				near(t, "projection", ln["embedding output"], linearRow(*m.EmbProj, ln["LayerNorm output"]), 1e-5)
			}
			// Every block's step runs the block's layer (ALBERT's three blocks share one).
			for layer := range m.Config.NumHiddenLayers {
				if _, err := Steps(m, tok, "the cat sat", p, layer, 1); err != nil {
					t.Errorf("layer %d: %v", layer, err)
				}
			}
		})
	}
}

// TestReplacedTokens runs an ELECTRA discriminator: one probability a token, the sigmoid of the
// head's logit, and a clear error for a model without the head.
func TestReplacedTokens(t *testing.T) {
	tok := loadFixture(t).Tokenizer
	c, err := bert.ParseConfig([]byte(`{"model_type":"electra","embedding_size":8,"hidden_size":32,"num_attention_heads":2,"num_hidden_layers":2,"intermediate_size":48,"vocab_size":2000,"max_position_embeddings":32}`))
	if err != nil {
		t.Fatal(err)
	}
	c.InitializerRange = 0.5
	m, err := bert.NewRandom(c, bert.Heads{RTD: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReplacedTokens(m, tok, "the cat sat on the mat", nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := Encode(tok, "the cat sat on the mat", nil, 0)
	if len(r.Tokens) != enc.Len() || len(r.Replaced) != enc.Len() || len(r.Logits) != enc.Len() {
		t.Fatalf("%d tokens, %d probabilities, %d logits; want %d", len(r.Tokens), len(r.Replaced), len(r.Logits), enc.Len())
	}
	spread := false
	for i, z := range r.Logits {
		want := 1 / (1 + math.Exp(-float64(z)))
		if math.Abs(float64(r.Replaced[i])-want) > 1e-6 {
			t.Errorf("token %d: probability %g, sigmoid(%g) = %g", i, r.Replaced[i], z, want)
		}
		spread = spread || math.Abs(float64(z-r.Logits[0])) > 1e-3
	}
	if !spread {
		t.Errorf("every token got the same logit: %v", r.Logits)
	}
	if _, err := ReplacedTokens(familyModel(t, "roberta"), tok, "the cat", nil); err == nil || !strings.Contains(err.Error(), "replaced-token head") {
		t.Errorf("a model without the head: %v", err)
	}
}
