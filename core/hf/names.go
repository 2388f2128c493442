package hf

import (
	"strings"

	"github.com/bertlab/bertlab/core/bert"
)

// legacyLayerNorm maps the LayerNorm parameter names of checkpoints ported from the original
// TensorFlow BERT (gamma, beta) to the names transformers uses today (weight, bias).
var legacyLayerNorm = [...]struct{ old, new string }{
	{"LayerNorm.gamma", "LayerNorm.weight"},
	{"LayerNorm.beta", "LayerNorm.bias"},
}

// CanonicalName returns the current HuggingFace name of a parameter that older checkpoints store
// under a legacy name: "…LayerNorm.gamma" becomes "…LayerNorm.weight" and "…LayerNorm.beta"
// becomes "…LayerNorm.bias". Every other name is returned unchanged.
//
// The rule is the one transformers applies when loading (a suffix match on "LayerNorm.gamma" and
// "LayerNorm.beta"), so a name it renames is renamed here and no other. Prefix handling ("bert.")
// and stale buffers such as position_ids belong to the folder loader, not here.
func CanonicalName(name string) string {
	for _, r := range legacyLayerNorm {
		if strings.HasSuffix(name, r.old) {
			return name[:len(name)-len(r.old)] + r.new
		}
	}
	return name
}

// nameRule is one rewrite between a family's tensor names and BERT's: the substring file in
// the family's checkpoints stands for bert in Model.Params' names.
type nameRule struct{ file, bert string }

// familyNames describes how a family's checkpoints name the tensors that bert.Model.Params
// names as BERT's.
type familyNames struct {
	// prefix is the body's prefix in a checkpoint with heads ("distilbert.", "roberta."); it
	// stands for "bert.".
	prefix string
	// roots start the body's names in a checkpoint of the bare model, saved without prefix.
	roots []string
	// body rewrites the names after the prefix, every rule in this order in both directions
	// (no rule's output contains a later rule's input).
	body []nameRule
	// heads rewrite the start of the names outside the body; the first that matches applies.
	heads []nameRule
	// groups: the layers are ALBERT's "encoder.albert_layer_groups.G.albert_layers.J.", which
	// stands for "encoder.layer.G." (one layer a group, J = 0: bert.ParseConfig refuses more).
	groups bool
}

// ALBERT's layer names.
const (
	albertGroups = "encoder.albert_layer_groups."
	albertLayers = ".albert_layers."
	bertLayers   = "encoder.layer."
)

// fromGroups rewrites ALBERT's "encoder.albert_layer_groups.G.albert_layers.J.rest" as
// "encoder.layer.G.rest" (J = 0) or "encoder.layer.G.albert_layers.J.rest", a name no
// parameter has (J > 0); other names are returned as they are.
func fromGroups(name string) string {
	rest, ok := strings.CutPrefix(name, albertGroups)
	if !ok {
		return name
	}
	g, tail, ok := strings.Cut(rest, albertLayers)
	if !ok {
		return name
	}
	if j, after, ok := strings.Cut(tail, "."); ok && j == "0" {
		return bertLayers + g + "." + after
	}
	return bertLayers + g + albertLayers + tail
}

// toGroups is the inverse of fromGroups on "encoder.layer.K.rest".
func toGroups(name string) string {
	rest, ok := strings.CutPrefix(name, bertLayers)
	if !ok {
		return name
	}
	k, after, ok := strings.Cut(rest, ".")
	if !ok {
		return name
	}
	return albertGroups + k + albertLayers + "0." + after
}

