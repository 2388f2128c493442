package bert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Family is the architecture that config.json's model_type names. Every family is an
// assembly of this package's blocks (embeddings, post-LN attention and feed-forward layers,
// pooler, MLM head): a family differs from BERT only in what its config turns on or off
// (token types, how position ids are counted, the MLM head's activation), never in a block
// of its own. core/hf maps each family's parameter names to BERT's.
type Family string

// The families this package runs.
const (
	// FamilyBERT is BERT itself (model_type "bert"; the zero Family too).
	FamilyBERT Family = "bert"
	// FamilyRoBERTa is Liu et al. (2019): BERT's blocks with position ids counted from
	// pad_token_id+1 over the non-pad tokens (pads keep pad_token_id), and an MLM head
	// (lm_head) whose activation is always the exact GELU.
	FamilyRoBERTa Family = "roberta"
	// FamilyDistilBERT is Sanh et al. (2019): no token types, learned or sinusoidal
	// positions from 0, LayerNorm eps fixed at 1e-12, no pooler; config keys of its own (dim,
	// n_layers, ...).
	FamilyDistilBERT Family = "distilbert"
	// FamilyALBERT is Lan et al. (2019): embeddings of their own size E (embedding_size) mapped to
	// the hidden size by a linear layer, num_hidden_layers blocks sharing num_hidden_groups
	// layers, the MLM head back down to E before the tied decoder, and sentence-order
	// prediction (SOP) on the pooled output where BERT has NSP.
	FamilyALBERT Family = "albert"
	// FamilyELECTRA is Clark et al. (2020): BERT's blocks with embeddings of their own size E
	// (embedding_size), mapped to the hidden size by a linear layer when the two differ; the
	// discriminator (ElectraForPreTraining) scores every token as replaced or original (Model.RTD),
	// the generator (ElectraForMaskedLM) has an MLM head back down to E whose activation is
	// always the exact GELU.
	FamilyELECTRA Family = "electra"
	// FamilyDeBERTaV2 is He et al. (2021), DeBERTa v2 and v3: disentangled attention (see
	// Disentangled), no absolute positions unless position_biased_input, padding rows of the
	// embeddings and of the attention set to 0.
	FamilyDeBERTaV2 Family = "deberta-v2"
)

// Families lists the model_type values ParseConfig accepts.
var Families = []Family{FamilyBERT, FamilyRoBERTa, FamilyDistilBERT, FamilyALBERT, FamilyELECTRA, FamilyDeBERTaV2}

// Disentangled is DeBERTa-v2's attention (DisentangledSelfAttention with share_att_key): the raw
// score of query i and key j is q_i·k_j, plus q_i·K(r[c2p(i, j)]) with C2P ("content to
// position"), plus k_j·Q(r[p2c(i, j)]) with P2C ("position to content"), all divided by
// √(d·(1 + C2P + P2C)); r are the relative embeddings (LayerNorm-ed with NormRelEmb) and K, Q
// the layer's own key and query projections. c2p(i, j) = clamp(bucket(i − j) + span) and
// p2c(i, j) = clamp(−bucket(j − i) + span), bucket the log buckets of RelativeBucket.
type Disentangled struct {
	C2P, P2C bool
	// Relative is relative_attention: without it there are no relative terms (only the scale).
	Relative bool
	// PositionBuckets is position_buckets (≤ 0: none); MaxRelativePositions is
	// max_relative_positions after HF's default (max_position_embeddings when < 1).
	PositionBuckets, MaxRelativePositions int
	// NormRelEmb is norm_rel_ebd "layer_norm": the relative embeddings go through the encoder's
	// LayerNorm before use.
	NormRelEmb bool
}

// Span is att_span (pos_ebd_size): position_buckets, or max_relative_positions without
// buckets. The relative embeddings have 2·Span rows.
func (d Disentangled) Span() int {
	if d.PositionBuckets > 0 {
		return d.PositionBuckets
	}
	return d.MaxRelativePositions
}

