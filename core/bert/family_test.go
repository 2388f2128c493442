package bert

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseFamilyConfig(t *testing.T) {
	const distil = `"model_type":"distilbert","dim":48,"n_heads":2,"n_layers":3,"hidden_dim":64,"vocab_size":120,"max_position_embeddings":16`
	const roberta = `"model_type":"roberta","hidden_size":48,"num_attention_heads":2,"num_hidden_layers":3,"intermediate_size":64,"vocab_size":120,"max_position_embeddings":20,"type_vocab_size":1`
	const deberta = `"model_type":"deberta-v2","hidden_size":768,"num_attention_heads":12,"num_hidden_layers":12,"intermediate_size":3072,"vocab_size":128100,"relative_attention":true,"pos_att_type":["p2c","c2p"],"position_buckets":256,"max_relative_positions":-1,"norm_rel_ebd":"layer_norm","share_att_key":true,"position_biased_input":false,"type_vocab_size":0,"layer_norm_eps":1e-7`
	const albert = `"model_type":"albert","embedding_size":16,"hidden_size":48,"num_attention_heads":2,"num_hidden_layers":3,"num_hidden_groups":2,"intermediate_size":64,"vocab_size":120,"max_position_embeddings":16`
	tests := []struct {
		name, json string
		check      func(Config) bool
		wantErr    string
	}{
		{"distilbert keys", `{` + distil + `,"activation":"relu","sinusoidal_pos_embds":true}`, func(c Config) bool {
			return c.FamilyOf() == FamilyDistilBERT && c.HiddenSize == 48 && c.NumAttentionHeads == 2 && c.NumHiddenLayers == 3 &&
				c.IntermediateSize == 64 && c.HiddenAct == "relu" && c.SinusoidalPosEmbds && !c.HasTokenTypes() && c.LayerNormEps == 1e-12
		}, ""},
		{"distilbert defaults", `{"model_type":"distilbert"}`, func(c Config) bool {
			return c.HiddenSize == 768 && c.NumHiddenLayers == 6 && c.IntermediateSize == 3072 && c.PadTokenID == 0 && c.TieWordEmbeddings
		}, ""},
		{"distilbert generic keys kept", `{` + distil + `,"architectures":["DistilBertForMaskedLM"],"qa_dropout":0.1,"tie_weights_":true,"transformers_version":"4.38.2"}`,
			func(c Config) bool { return string(c.Extra["qa_dropout"]) == "0.1" && c.Extra["architectures"] != nil }, ""},
		{"distilbert untied", `{` + distil + `,"tie_weights_":false}`, func(c Config) bool { return !c.TieWordEmbeddings }, ""},
		{"distilbert bert key", `{` + distil + `,"hidden_size":48}`, nil, `field "hidden_size" is not supported for model_type "distilbert"`},
		{"distilbert unknown key", `{` + distil + `,"rotary":true}`, nil, `field "rotary"`},
		{"distilbert wrong type", `{` + distil + `,"n_layers":"three"}`, nil, `field "n_layers"`},
		{"distilbert heads do not divide", `{"model_type":"distilbert","dim":50,"n_heads":3}`, nil, "not a multiple"},
		{"roberta keys", `{` + roberta + `,"layer_norm_eps":1e-5,"bos_token_id":0,"eos_token_id":2}`, func(c Config) bool {
			return c.FamilyOf() == FamilyRoBERTa && c.PadTokenID == 1 && c.LayerNormEps == 1e-5 && c.TypeVocabSize == 1 &&
				c.MaxSequenceLength() == 18 && c.MLMAct() == "gelu"
		}, ""},
		{"roberta null kept out", `{` + roberta + `,"classifier_dropout":null}`, func(c Config) bool { return c.Extra["classifier_dropout"] == nil }, ""},
		{"roberta lm head gelu", `{` + roberta + `,"hidden_act":"gelu_new"}`, func(c Config) bool { return c.HiddenAct == "gelu_new" && c.MLMAct() == "gelu" }, ""},
		{"roberta unknown key", `{` + roberta + `,"embedding_size":16}`, nil, `field "embedding_size" is not supported for model_type "roberta"`},
		{"roberta decoder", `{` + roberta + `,"is_decoder":true}`, nil, `field "is_decoder"`},
		{"roberta cross attention", `{` + roberta + `,"add_cross_attention":true}`, nil, `field "add_cross_attention"`},
		{"roberta pruned", `{` + roberta + `,"pruned_heads":{"0":[1]}}`, nil, `field "pruned_heads"`},
		{"roberta not pruned", `{` + roberta + `,"pruned_heads":{},"is_decoder":false}`, func(Config) bool { return true }, ""},
		{"roberta relative", `{` + roberta + `,"position_embedding_type":"relative_key"}`, nil, `"position_embedding_type"`},
		{"roberta no room", `{` + roberta + `,"max_position_embeddings":2}`, nil, "leaves no position"},
		{"mpnet", `{"model_type":"mpnet"}`, nil, `model_type "mpnet" is not supported (have bert, roberta, distilbert, albert, electra, deberta-v2)`},
		{"deberta v3", `{` + deberta + `}`, func(c Config) bool {
			d := c.Disentangled
			return c.FamilyOf() == FamilyDeBERTaV2 && d != nil && d.Relative && d.C2P && d.P2C && d.Span() == 256 && d.NormRelEmb &&
				d.ScaleFactor() == 3 && c.NoPositionEmbeddings && !c.HasTokenTypes() && c.LayerNormEps == 1e-7 && d.MaxRelativePositions == 512
		}, ""},
		{"deberta v2 string types", `{"model_type":"deberta-v2","relative_attention":true,"pos_att_type":"p2c|c2p","share_att_key":true,"max_relative_positions":-1,"type_vocab_size":0}`, func(c Config) bool {
			d := c.Disentangled
			return d.C2P && d.P2C && d.PositionBuckets == -1 && d.Span() == 512 && !c.NoPositionEmbeddings
		}, ""},
		{"deberta own keys", `{` + deberta + `,"pooler_hidden_size":768,"pooler_dropout":0,"legacy":true}`, func(c Config) bool { return string(c.Extra["pooler_hidden_size"]) == "768" }, ""},
		{"deberta separate position projections", `{` + deberta + `,"share_att_key":false}`, nil, `field "share_att_key": false is not supported`},
		{"deberta conv", `{` + deberta + `,"conv_kernel_size":3}`, nil, `field "conv_kernel_size": 3`},
		{"deberta embedding size", `{` + deberta + `,"embedding_size":128}`, nil, `field "embedding_size": 128`},
		{"deberta head size", `{` + deberta + `,"attention_head_size":32}`, nil, `field "attention_head_size": 32`},
		{"deberta attention type", `{` + deberta + `,"pos_att_type":["p2p"]}`, nil, `field "pos_att_type": "p2p"`},
		{"deberta rel norm", `{` + deberta + `,"norm_rel_ebd":"batch_norm"}`, nil, `field "norm_rel_ebd"`},
		{"deberta unknown", `{` + deberta + `,"rotary_dim":8}`, nil, `field "rotary_dim" is not supported for model_type "deberta-v2"`},
		{"electra small", `{"model_type":"electra","embedding_size":128,"hidden_size":256,"summary_type":"first","summary_use_proj":true}`, func(c Config) bool {
			return c.FamilyOf() == FamilyELECTRA && c.EmbDim() == 128 && c.HasEmbProj() && !c.SharesLayers() && c.MLMAct() == "gelu" &&
				string(c.Extra["summary_type"]) == `"first"`
		}, ""},
		{"electra base", `{"model_type":"electra","embedding_size":768,"hidden_size":768,"num_attention_heads":12,"hidden_act":"gelu_new"}`, func(c Config) bool {
			return !c.HasEmbProj() && c.MLMAct() == "gelu"
		}, ""},
		{"electra embedding size", `{"model_type":"electra","embedding_size":0}`, nil, `field "embedding_size": 0`},
		{"electra unknown", `{"model_type":"electra","num_hidden_groups":1}`, nil, `field "num_hidden_groups" is not supported for model_type "electra"`},
		{"albert keys", `{` + albert + `,"classifier_dropout_prob":0.1,"inner_group_num":1}`, func(c Config) bool {
			return c.FamilyOf() == FamilyALBERT && c.EmbDim() == 16 && c.HasEmbProj() && c.NumLayers() == 2 && c.SharesLayers() &&
				c.LayerIndex(0) == 0 && c.LayerIndex(1) == 0 && c.LayerIndex(2) == 1 && c.HiddenAct == "gelu_new" &&
				string(c.Extra["classifier_dropout_prob"]) == "0.1"
		}, ""},
		{"albert defaults", `{"model_type":"albert"}`, func(c Config) bool {
			return c.HiddenSize == 4096 && c.EmbDim() == 128 && c.NumLayers() == 1 && c.LayerIndex(11) == 0 && c.NumHiddenLayers == 12
		}, ""},
		{"albert embedding size equal", `{` + albert + `,"embedding_size":48}`, func(c Config) bool { return c.HasEmbProj() && c.EmbDim() == 48 }, ""},
		{"albert inner groups", `{` + albert + `,"inner_group_num":2}`, nil, `field "inner_group_num": 2 is not supported`},
		{"albert groups", `{` + albert + `,"num_hidden_groups":4}`, nil, "num_hidden_groups 4 outside"},
		{"albert no groups", `{` + albert + `,"num_hidden_groups":0}`, nil, `field "num_hidden_groups": 0`},
		{"albert embedding size", `{` + albert + `,"embedding_size":0}`, nil, `field "embedding_size": 0`},
		{"albert relative", `{` + albert + `,"position_embedding_type":"relative_key"}`, nil, `model_type "albert" (only "absolute")`},
		{"albert bert key", `{` + albert + `,"tie_weights_":true}`, nil, `field "tie_weights_" is not supported for model_type "albert"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("unexpected config %+v", c)
			}
		})
	}
}

func TestFamilyConfigRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"model_type":"distilbert","dim":48,"n_heads":2,"n_layers":3,"hidden_dim":64,"vocab_size":120,"activation":"relu","sinusoidal_pos_embds":true,"qa_dropout":0.1}`,
		`{"model_type":"roberta","hidden_size":48,"num_attention_heads":2,"vocab_size":120,"layer_norm_eps":1e-5,"bos_token_id":0}`,
		`{"model_type":"albert","embedding_size":16,"hidden_size":48,"num_attention_heads":2,"num_hidden_layers":3,"num_hidden_groups":2,"intermediate_size":64,"vocab_size":120,"inner_group_num":1}`,
		`{"model_type":"electra","embedding_size":16,"hidden_size":48,"num_attention_heads":2,"summary_use_proj":true}`,
		`{"model_type":"deberta-v2","hidden_size":48,"num_attention_heads":2,"relative_attention":true,"pos_att_type":"c2p","position_buckets":8,"max_relative_positions":16,"position_biased_input":false,"type_vocab_size":0,"share_att_key":true}`,
	} {
		c, err := ParseConfig([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		c.Extra, c2.Extra = nil, nil
		if c.FamilyOf() != c2.FamilyOf() || c.HiddenSize != c2.HiddenSize || c.HiddenAct != c2.HiddenAct ||
			c.EmbDim() != c2.EmbDim() || c.NumLayers() != c2.NumLayers() || c.NoPositionEmbeddings != c2.NoPositionEmbeddings ||
			(c.Disentangled == nil) != (c2.Disentangled == nil) || (c.Disentangled != nil && *c.Disentangled != *c2.Disentangled) ||
			c.SinusoidalPosEmbds != c2.SinusoidalPosEmbds || c.LayerNormEps != c2.LayerNormEps || c.PadTokenID != c2.PadTokenID {
			t.Errorf("round trip of %s changed the config:\n%+v\n%+v", in, c, c2)
		}
	}
}

func TestPositionIDs(t *testing.T) {
	roberta := Config{Family: FamilyRoBERTa, PadTokenID: 1}
	tests := []struct {
		name string
		c    Config
		ids  []int // [2, 5]
		want []int
	}{
		{"bert", DefaultConfig(), []int{101, 7, 0, 102, 0, 101, 8, 102, 0, 0}, []int{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}},
		{"distilbert", Config{Family: FamilyDistilBERT}, []int{101, 7, 0, 102, 0, 101, 8, 102, 0, 0}, []int{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}},
		// Pads keep padding_idx, wherever they stand; the tokens after one count on without it.
		{"roberta", roberta, []int{0, 7, 1, 9, 2, 0, 8, 2, 1, 1}, []int{2, 3, 1, 4, 5, 2, 3, 4, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]int, len(tc.ids))
			tc.c.PositionIDs(got, tc.ids, 5)
			if !slices.Equal(got, tc.want) {
				t.Errorf("PositionIDs = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDistilBERTSinusoids checks values of HF's create_sinusoidal_embeddings worked by hand.
func TestDistilBERTSinusoids(t *testing.T) {
	const P, H = 3, 4
	pos := make([]float32, P*H)
	DistilBERTSinusoids(pos, P, H)
	want := []float64{
		0, 1, 0, 1,
		math.Sin(1), math.Cos(1), math.Sin(0.01), math.Cos(0.01),
		math.Sin(2), math.Cos(2), math.Sin(0.02), math.Cos(0.02),
	}
	for i, w := range want {
		if math.Abs(float64(pos[i])-w) > 1e-7 {
			t.Errorf("pos[%d][%d] = %g, want %g", i/H, i%H, pos[i], w)
		}
	}
}

func TestFamilyBatchValidate(t *testing.T) {
	distil, err := ParseConfig([]byte(`{"model_type":"distilbert","dim":8,"n_heads":2,"n_layers":1,"hidden_dim":16,"vocab_size":20,"max_position_embeddings":4}`))
	if err != nil {
		t.Fatal(err)
	}
	roberta, err := ParseConfig([]byte(`{"model_type":"roberta","hidden_size":8,"num_attention_heads":2,"num_hidden_layers":1,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":6,"type_vocab_size":1}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		c       Config
		b       Batch
		wantErr string
	}{
		{"distilbert zero types", distil, Batch{B: 1, S: 2, InputIDs: []int{3, 4}, TokenTypeIDs: []int{0, 0}}, ""},
		{"distilbert types ignored", distil, Batch{B: 1, S: 2, InputIDs: []int{3, 4}, TokenTypeIDs: []int{0, 1}}, ""},
		{"distilbert too long", distil, Batch{B: 1, S: 5, InputIDs: []int{3, 4, 5, 6, 7}}, "max_position_embeddings 4"},
		{"roberta fits", roberta, Batch{B: 1, S: 4, InputIDs: []int{0, 4, 5, 2}}, ""},
		{"roberta too long", roberta, Batch{B: 1, S: 5, InputIDs: []int{0, 4, 5, 6, 2}}, "exceeds 4 (max_position_embeddings 6 less pad_token_id+1"},
		{"roberta type 1", roberta, Batch{B: 1, S: 2, InputIDs: []int{0, 2}, TokenTypeIDs: []int{0, 1}}, "type_vocab_size 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.Validate(tc.c)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}

// TestFamilyNewRandom checks what NewRandom gives each family: no token types for DistilBERT and
// its sinusoids when the config asks, RoBERTa's padding row of the positions at 0, and a forward
// pass that runs.
func TestFamilyNewRandom(t *testing.T) {
	distil, _ := ParseConfig([]byte(`{"model_type":"distilbert","dim":8,"n_heads":2,"n_layers":1,"hidden_dim":16,"vocab_size":20,"max_position_embeddings":6,"sinusoidal_pos_embds":true}`))
	roberta, _ := ParseConfig([]byte(`{"model_type":"roberta","hidden_size":8,"num_attention_heads":2,"num_hidden_layers":1,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8,"type_vocab_size":1}`))
	for _, c := range []Config{distil, roberta} {
		t.Run(c.Family.Name(), func(t *testing.T) {
			m, err := NewRandom(c, Heads{MLM: true}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if (m.TypeEmb != nil) != c.HasTokenTypes() {
				t.Errorf("type embeddings %v with type_vocab_size %d", m.TypeEmb != nil, c.TypeVocabSize)
			}
			if n := m.NumParams(); n != c.ParamCount(Heads{MLM: true}) {
				t.Errorf("NumParams %d, ParamCount %d", n, c.ParamCount(Heads{MLM: true}))
			}
			switch c.FamilyOf() {
			case FamilyDistilBERT:
				want := make([]float32, c.MaxPositionEmbeddings*c.HiddenSize)
				DistilBERTSinusoids(want, c.MaxPositionEmbeddings, c.HiddenSize)
				if !slices.Equal(m.PosEmb.Data, want) {
					t.Error("position embeddings are not the sinusoids")
				}
			case FamilyRoBERTa:
				if slices.ContainsFunc(m.PosEmb.Row(c.PadTokenID), func(v float32) bool { return v != 0 }) {
					t.Error("the padding row of the position embeddings is not 0")
				}
			}
			out, err := m.Forward(Batch{B: 1, S: 3, InputIDs: []int{0, 5, 2}}, Options{MLM: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.MLMLogits.Data) != 3*c.VocabSize {
				t.Errorf("logits %v", out.MLMLogits.Shape)
			}
		})
	}
}

// TestLayerIndex checks ALBERT's group of each block against int(i / (L / G)) worked by hand,
// including sizes where L / G is not a whole number.
func TestLayerIndex(t *testing.T) {
	tests := []struct {
		layers, groups int
		want           []int
	}{
		{3, 0, []int{0, 1, 2}},
		{3, 1, []int{0, 0, 0}},
		{3, 2, []int{0, 0, 1}},
		{3, 3, []int{0, 1, 2}},
		{12, 5, []int{0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4}},
		{12, 9, []int{0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8}},
	}
	for _, tc := range tests {
		c := Config{NumHiddenLayers: tc.layers, NumHiddenGroups: tc.groups}
		got := make([]int, tc.layers)
		for l := range got {
			got[l] = c.LayerIndex(l)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%d layers, %d groups: %v, want %v", tc.layers, tc.groups, got, tc.want)
		}
	}
}

// TestRefusedForShared: a head mask is refused for ALBERT (transformers hands its blocks other
// rows of it) and DeBERTa rather than computing something else, while both train; ALBERT's
// trace has the embeddings before the projection.
func TestRefusedForShared(t *testing.T) {
	albert, err := ParseConfig([]byte(`{"model_type":"albert","embedding_size":8,"hidden_size":16,"num_attention_heads":2,"num_hidden_layers":2,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8}`))
	if err != nil {
		t.Fatal(err)
	}
	deberta, err := ParseConfig([]byte(`{"model_type":"deberta-v2","hidden_size":16,"num_attention_heads":2,"num_hidden_layers":2,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8,"relative_attention":true,"pos_att_type":["c2p","p2c"],"share_att_key":true}`))
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{B: 1, S: 3, InputIDs: []int{2, 5, 3}}
	for _, c := range []Config{albert, deberta} {
		m, err := NewRandom(c, Heads{MLM: true}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Forward(b, Options{HeadMask: make([]float32, 4)}); err == nil || !strings.Contains(err.Error(), "head mask") {
			t.Errorf("%s: Forward with a head mask: %v", c.Family, err)
		}
		if _, err = m.ForwardTrain(b, TrainOptions{}); err != nil {
			t.Errorf("ForwardTrain of %s: %v", c.Family, err)
		}
		if n := m.NumParams(); n != c.ParamCount(Heads{MLM: true}) {
			t.Errorf("%s: NumParams %d, ParamCount %d", c.Family, n, c.ParamCount(Heads{MLM: true}))
		}
	}
	m, _ := NewRandom(albert, Heads{MLM: true}, 1)
	out, err := m.Forward(b, Options{MLM: true, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Trace.Embeddings == nil || out.Trace.Embeddings.Shape[2] != 8 || out.Trace.HiddenStates[0].Shape[2] != 16 || out.Trace.MLMTransform.Shape[2] != 8 {
		t.Errorf("trace shapes: embeddings %v, hidden %v, mlm transform %v", out.Trace.Embeddings.Shape, out.Trace.HiddenStates[0].Shape, out.Trace.MLMTransform.Shape)
	}
}

// TestRelativeBucket checks DeBERTa's log buckets against transformers' make_log_bucket_position
// (run in PyTorch float32 for bucket_size 8 and max_position 16, and 256 / 512 as in v3).
func TestRelativeBucket(t *testing.T) {
	tests := []struct {
		buckets, maxPos int
		rel, want       []int
	}{
		{8, 16, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -4, -5, -6, -7, -8, -9}, []int{0, 1, 2, 3, 4, 5, 5, 6, 6, 6, -1, -4, -5, -5, -6, -6, -6}},
		{-1, 6, []int{-9, 0, 9}, []int{-9, 0, 9}},
		{256, 512, []int{127, 128, 129, 200, 511, 1000, -130}, []int{127, 128, 129, 169, 255, 317, -130}},
	}
	for _, tc := range tests {
		for i, r := range tc.rel {
			if got := RelativeBucket(r, tc.buckets, tc.maxPos); got != tc.want[i] {
				t.Errorf("RelativeBucket(%d, %d, %d) = %d, want %d", r, tc.buckets, tc.maxPos, got, tc.want[i])
			}
		}
	}
}

// TestFamilyTaskModelRefused: BERT's task heads are not the families' own.
func TestFamilyTaskModelRefused(t *testing.T) {
	c, err := ParseConfig([]byte(`{"model_type":"roberta","hidden_size":8,"num_attention_heads":2,"num_hidden_layers":1,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewRandom(c, Heads{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewTaskModel(m, SequenceClassification, []string{"neg", "pos"}, 1); err == nil || !strings.Contains(err.Error(), `model_type "roberta"`) {
		t.Errorf("NewTaskModel: %v", err)
	}
}
