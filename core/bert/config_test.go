package bert

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPresetParamCounts(t *testing.T) {
	// HF BertForPreTraining(BertConfig(...)).num_parameters(), vocab 30522, 512 positions, 2 types.
	tests := []struct {
		preset string
		want   int64
	}{
		{"base", 110_106_428},
		{"large", 336_226_108},
	}
	for _, tc := range tests {
		c, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ParamCount(AllHeads); got != tc.want {
			t.Errorf("%s: %d parameters, want %d", tc.preset, got, tc.want)
		}
	}
}

// TestParamCountMatchesModel checks the closed form against the parameters a model allocates.
func TestParamCountMatchesModel(t *testing.T) {
	for _, name := range []string{"tiny", "mini"} {
		for _, heads := range []Heads{AllHeads, {}, {Pooler: true}, {MLM: true}} {
			for _, tied := range []bool{true, false} {
				c, _ := Preset(name)
				c.TieWordEmbeddings = tied
				m, err := NewModel(c, heads)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := c.ParamCount(heads), m.NumParams(); got != want {
					t.Errorf("%s %+v tied=%v: ParamCount %d, model has %d", name, heads, tied, got, want)
				}
			}
		}
	}
}

func TestPresets(t *testing.T) {
	want := map[string][4]int{ // L, H, A, I
		"tiny": {2, 128, 2, 512}, "mini": {4, 256, 4, 1024}, "small": {4, 512, 8, 2048},
		"medium": {8, 512, 8, 2048}, "base": {12, 768, 12, 3072}, "large": {24, 1024, 16, 4096},
	}
	for name, w := range want {
		c, err := Preset(strings.ToUpper(name))
		if err != nil {
			t.Fatal(err)
		}
		got := [4]int{c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize}
		if got != w || c.HiddenAct != "gelu" || c.LayerNormEps != 1e-12 {
			t.Errorf("%s: %v act %s eps %g", name, got, c.HiddenAct, c.LayerNormEps)
		}
	}
	if got := PresetNames(); strings.Join(got, ",") != "tiny,mini,small,medium,base,large" {
		t.Errorf("PresetNames = %v", got)
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, json string
		check      func(Config) bool
		wantErr    string
	}{
		{"defaults", `{}`, func(c Config) bool { return c.HiddenSize == 768 && c.LayerNormEps == 1e-12 && c.TieWordEmbeddings }, ""},
		{"eps kept", `{"layer_norm_eps":1e-5}`, func(c Config) bool { return c.LayerNormEps == 1e-5 }, ""},
		{"tanh gelu named", `{"hidden_act":"gelu_new"}`, func(c Config) bool { return c.HiddenAct == "gelu_new" }, ""},
		{"null is default", `{"hidden_act":null,"vocab_size":null}`, func(c Config) bool { return c.HiddenAct == "gelu" && c.VocabSize == 30522 }, ""},
		{"extra kept", `{"id2label":{"0":"neg"},"architectures":["BertForMaskedLM"]}`, func(c Config) bool { return string(c.Extra["id2label"]) == `{"0":"neg"}` }, ""},
		{"bad json", `{"hidden_size":`, nil, "config.json"},
		{"wrong type", `{"hidden_size":"big"}`, nil, "hidden_size"},
		{"heads do not divide", `{"hidden_size":100,"num_attention_heads":12}`, nil, "not a multiple"},
		{"unknown act", `{"hidden_act":"swiglu"}`, nil, "swiglu"},
		{"not a family", `{"model_type":"xlnet"}`, nil, "xlnet"},
		{"relative key", `{"position_embedding_type":"relative_key"}`, func(c Config) bool { return c.Relative() && c.PositionEmbeddingType == "relative_key" }, ""},
		{"relative key query", `{"position_embedding_type":"relative_key_query"}`, func(c Config) bool { return c.Relative() }, ""},
		{"absolute by default", `{"position_embedding_type":null}`, func(c Config) bool { return !c.Relative() && c.PositionEmbeddingType == "absolute" }, ""},
		{"unknown positions", `{"position_embedding_type":"rotary"}`, nil, "position_embedding_type \"rotary\""},
		{"huge vocab", `{"vocab_size":1e12}`, nil, "vocab_size"},
		{"negative layers", `{"num_hidden_layers":-1}`, nil, "num_hidden_layers"},
		{"zero eps", `{"layer_norm_eps":0}`, nil, "layer_norm_eps"},
		{"pad outside", `{"pad_token_id":40000}`, nil, "pad_token_id"},
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

func TestConfigRoundTrip(t *testing.T) {
	in := `{"architectures":["BertForPreTraining"],"hidden_size":64,"num_attention_heads":4,"intermediate_size":128,
	"num_hidden_layers":2,"vocab_size":2000,"max_position_embeddings":32,"id2label":{"0":"a","1":"b"},"torch_dtype":"float32"}`
	c, err := ParseConfig([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"architectures", "id2label", "torch_dtype", "hidden_size", "layer_norm_eps", "hidden_act", "model_type"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q lost: %s", k, out)
		}
	}
	c2, err := ParseConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	if c2.HiddenSize != 64 || c2.VocabSize != 2000 || string(c2.Extra["id2label"]) != string(c.Extra["id2label"]) {
		t.Errorf("round trip changed the config: %+v", c2)
	}
}

// FuzzParseConfig: any bytes give a config that validates, or an error; never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"vocab_size":2000,"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"hidden_act":"gelu","layer_norm_eps":1e-12}`))
	f.Add([]byte(`{"hidden_size":0}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"id2label":{"0":"x"},"tie_word_embeddings":false}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseConfig accepted an invalid config: %v", err)
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := ParseConfig(out); err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
	})
}

func TestReshape(t *testing.T) {
	base, err := Preset("mini") // 4 x 256, 4 heads, intermediate 1024
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s                     Shape
		layers, hidden, heads int
		inter                 int
		err                   bool
	}{
		{Shape{}, 4, 256, 4, 1024, false},
		{Shape{Layers: 8}, 8, 256, 4, 1024, false},
		{Shape{Hidden: 384}, 4, 384, 6, 1536, false},
		{Shape{Hidden: 384, Heads: 12, Intermediate: 1000}, 4, 384, 12, 1000, false},
		{Shape{Hidden: 32}, 4, 32, 1, 128, false},
		{Shape{Heads: 3}, 0, 0, 0, 0, true},
		{Shape{Layers: -2}, 0, 0, 0, 0, true},
	} {
		got, err := base.Reshape(c.s)
		if c.err {
			if err == nil {
				t.Errorf("%+v: no error", c.s)
			}
			continue
		}
		if err != nil || got.NumHiddenLayers != c.layers || got.HiddenSize != c.hidden || got.NumAttentionHeads != c.heads || got.IntermediateSize != c.inter {
			t.Errorf("%+v: %d x %d, %d heads, intermediate %d, %v", c.s, got.NumHiddenLayers, got.HiddenSize, got.NumAttentionHeads, got.IntermediateSize, err)
		}
	}
}

// PackWeights marks the packed weights streamed (tensor.PackedB.SetStreamed) when they are
// more than streamedBytes together, and then only those large enough to be asked for ahead;
// under the bound none, in place or not.
func TestPackWeightsStreamed(t *testing.T) {
	// One layer of BERT-Base's width with its heads: 7.1 M floats in the layer, 0.6 M in the
	// MLM transform, V·768 in the decoder: V 500 stays under 32 MiB (8.05 M floats), V 3,000
	// goes over (9.97 M).
	for _, tc := range []struct {
		vocab    int
		inPlace  bool
		streamed bool
	}{{500, false, false}, {3000, false, true}, {3000, true, true}, {500, true, false}} {
		c := DefaultConfig()
		c.VocabSize, c.NumHiddenLayers = tc.vocab, 1
		m, err := NewRandom(c, AllHeads, 1)
		if err != nil {
			t.Fatal(err)
		}
		if tc.inPlace {
			m.PackWeightsInPlace()
		} else {
			m.PackWeights()
		}
		L := &m.Layers[0]
		for _, l := range []*Linear{&L.Query, &L.Inter, &L.Out, &m.MLM.Transform} {
			if got := l.packed.Streamed(); got != tc.streamed {
				t.Errorf("vocab %d, in place %v: %dx%d streamed %v, want %v", tc.vocab, tc.inPlace, l.packed.N, l.packed.K, got, tc.streamed)
			}
		}
		if got := m.MLM.decPacked.Streamed(); got != tc.streamed {
			t.Errorf("vocab %d, in place %v: decoder streamed %v, want %v", tc.vocab, tc.inPlace, got, tc.streamed)
		}
	}
}