// ScaleFactor is 1 plus one for each of c2p and p2c: scores are divided by √(d·ScaleFactor).
func (d Disentangled) ScaleFactor() int {
	n := 1
	if d.C2P {
		n++
	}
	if d.P2C {
		n++
	}
	return n
}

// RelativeBucket is HF's make_log_bucket_position of one offset rel = i − j (float32 math, as
// transformers computes it): offsets within ±bucketSize/2 are kept, larger ones go to buckets
// spaced by the log of their size up to maxPosition; without buckets (bucketSize ≤ 0) rel itself.
func RelativeBucket(rel, bucketSize, maxPosition int) int {
	if bucketSize <= 0 || maxPosition <= 0 {
		return rel
	}
	mid := bucketSize / 2
	abs := rel
	if rel < mid && rel > -mid {
		abs = mid - 1
	} else if abs < 0 {
		abs = -abs
	}
	if abs <= mid {
		return rel
	}
	lg := func(x float32) float32 { return float32(math.Log(float64(x))) }
	ratio := lg(float32(abs)/float32(mid)) / lg(float32(float64(maxPosition-1)/float64(mid)))
	pos := int(float32(math.Ceil(float64(ratio*float32(mid-1))))) + mid
	if rel < 0 {
		return -pos
	}
	return pos
}

// Name is the model_type of f: "bert" for the zero Family.
func (f Family) Name() string {
	if f == "" {
		return string(FamilyBERT)
	}
	return string(f)
}

// Is reports whether f and g are the same family (the zero Family is BERT).
func (f Family) Is(g Family) bool { return f.Name() == g.Name() }

// FamilyOf is c's family (FamilyBERT for a config without one).
func (c Config) FamilyOf() Family { return Family(c.Family.Name()) }

// EmbDim is the width E of the embeddings: embedding_size for ALBERT, else the hidden size.
func (c Config) EmbDim() int {
	if c.EmbeddingSize > 0 {
		return c.EmbeddingSize
	}
	return c.HiddenSize
}

// HasEmbProj reports whether a linear map takes the embeddings to the hidden size (ALBERT's
// embedding_hidden_mapping_in, there even when E equals the hidden size).
func (c Config) HasEmbProj() bool { return c.Family.Is(FamilyALBERT) || c.EmbDim() != c.HiddenSize }

// NumLayers is the number of distinct layers: num_hidden_groups for ALBERT, else one per block.
func (c Config) NumLayers() int {
	if c.NumHiddenGroups > 0 {
		return c.NumHiddenGroups
	}
	return c.NumHiddenLayers
}

// LayerIndex is the distinct layer that block l (of num_hidden_layers) runs: l itself, or for
// ALBERT the group of HF's AlbertTransformer, int(l / (num_hidden_layers / num_hidden_groups))
// in float64 as Python computes it.
func (c Config) LayerIndex(l int) int {
	if c.NumHiddenGroups <= 0 || c.NumHiddenGroups == c.NumHiddenLayers {
		return l
	}
	return int(float64(l) / (float64(c.NumHiddenLayers) / float64(c.NumHiddenGroups)))
}

// SharesLayers reports whether blocks share layers (ALBERT with fewer groups than layers).
func (c Config) SharesLayers() bool { return c.NumLayers() != c.NumHiddenLayers }

// HasTokenTypes reports whether the model has token type embeddings (DistilBERT has none).
func (c Config) HasTokenTypes() bool { return c.TypeVocabSize > 0 }

// MLMAct is the hidden_act name of the MLM head's activation: RoBERTa's lm_head and ELECTRA's
// generator_predictions always apply the exact GELU; BERT, DistilBERT (its activation) and
// ALBERT apply the config's hidden_act.
func (c Config) MLMAct() string {
	if c.Family.Is(FamilyRoBERTa) || c.Family.Is(FamilyELECTRA) {
		return "gelu"
	}
	return c.HiddenAct
}

