// Package bert is the BERT encoder of Devlin et al. (2018) with HuggingFace transformers'
// parameter names and numerics: embeddings, post-LN transformer layers, pooler and the
// pre-training heads (MLM with a tied decoder, NSP).
package bert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Config is a HuggingFace BertConfig (config.json). Keys this package does not use (id2label,
// architectures, torch_dtype, ...) are kept in Extra and written back unchanged.
type Config struct {
	VocabSize                 int     `json:"vocab_size"`
	HiddenSize                int     `json:"hidden_size"`
	NumHiddenLayers           int     `json:"num_hidden_layers"`
	NumAttentionHeads         int     `json:"num_attention_heads"`
	IntermediateSize          int     `json:"intermediate_size"`
	HiddenAct                 string  `json:"hidden_act"`
	HiddenDropoutProb         float64 `json:"hidden_dropout_prob"`
	AttentionProbsDropoutProb float64 `json:"attention_probs_dropout_prob"`
	MaxPositionEmbeddings     int     `json:"max_position_embeddings"`
	TypeVocabSize             int     `json:"type_vocab_size"`
	InitializerRange          float64 `json:"initializer_range"`
	LayerNormEps              float64 `json:"layer_norm_eps"`
	PadTokenID                int     `json:"pad_token_id"`
	PositionEmbeddingType     string  `json:"position_embedding_type"`
	// TieWordEmbeddings ties the MLM decoder to the word embeddings (HF default true).
	TieWordEmbeddings bool `json:"tie_word_embeddings"`

	// Family is config.json's model_type for the families other than BERT (FamilyRoBERTa,
	// FamilyDistilBERT); "" for BERT, whose model_type stays in Extra as it was read.
	Family Family `json:"-"`
	// SinusoidalPosEmbds is DistilBERT's sinusoidal_pos_embds: the position embeddings are the
	// fixed sinusoids of DistilBERTSinusoids (checkpoints store them all the same).
	SinusoidalPosEmbds bool `json:"-"`
	// EmbeddingSize is ALBERT's embedding_size E: the embeddings are [·, E] and a linear map
	// (embedding_hidden_mapping_in) takes them to the hidden size; 0 means HiddenSize.
	EmbeddingSize int `json:"-"`
	// Disentangled holds DeBERTa-v2's attention settings; nil for every other family.
	Disentangled *Disentangled `json:"-"`
	// NoPositionEmbeddings is DeBERTa's position_biased_input false: no position embeddings
	// are added to the input (positions enter through the disentangled attention only).
	NoPositionEmbeddings bool `json:"-"`
	// NumHiddenGroups is ALBERT's num_hidden_groups: the distinct layers that the
	// num_hidden_layers blocks share (Config.LayerIndex); 0 means one per block.
	NumHiddenGroups int `json:"-"`

	// Extra holds every other key of config.json, written back as it was read.
	Extra map[string]json.RawMessage `json:"-"`
}

// known lists the JSON keys that Config models as fields.
var known = map[string]bool{
	"vocab_size": true, "hidden_size": true, "num_hidden_layers": true, "num_attention_heads": true,
	"intermediate_size": true, "hidden_act": true, "hidden_dropout_prob": true,
	"attention_probs_dropout_prob": true, "max_position_embeddings": true, "type_vocab_size": true,
	"initializer_range": true, "layer_norm_eps": true, "pad_token_id": true,
	"position_embedding_type": true, "tie_word_embeddings": true,
}

// DefaultConfig is HF's BertConfig() default: BERT-Base, uncased vocabulary.
func DefaultConfig() Config {
	return Config{
		VocabSize: 30522, HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12,
		IntermediateSize: 3072, HiddenAct: "gelu", HiddenDropoutProb: 0.1,
		AttentionProbsDropoutProb: 0.1, MaxPositionEmbeddings: 512, TypeVocabSize: 2,
		InitializerRange: 0.02, LayerNormEps: 1e-12, PadTokenID: 0,
		PositionEmbeddingType: PositionAbsolute, TieWordEmbeddings: true,
	}
}

// Presets are the sizes of the BERT paper and of Turc et al. (2019, "Well-Read Students Learn
// Better") with the uncased vocabulary: L layers, H hidden, A heads, intermediate 4H.
var Presets = map[string]struct{ L, H, A int }{
	"tiny":   {2, 128, 2},
	"mini":   {4, 256, 4},
	"small":  {4, 512, 8},
	"medium": {8, 512, 8},
	"base":   {12, 768, 12},
	"large":  {24, 1024, 16},
}

// Shape overrides a config's size: each field that is not 0 replaces the config's number.
type Shape struct {
	Layers, Hidden, Heads, Intermediate int
}

// Reshape returns c with the numbers of s: num_hidden_layers, hidden_size (the intermediate
// size then follows at 4x, and the heads at one per 64 dimensions, unless s gives them),
// num_attention_heads and intermediate_size. A negative number, or a hidden size that the heads
// do not divide, is an error.
func (c Config) Reshape(s Shape) (Config, error) {
	if s.Layers < 0 || s.Hidden < 0 || s.Heads < 0 || s.Intermediate < 0 {
		return c, fmt.Errorf("bert: shape %+v: negative size", s)
	}
	if s.Layers > 0 {
		c.NumHiddenLayers = s.Layers
	}
	if s.Hidden > 0 {
		c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads = s.Hidden, 4*s.Hidden, max(1, s.Hidden/64)
	}
	if s.Heads > 0 {
		c.NumAttentionHeads = s.Heads
	}
	if s.Intermediate > 0 {
		c.IntermediateSize = s.Intermediate
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return c, fmt.Errorf("bert: hidden size %d is not a multiple of %d attention heads", c.HiddenSize, c.NumAttentionHeads)
	}
	return c, nil
}

// PresetNames lists the presets from smallest to largest.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := Presets[names[i]], Presets[names[j]]
		return a.L*a.H*a.H < b.L*b.H*b.H
	})
	return names
}