// families holds the names of every family other than BERT.
var families = map[bert.Family]familyNames{
	bert.FamilyRoBERTa: {
		prefix: "roberta.",
		roots:  []string{"embeddings.", "encoder.", "pooler."},
		heads: []nameRule{
			{"lm_head.dense.", "cls.predictions.transform.dense."},
			{"lm_head.layer_norm.", "cls.predictions.transform.LayerNorm."},
			{"lm_head.decoder.weight", "cls.predictions.decoder.weight"},
			{"lm_head.decoder.bias", "cls.predictions.decoder.bias"},
			{"lm_head.bias", "cls.predictions.bias"},
		},
	},
	bert.FamilyALBERT: {
		prefix: "albert.",
		roots:  []string{"embeddings.", "encoder.", "pooler."},
		groups: true,
		body: []nameRule{
			{".attention.query.", ".attention.self.query."},
			{".attention.key.", ".attention.self.key."},
			{".attention.value.", ".attention.self.value."},
			{".attention.dense.", ".attention.output.dense."},
			{".attention.LayerNorm.", ".attention.output.LayerNorm."},
			{".ffn_output.", ".output.dense."},
			{".ffn.", ".intermediate.dense."},
			{".full_layer_layer_norm.", ".output.LayerNorm."},
			{"pooler.", "pooler.dense."},
		},
		heads: []nameRule{
			{"predictions.dense.", "cls.predictions.transform.dense."},
			{"predictions.LayerNorm.", "cls.predictions.transform.LayerNorm."},
			{"predictions.decoder.weight", "cls.predictions.decoder.weight"},
			{"predictions.decoder.bias", "cls.predictions.decoder.bias"},
			{"predictions.bias", "cls.predictions.bias"},
			{"sop_classifier.classifier.", "cls.seq_relationship."},
		},
	},
	bert.FamilyELECTRA: {
		prefix: "electra.",
		roots:  []string{"embeddings.", "embeddings_project.", "encoder."},
		body:   []nameRule{{"embeddings_project.", "encoder.embedding_hidden_mapping_in."}},
		heads: []nameRule{
			{"generator_predictions.dense.", "cls.predictions.transform.dense."},
			{"generator_predictions.LayerNorm.", "cls.predictions.transform.LayerNorm."},
			{"generator_lm_head.weight", "cls.predictions.decoder.weight"},
			{"generator_lm_head.bias", "cls.predictions.bias"},
			// The discriminator's head has no BERT counterpart: bert.Model.Params uses its names.
			{"discriminator_predictions.", "discriminator_predictions."},
		},
	},
	bert.FamilyDeBERTaV2: {
		prefix: "deberta.",
		roots:  []string{"embeddings.", "encoder."},
		body: []nameRule{
			{".attention.self.query_proj.", ".attention.self.query."},
			{".attention.self.key_proj.", ".attention.self.key."},
			{".attention.self.value_proj.", ".attention.self.value."},
		},
		heads: []nameRule{
			// transformers' legacy head (config "legacy", its default) is BERT's cls.predictions;
			// the other is lm_predictions.lm_head.
			{"cls.", "cls."},
			{"lm_predictions.lm_head.dense.", "cls.predictions.transform.dense."},
			{"lm_predictions.lm_head.LayerNorm.", "cls.predictions.transform.LayerNorm."},
			{"lm_predictions.lm_head.bias", "cls.predictions.bias"},
		},
	},
	bert.FamilyDistilBERT: {
		prefix: "distilbert.",
		roots:  []string{"embeddings.", "transformer."},
		body: []nameRule{
			{"transformer.layer.", "encoder.layer."},
			{".attention.q_lin.", ".attention.self.query."},
			{".attention.k_lin.", ".attention.self.key."},
			{".attention.v_lin.", ".attention.self.value."},
			{".attention.out_lin.", ".attention.output.dense."},
			{".sa_layer_norm.", ".attention.output.LayerNorm."},
			{".ffn.lin1.", ".intermediate.dense."},
			{".ffn.lin2.", ".output.dense."},
			{".output_layer_norm.", ".output.LayerNorm."},
		},
		heads: []nameRule{
			{"vocab_transform.", "cls.predictions.transform.dense."},
			{"vocab_layer_norm.", "cls.predictions.transform.LayerNorm."},
			{"vocab_projector.weight", "cls.predictions.decoder.weight"},
			{"vocab_projector.bias", "cls.predictions.bias"},
		},
	},
}

// familyArchs are the HF classes of a family's bare model and of its model with the MLM head.
var familyArchs = map[bert.Family][2]string{
	bert.FamilyRoBERTa:    {"RobertaModel", "RobertaForMaskedLM"},
	bert.FamilyDistilBERT: {"DistilBertModel", "DistilBertForMaskedLM"},
	bert.FamilyALBERT:     {"AlbertModel", "AlbertForMaskedLM"},
	bert.FamilyELECTRA:    {"ElectraModel", "ElectraForMaskedLM"},
	bert.FamilyDeBERTaV2:  {"DebertaV2Model", "DebertaV2ForMaskedLM"},
}

// BERTName maps a tensor name of a family's checkpoint to the name bert.Model.Params gives it
// (legacy gamma/beta renamed as CanonicalName does). ok is false for a name that is not one of
// the family's. For BERT, a bare BertModel's "embeddings."/"encoder."/"pooler." names get the
// "bert." prefix and every other name is kept.
func BERTName(fam bert.Family, name string) (key string, ok bool) {
	n := CanonicalName(name)
	fn, isFamily := families[fam]
	if !isFamily {
		return bodyKey(n), true
	}
	for _, r := range fn.roots {
		if strings.HasPrefix(n, r) {
			n = fn.prefix + n
			break
		}
	}
	if rest, found := strings.CutPrefix(n, fn.prefix); found {
		if fn.groups {
			rest = fromGroups(rest)
		}
		for _, r := range fn.body {
			rest = strings.Replace(rest, r.file, r.bert, 1)
		}
		return "bert." + rest, true
	}
	for _, r := range fn.heads {
		if rest, found := strings.CutPrefix(n, r.file); found {
			return r.bert + rest, true
		}
	}
	return "", false
}

// FamilyName is the inverse of BERTName: the name a family's checkpoint with heads gives the
// parameter that bert.Model.Params names key ("bert.encoder.layer.0.output.dense.weight" is
// DistilBERT's "distilbert.transformer.layer.0.ffn.lin2.weight"). A name with no counterpart in
// the family is returned unchanged.
func FamilyName(fam bert.Family, key string) string {
	fn, isFamily := families[fam]
	if !isFamily {
		return key
	}
	if rest, found := strings.CutPrefix(key, "bert."); found {
		for _, r := range fn.body {
			rest = strings.Replace(rest, r.bert, r.file, 1)
		}
		if fn.groups {
			rest = toGroups(rest)
		}
		return fn.prefix + rest
	}
	for _, r := range fn.heads {
		if rest, found := strings.CutPrefix(key, r.bert); found {
			return r.file + rest
		}
	}
	return key
}