// MaxSequenceLength is the longest sequence the position embeddings cover: max_position_embeddings,
// less pad_token_id+1 for RoBERTa, whose position ids start at pad_token_id+1.
func (c Config) MaxSequenceLength() int {
	if c.Family.Is(FamilyRoBERTa) {
		return c.MaxPositionEmbeddings - c.PadTokenID - 1
	}
	return c.MaxPositionEmbeddings
}

// PositionIDs fills pos [B·S] with the position id of every token of ids [B, S]: its index s in
// the sequence for BERT and DistilBERT; for RoBERTa (HF's create_position_ids_from_input_ids)
// pad_token_id plus the number of non-pad tokens up to and including it, and pad_token_id for
// a pad, whatever the attention mask says.
func (c Config) PositionIDs(pos, ids []int, S int) {
	if !c.Family.Is(FamilyRoBERTa) {
		for i := range pos {
			pos[i] = i % S
		}
		return
	}
	pad, n := c.PadTokenID, 0
	for i, id := range ids[:len(pos)] {
		if i%S == 0 {
			n = 0
		}
		if id == pad {
			pos[i] = pad
			continue
		}
		n++
		pos[i] = pad + n
	}
}

// DistilBERTSinusoids fills pos [P, H] with the fixed position embeddings of DistilBERT's
// sinusoidal_pos_embds (HF's create_sinusoidal_embeddings): row p, column j holds
// sin (j even) or cos (j odd) of p / 10000^(2⌊j/2⌋/H), computed in float64.
func DistilBERTSinusoids(pos []float32, P, H int) {
	for p := range P {
		row := pos[p*H : (p+1)*H]
		for j := range row {
			a := float64(p) / math.Pow(10000, float64(2*(j/2))/float64(H))
			if j%2 == 0 {
				row[j] = float32(math.Sin(a))
			} else {
				row[j] = float32(math.Cos(a))
			}
		}
	}
}

// genericKeys are config.json keys of HF's PretrainedConfig that do not change an encoder's
// forward pass; a family's config keeps them in Extra. Keys with a value that would change it
// (is_decoder true, ...) are checked by checkGeneric.
var genericKeys = map[string]bool{
	"architectures": true, "model_type": true, "transformers_version": true, "torch_dtype": true,
	"dtype": true, "_name_or_path": true, "id2label": true, "label2id": true, "num_labels": true,
	"problem_type": true, "finetuning_task": true, "bos_token_id": true, "eos_token_id": true,
	"sep_token_id": true, "cls_token_id": true, "classifier_dropout": true, "use_cache": true,
	"output_past": true, "gradient_checkpointing": true, "tokenizer_class": true,
	"task_specific_params": true, "output_hidden_states": true, "output_attentions": true,
	"return_dict": true, "torchscript": true, "pruned_heads": true, "chunk_size_feed_forward": true,
	"is_decoder": true, "add_cross_attention": true, "is_encoder_decoder": true,
}

// checkGeneric refuses generic keys whose value would change the forward pass.
func checkGeneric(fam Family, key string, v json.RawMessage) error {
	switch key {
	case "is_decoder", "add_cross_attention", "is_encoder_decoder":
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("config.json: field %q: %w", key, err)
		}
		if b {
			return fmt.Errorf("config.json: field %q: true is not supported for model_type %q (an encoder only)", key, fam.Name())
		}
	case "pruned_heads":
		var m map[string][]int
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("config.json: field %q: %w", key, err)
		}
		if len(m) > 0 {
			return fmt.Errorf("config.json: field %q: pruned heads are not supported", key)
		}
	}
	return nil
}