// Preset returns the config of a named preset (case-insensitive: tiny, mini, small, medium, base, large).
func Preset(name string) (Config, error) {
	p, ok := Presets[strings.ToLower(name)]
	if !ok {
		return Config{}, fmt.Errorf("bert: unknown preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	c := DefaultConfig()
	c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize = p.L, p.H, p.A, 4*p.H
	return c, nil
}

// The position_embedding_type values of HF 4.x's BertConfig.
const (
	// PositionAbsolute adds a learned row per position to the embeddings (BERT's own).
	PositionAbsolute = "absolute"
	// PositionRelativeKey adds no position embedding; each layer learns a distance embedding
	// r[l−j] per clipped offset and the raw score of query l and key j gains q_l·r[l−j]
	// (Shaw et al. 2018).
	PositionRelativeKey = "relative_key"
	// PositionRelativeKeyQuery is PositionRelativeKey plus the term k_j·r[l−j] (Huang et al.
	// 2020, "method 4"). transformers 5 removed both relative types from BERT
	// (huggingface/transformers#41170): such a model loads in transformers 4.x only.
	PositionRelativeKeyQuery = "relative_key_query"
)

// PositionTypes lists the position_embedding_type values this package implements.
var PositionTypes = []string{PositionAbsolute, PositionRelativeKey, PositionRelativeKeyQuery}

// Relative reports whether the config uses relative positions (relative_key or
// relative_key_query): distance embeddings in every layer and no absolute position embedding
// added in the embeddings (HF keeps that tensor; it gets no gradient).
func (c Config) Relative() bool {
	return c.PositionEmbeddingType == PositionRelativeKey || c.PositionEmbeddingType == PositionRelativeKeyQuery
}

// Positions is the config's position_embedding_type as it acts: "" is absolute.
func (c Config) Positions() string {
	if c.PositionEmbeddingType == "" {
		return PositionAbsolute
	}
	return c.PositionEmbeddingType
}

// HeadDim is HiddenSize / NumAttentionHeads.
func (c Config) HeadDim() int { return c.HiddenSize / c.NumAttentionHeads }

// Validate checks that the config describes a model this package can build.
func (c Config) Validate() error {
	pos := func(name string, v int) error {
		if v <= 0 {
			return fmt.Errorf("config: %s must be positive, got %d", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		n string
		v int
	}{{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.NumHiddenLayers},
		{"num_attention_heads", c.NumAttentionHeads}, {"intermediate_size", c.IntermediateSize},
		{"max_position_embeddings", c.MaxPositionEmbeddings}} {
		if err := pos(f.n, f.v); err != nil {
			return err
		}
	}
	switch {
	case c.Family.Is(FamilyDistilBERT):
		if c.TypeVocabSize != 0 {
			return fmt.Errorf("config: distilbert has no token types, got type_vocab_size %d", c.TypeVocabSize)
		}
	case c.Family.Is(FamilyDeBERTaV2):
		if c.TypeVocabSize < 0 {
			return fmt.Errorf("config: type_vocab_size must not be negative, got %d", c.TypeVocabSize)
		}
	default:
		if err := pos("type_vocab_size", c.TypeVocabSize); err != nil {
			return err
		}
	}
	// Bound sizes so that a lying config cannot make us allocate terabytes.
	const maxDim = 1 << 20
	if c.VocabSize > maxDim || c.HiddenSize > 1<<16 || c.IntermediateSize > 1<<18 ||
		c.NumHiddenLayers > 1024 || c.MaxPositionEmbeddings > maxDim || c.TypeVocabSize > 1<<16 ||
		c.NumAttentionHeads > c.HiddenSize {
		return fmt.Errorf("config: sizes out of range (vocab %d, hidden %d, intermediate %d, layers %d, positions %d, types %d, heads %d)",
			c.VocabSize, c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers, c.MaxPositionEmbeddings, c.TypeVocabSize, c.NumAttentionHeads)
	}
	if c.EmbeddingSize < 0 || c.EmbeddingSize > 1<<16 {
		return fmt.Errorf("config: embedding_size %d outside [0, 65536]", c.EmbeddingSize)
	}
	if c.NumHiddenGroups < 0 || c.NumHiddenGroups > c.NumHiddenLayers {
		return fmt.Errorf("config: num_hidden_groups %d outside [1, num_hidden_layers %d]", c.NumHiddenGroups, c.NumHiddenLayers)
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("config: hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	}
	if _, err := activation(c.HiddenAct); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	switch c.PositionEmbeddingType {
	case "", PositionAbsolute, PositionRelativeKey, PositionRelativeKeyQuery:
	default:
		return fmt.Errorf("config: position_embedding_type %q is not supported (want %q, %q or %q)",
			c.PositionEmbeddingType, PositionAbsolute, PositionRelativeKey, PositionRelativeKeyQuery)
	}
	if !(c.LayerNormEps > 0) || math.IsInf(c.LayerNormEps, 0) {
		return fmt.Errorf("config: layer_norm_eps must be positive, got %g", c.LayerNormEps)
	}
	if c.PadTokenID < 0 || c.PadTokenID >= c.VocabSize {
		return fmt.Errorf("config: pad_token_id %d outside the vocabulary of %d", c.PadTokenID, c.VocabSize)
	}
	if c.MaxSequenceLength() <= 0 {
		return fmt.Errorf("config: max_position_embeddings %d leaves no position after pad_token_id %d (%s counts positions from pad_token_id+1)",
			c.MaxPositionEmbeddings, c.PadTokenID, c.Family.Name())
	}
	for _, p := range []struct {
		n string
		v float64
	}{{"hidden_dropout_prob", c.HiddenDropoutProb}, {"attention_probs_dropout_prob", c.AttentionProbsDropoutProb}} {
		if !(p.v >= 0 && p.v < 1) {
			return fmt.Errorf("config: %s must be in [0, 1), got %g", p.n, p.v)
		}
	}
	return nil
}

// ParseConfig reads a HF config.json. Its model_type chooses the family (Families; absent is
// BERT). For BERT, absent keys take HF's BertConfig defaults and keys it does not model are kept
// in Extra. For the other families absent keys take their HF config class's defaults, and a key
// that is neither modelled nor one of PretrainedConfig's generic keys is an error naming it.
// The result is validated.
func ParseConfig(data []byte) (Config, error) {
	c := DefaultConfig()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("config.json: %w", err)
	}
	if mt, ok := raw["model_type"]; ok {
		var s string
		if err := json.Unmarshal(mt, &s); err == nil && s != string(FamilyBERT) {
			clean, err := rawConfig(data)
			if err != nil {
				return Config{}, err
			}
			return parseFamily(Family(s), clean)
		}
	}
	// Some exporters write null for defaults; treat null as absent.
	for k, v := range raw {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) && known[k] {
			delete(raw, k)
		}
	}
	clean, _ := json.Marshal(raw)
	if err := json.Unmarshal(clean, &c); err != nil {
		return Config{}, fmt.Errorf("config.json: %w", err)
	}
	c.Extra = map[string]json.RawMessage{}
	for k, v := range raw {
		if !known[k] {
			c.Extra[k] = v
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// MarshalJSON writes the config with HF's key names, Extra keys included, keys sorted.
func (c Config) MarshalJSON() ([]byte, error) {
	if c.Family.Is(FamilyDistilBERT) {
		return c.marshalDistilBERT()
	}
	if c.Family.Is(FamilyALBERT) || c.Family.Is(FamilyELECTRA) {
		return c.marshalEmbeddingSize()
	}
	if c.Family.Is(FamilyDeBERTaV2) {
		return c.marshalDeBERTa()
	}
	type plain Config
	base, err := json.Marshal(plain(c))
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(base, &m); err != nil {
		return nil, err
	}
	for k, v := range c.Extra {
		if !known[k] {
			m[k] = v
		}
	}
	if _, ok := m["model_type"]; !ok || c.Family != "" {
		// A family's own (a RoBERTa config made here rather than read has none in Extra).
		m["model_type"] = json.RawMessage(fmt.Sprintf("%q", c.Family.Name()))
	}
	return json.MarshalIndent(m, "", "  ")
}

// SetExtra sets a config.json key that Config does not model (for example id2label).
func (c *Config) SetExtra(key string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("config: key %q: %w", key, err)
	}
	if c.Extra == nil {
		c.Extra = map[string]json.RawMessage{}
	}
	c.Extra[key] = b
	return nil
}