// keepInExtra are modelled keys that a family's config also keeps in Extra, so that writing the
// config back keeps them: dropouts of heads this package does not build, and ALBERT's
// inner_group_num.
var keepInExtra = map[string]bool{"qa_dropout": true, "seq_classif_dropout": true,
	"classifier_dropout_prob": true, "inner_group_num": true, "summary_type": true, "summary_use_proj": true,
	"summary_activation": true, "summary_last_dropout": true}

// rawConfig decodes config.json into its keys, null values left out (some exporters write
// null for a default).
func rawConfig(data []byte) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	for k, v := range raw {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(raw, k)
		}
	}
	return raw, nil
}

// sortedKeys lists m's keys in order, so that the first unknown key reported is always the same.
func sortedKeys(m map[string]json.RawMessage) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// parseFamily reads the config.json of a family other than BERT. Every key is either one the
// family models, a generic key (kept in Extra), or an error naming it.
func parseFamily(fam Family, raw map[string]json.RawMessage) (Config, error) {
	var c Config
	var fields map[string]any
	// check, if not nil, checks family-specific values after the keys are read.
	var check func(Config) error
	switch fam {
	case FamilyRoBERTa:
		// RobertaConfig is BertConfig with RoBERTa's special token ids.
		c = DefaultConfig()
		c.VocabSize, c.PadTokenID = 50265, 1
		fields = map[string]any{
			"vocab_size": &c.VocabSize, "hidden_size": &c.HiddenSize, "num_hidden_layers": &c.NumHiddenLayers,
			"num_attention_heads": &c.NumAttentionHeads, "intermediate_size": &c.IntermediateSize,
			"hidden_act": &c.HiddenAct, "hidden_dropout_prob": &c.HiddenDropoutProb,
			"attention_probs_dropout_prob": &c.AttentionProbsDropoutProb,
			"max_position_embeddings":      &c.MaxPositionEmbeddings, "type_vocab_size": &c.TypeVocabSize,
			"initializer_range": &c.InitializerRange, "layer_norm_eps": &c.LayerNormEps,
			"pad_token_id": &c.PadTokenID, "position_embedding_type": &c.PositionEmbeddingType,
			"tie_word_embeddings": &c.TieWordEmbeddings,
		}
	case FamilyDistilBERT:
		// DistilBertConfig's defaults; LayerNorm eps is not configurable (1e-12 everywhere).
		c = Config{VocabSize: 30522, MaxPositionEmbeddings: 512, NumHiddenLayers: 6, NumAttentionHeads: 12,
			HiddenSize: 768, IntermediateSize: 3072, HiddenDropoutProb: 0.1, AttentionProbsDropoutProb: 0.1,
			HiddenAct: "gelu", InitializerRange: 0.02, LayerNormEps: 1e-12, PadTokenID: 0,
			PositionEmbeddingType: PositionAbsolute, TieWordEmbeddings: true}
		var qa, seq float64
		fields = map[string]any{
			"vocab_size": &c.VocabSize, "max_position_embeddings": &c.MaxPositionEmbeddings,
			"sinusoidal_pos_embds": &c.SinusoidalPosEmbds, "n_layers": &c.NumHiddenLayers,
			"n_heads": &c.NumAttentionHeads, "dim": &c.HiddenSize, "hidden_dim": &c.IntermediateSize,
			"dropout": &c.HiddenDropoutProb, "attention_dropout": &c.AttentionProbsDropoutProb,
			"activation": &c.HiddenAct, "initializer_range": &c.InitializerRange,
			"pad_token_id": &c.PadTokenID, "tie_word_embeddings": &c.TieWordEmbeddings,
			// Dropouts of task heads this package does not build; kept for the round trip.
			"qa_dropout": &qa, "seq_classif_dropout": &seq,
		}
	case FamilyALBERT:
		// AlbertConfig's defaults (ALBERT-xxlarge's sizes).
		c = Config{VocabSize: 30000, HiddenSize: 4096, NumHiddenLayers: 12, NumAttentionHeads: 64,
			IntermediateSize: 16384, HiddenAct: "gelu_new", MaxPositionEmbeddings: 512, TypeVocabSize: 2,
			InitializerRange: 0.02, LayerNormEps: 1e-12, PadTokenID: 0, PositionEmbeddingType: PositionAbsolute,
			TieWordEmbeddings: true, EmbeddingSize: 128, NumHiddenGroups: 1}
		var classifierDropout float64
		inner := 1
		fields = map[string]any{
			"vocab_size": &c.VocabSize, "embedding_size": &c.EmbeddingSize, "hidden_size": &c.HiddenSize,
			"num_hidden_layers": &c.NumHiddenLayers, "num_hidden_groups": &c.NumHiddenGroups,
			"num_attention_heads": &c.NumAttentionHeads, "intermediate_size": &c.IntermediateSize,
			"inner_group_num": &inner, "hidden_act": &c.HiddenAct, "hidden_dropout_prob": &c.HiddenDropoutProb,
			"attention_probs_dropout_prob": &c.AttentionProbsDropoutProb,
			"max_position_embeddings":      &c.MaxPositionEmbeddings, "type_vocab_size": &c.TypeVocabSize,
			"initializer_range": &c.InitializerRange, "layer_norm_eps": &c.LayerNormEps,
			"pad_token_id": &c.PadTokenID, "position_embedding_type": &c.PositionEmbeddingType,
			"tie_word_embeddings": &c.TieWordEmbeddings,
			// The SOP head's dropout: kept for the round trip.
			"classifier_dropout_prob": &classifierDropout,
		}
		check = func(c Config) error {
			if inner != 1 {
				return fmt.Errorf("config.json: field \"inner_group_num\": %d is not supported (only 1, as in every published ALBERT)", inner)
			}
			if c.NumHiddenGroups < 1 {
				return fmt.Errorf("config.json: field \"num_hidden_groups\": %d, want at least 1", c.NumHiddenGroups)
			}
			if c.EmbeddingSize < 1 {
				return fmt.Errorf("config.json: field \"embedding_size\": %d, want at least 1", c.EmbeddingSize)
			}
			return nil
		}
	case FamilyELECTRA:
		// ElectraConfig's defaults (ELECTRA-small's sizes).
		c = Config{VocabSize: 30522, HiddenSize: 256, NumHiddenLayers: 12, NumAttentionHeads: 4,
			IntermediateSize: 1024, HiddenAct: "gelu", HiddenDropoutProb: 0.1, AttentionProbsDropoutProb: 0.1,
			MaxPositionEmbeddings: 512, TypeVocabSize: 2, InitializerRange: 0.02, LayerNormEps: 1e-12,
			PadTokenID: 0, PositionEmbeddingType: PositionAbsolute, TieWordEmbeddings: true, EmbeddingSize: 128}
		var summary json.RawMessage
		fields = map[string]any{
			"vocab_size": &c.VocabSize, "embedding_size": &c.EmbeddingSize, "hidden_size": &c.HiddenSize,
			"num_hidden_layers": &c.NumHiddenLayers, "num_attention_heads": &c.NumAttentionHeads,
			"intermediate_size": &c.IntermediateSize, "hidden_act": &c.HiddenAct,
			"hidden_dropout_prob": &c.HiddenDropoutProb, "attention_probs_dropout_prob": &c.AttentionProbsDropoutProb,
			"max_position_embeddings": &c.MaxPositionEmbeddings, "type_vocab_size": &c.TypeVocabSize,
			"initializer_range": &c.InitializerRange, "layer_norm_eps": &c.LayerNormEps,
			"pad_token_id": &c.PadTokenID, "position_embedding_type": &c.PositionEmbeddingType,
			"tie_word_embeddings": &c.TieWordEmbeddings,
			// The sequence-summary heads' settings (classification, multiple choice): kept for
			// the round trip.
			"summary_type": &summary, "summary_use_proj": &summary, "summary_activation": &summary,
			"summary_last_dropout": &summary,
		}
		check = func(c Config) error {
			if c.EmbeddingSize < 1 {
				return fmt.Errorf("config.json: field \"embedding_size\": %d, want at least 1", c.EmbeddingSize)
			}
			return nil
		}
	case FamilyDeBERTaV2:
		return parseDeBERTa(raw)
	default:
		return Config{}, fmt.Errorf("config.json: model_type %q is not supported (have %s)", fam, familyList())
	}
	c.Family = fam
	c.Extra = map[string]json.RawMessage{}
	for _, k := range sortedKeys(raw) {
		v := raw[k]
		if dst, ok := fields[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return Config{}, fmt.Errorf("config.json: field %q: %w", k, err)
			}
			if keepInExtra[k] {
				c.Extra[k] = v
			}
			continue
		}
		if fam == FamilyDistilBERT && k == "tie_weights_" {
			// Older DistilBertConfig's name for tying the projector to the word embeddings.
			if err := json.Unmarshal(v, &c.TieWordEmbeddings); err != nil {
				return Config{}, fmt.Errorf("config.json: field %q: %w", k, err)
			}
			c.Extra[k] = v
			continue
		}
		if !genericKeys[k] {
			return Config{}, fmt.Errorf("config.json: field %q is not supported for model_type %q", k, fam)
		}
		if err := checkGeneric(fam, k, v); err != nil {
			return Config{}, err
		}
		c.Extra[k] = v
	}
	if fam != FamilyDistilBERT && c.Positions() != PositionAbsolute {
		return Config{}, fmt.Errorf("config.json: field \"position_embedding_type\": %q is not supported for model_type %q (only %q)", c.PositionEmbeddingType, fam, PositionAbsolute)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	if check != nil {
		if err := check(c); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// familyList names the families for messages.
func familyList() string {
	names := make([]string, len(Families))
	for i, f := range Families {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// marshalDistilBERT writes a DistilBERT config with DistilBertConfig's key names.
func (c Config) marshalDistilBERT() ([]byte, error) {
	m := map[string]any{
		"model_type": "distilbert", "vocab_size": c.VocabSize, "max_position_embeddings": c.MaxPositionEmbeddings,
		"sinusoidal_pos_embds": c.SinusoidalPosEmbds, "n_layers": c.NumHiddenLayers, "n_heads": c.NumAttentionHeads,
		"dim": c.HiddenSize, "hidden_dim": c.IntermediateSize, "dropout": c.HiddenDropoutProb,
		"attention_dropout": c.AttentionProbsDropoutProb, "activation": c.HiddenAct,
		"initializer_range": c.InitializerRange, "pad_token_id": c.PadTokenID,
		"tie_word_embeddings": c.TieWordEmbeddings,
	}
	return marshalWithExtra(m, c.Extra)
}

// marshalEmbeddingSize writes an ALBERT or ELECTRA config: BERT's keys, embedding_size (and
// ALBERT's num_hidden_groups) and the Extra keys.
func (c Config) marshalEmbeddingSize() ([]byte, error) {
	c2 := c
	c2.Family = FamilyRoBERTa // any family that writes BERT's keys
	base, err := c2.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(base, &m); err != nil {
		return nil, err
	}
	m["embedding_size"] = json.RawMessage(fmt.Sprint(c.EmbDim()))
	if c.Family.Is(FamilyALBERT) {
		m["num_hidden_groups"] = json.RawMessage(fmt.Sprint(c.NumLayers()))
	}
	m["model_type"] = json.RawMessage(fmt.Sprintf("%q", c.Family.Name()))
	return json.MarshalIndent(m, "", "  ")
}

// parseDeBERTa reads a DebertaV2Config. Settings no published DeBERTa-v2/v3 checkpoint uses
// (share_att_key false, conv layers, an embedding size or head size of their own) are refused,
// naming the field.
func parseDeBERTa(raw map[string]json.RawMessage) (Config, error) {
	c := Config{VocabSize: 128100, HiddenSize: 1536, NumHiddenLayers: 24, NumAttentionHeads: 24,
		IntermediateSize: 6144, HiddenAct: "gelu", HiddenDropoutProb: 0.1, AttentionProbsDropoutProb: 0.1,
		MaxPositionEmbeddings: 512, TypeVocabSize: 0, InitializerRange: 0.02, LayerNormEps: 1e-7,
		PadTokenID: 0, PositionEmbeddingType: PositionAbsolute, TieWordEmbeddings: true, Family: FamilyDeBERTaV2}
	var (
		relative, shareKey, biased, legacy = false, false, true, true
		maxRel, buckets, conv              = -1, -1, 0
		embSize, headSize                  = 0, 0
		normRel                            = "none"
		posAtt                             json.RawMessage
		ignored                            json.RawMessage
	)
	fields := map[string]any{
		"vocab_size": &c.VocabSize, "hidden_size": &c.HiddenSize, "num_hidden_layers": &c.NumHiddenLayers,
		"num_attention_heads": &c.NumAttentionHeads, "intermediate_size": &c.IntermediateSize,
		"hidden_act": &c.HiddenAct, "hidden_dropout_prob": &c.HiddenDropoutProb,
		"attention_probs_dropout_prob": &c.AttentionProbsDropoutProb,
		"max_position_embeddings":      &c.MaxPositionEmbeddings, "type_vocab_size": &c.TypeVocabSize,
		"initializer_range": &c.InitializerRange, "layer_norm_eps": &c.LayerNormEps,
		"pad_token_id": &c.PadTokenID, "tie_word_embeddings": &c.TieWordEmbeddings,
		"relative_attention": &relative, "share_att_key": &shareKey, "position_biased_input": &biased,
		"max_relative_positions": &maxRel, "position_buckets": &buckets, "norm_rel_ebd": &normRel,
		"pos_att_type": &posAtt, "conv_kernel_size": &conv, "embedding_size": &embSize,
		"attention_head_size": &headSize, "legacy": &legacy,
		// The classification heads' pooler (ContextPooler) and conv settings unused without a conv layer.
		"pooler_hidden_size": &ignored, "pooler_dropout": &ignored, "pooler_hidden_act": &ignored,
		"conv_act": &ignored, "conv_groups": &ignored, "cls_dropout": &ignored,
	}
	c.Extra = map[string]json.RawMessage{}
	for _, k := range sortedKeys(raw) {
		v := raw[k]
		if dst, ok := fields[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return Config{}, fmt.Errorf("config.json: field %q: %w", k, err)
			}
			c.Extra[k] = v // written back as read: Config models only what the forward pass needs
			continue
		}
		if !genericKeys[k] {
			return Config{}, fmt.Errorf("config.json: field %q is not supported for model_type %q", k, FamilyDeBERTaV2)
		}
		if err := checkGeneric(FamilyDeBERTaV2, k, v); err != nil {
			return Config{}, err
		}
		c.Extra[k] = v
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	d := &Disentangled{Relative: relative, PositionBuckets: buckets, MaxRelativePositions: maxRel}
	if d.MaxRelativePositions < 1 {
		d.MaxRelativePositions = c.MaxPositionEmbeddings
	}
	// pos_att_type is a list (["p2c", "c2p"]) or, in older configs, a string ("p2c|c2p").
	var types []string
	if len(posAtt) > 0 {
		var s string
		if json.Unmarshal(posAtt, &s) == nil {
			for _, t := range strings.Split(s, "|") {
				types = append(types, strings.TrimSpace(t))
			}
		} else if err := json.Unmarshal(posAtt, &types); err != nil {
			return Config{}, fmt.Errorf("config.json: field \"pos_att_type\": %w", err)
		}
	}
	for _, t := range types {
		switch strings.ToLower(t) {
		case "c2p":
			d.C2P = true
		case "p2c":
			d.P2C = true
		case "", "none":
		default:
			return Config{}, fmt.Errorf("config.json: field \"pos_att_type\": %q is not supported (c2p, p2c)", t)
		}
	}
	for _, n := range strings.Split(strings.ToLower(normRel), "|") {
		switch strings.TrimSpace(n) {
		case "layer_norm":
			d.NormRelEmb = true
		case "none", "":
		default:
			return Config{}, fmt.Errorf("config.json: field \"norm_rel_ebd\": %q is not supported (layer_norm, none)", normRel)
		}
	}
	switch {
	case relative && (d.C2P || d.P2C) && !shareKey:
		return Config{}, fmt.Errorf("config.json: field \"share_att_key\": false is not supported (separate position projections)")
	case conv > 0:
		return Config{}, fmt.Errorf("config.json: field \"conv_kernel_size\": %d is not supported (the convolution layer)", conv)
	case embSize != 0 && embSize != c.HiddenSize:
		return Config{}, fmt.Errorf("config.json: field \"embedding_size\": %d is not supported (only hidden_size %d)", embSize, c.HiddenSize)
	case headSize != 0 && headSize != c.HeadDim():
		return Config{}, fmt.Errorf("config.json: field \"attention_head_size\": %d is not supported (only hidden_size / num_attention_heads = %d)", headSize, c.HeadDim())
	case relative && d.Span() < 1:
		return Config{}, fmt.Errorf("config.json: position_buckets %d and max_relative_positions %d leave no relative position", buckets, maxRel)
	case relative && d.Span() > 1<<16:
		return Config{}, fmt.Errorf("config.json: relative span %d out of range", d.Span())
	}
	c.Disentangled = d
	c.NoPositionEmbeddings = !biased
	return c, nil
}

// marshalDeBERTa writes a DeBERTa-v2 config: the Extra keys as read, then the keys Config models.
func (c Config) marshalDeBERTa() ([]byte, error) {
	m := map[string]any{
		"model_type": "deberta-v2", "vocab_size": c.VocabSize, "hidden_size": c.HiddenSize,
		"num_hidden_layers": c.NumHiddenLayers, "num_attention_heads": c.NumAttentionHeads,
		"intermediate_size": c.IntermediateSize, "hidden_act": c.HiddenAct,
		"hidden_dropout_prob": c.HiddenDropoutProb, "attention_probs_dropout_prob": c.AttentionProbsDropoutProb,
		"max_position_embeddings": c.MaxPositionEmbeddings, "type_vocab_size": c.TypeVocabSize,
		"initializer_range": c.InitializerRange, "layer_norm_eps": c.LayerNormEps, "pad_token_id": c.PadTokenID,
		"tie_word_embeddings": c.TieWordEmbeddings, "position_biased_input": !c.NoPositionEmbeddings,
	}
	if d := c.Disentangled; d != nil {
		var types []string
		if d.P2C {
			types = append(types, "p2c")
		}
		if d.C2P {
			types = append(types, "c2p")
		}
		norm := "none"
		if d.NormRelEmb {
			norm = "layer_norm"
		}
		m["relative_attention"], m["position_buckets"], m["max_relative_positions"] = d.Relative, d.PositionBuckets, d.MaxRelativePositions
		m["pos_att_type"], m["norm_rel_ebd"], m["share_att_key"] = types, norm, true
	}
	return marshalWithExtra(m, c.Extra)
}

// marshalWithExtra writes a family's config.json: its keys m over the keys it kept but does not
// model (extra), indented as transformers writes it.
func marshalWithExtra(m map[string]any, extra map[string]json.RawMessage) ([]byte, error) {
	out := map[string]json.RawMessage{}
	for k, v := range extra {
		out[k] = v
	}
	for k, v := range m {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("config: key %q: %w", k, err)
		}
		out[k] = b
	}
	return json.MarshalIndent(out, "", "  ")
}
