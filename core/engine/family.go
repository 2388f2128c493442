package engine

import (
	"fmt"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/pipeline"
)

// FamilyCard describes the family of a loaded model for the page's Models view: which member of
// BERT's family it is, its sizes, what its weights share, how it knows positions and which
// pre-training heads it has. Every field is read from the model itself (config and tensors).
type FamilyCard struct {
	// Family is config.json's model_type ("bert", "albert", ...); Name how papers write it.
	Family string `json:"family"`
	Name   string `json:"name"`
	// Paper cites the family's paper; Idea says in one sentence what it changes from BERT.
	Paper string `json:"paper"`
	Idea  string `json:"idea"`
	// Role is an ELECTRA checkpoint's half: "discriminator" (the RTD head) or "generator" (MLM).
	Role       string `json:"role,omitempty"`
	Parameters int64  `json:"parameters"`
	// VocabSize is V; EmbeddingSize is E, the width of the token embeddings; HiddenSize is H. With
	// EmbeddingProjection a linear map takes E to H (ALBERT's factorised embeddings, ELECTRA's
	// embeddings_project).
	VocabSize           int  `json:"vocab_size"`
	EmbeddingSize       int  `json:"embedding_size"`
	HiddenSize          int  `json:"hidden_size"`
	EmbeddingProjection bool `json:"embedding_projection"`
	// Blocks is num_hidden_layers; LayerOf[l] is the distinct layer (weights) block l runs, and
	// DistinctLayers their number (fewer than Blocks when ALBERT shares them).
	Blocks         int   `json:"blocks"`
	DistinctLayers int   `json:"distinct_layers"`
	LayerOf        []int `json:"layer_of"`
	// PositionKind is "absolute", "sinusoidal", "relative" or "relative buckets"; Positions
	// says how the model knows where a token is, in a sentence.
	PositionKind string `json:"position_kind"`
	Positions    string `json:"positions"`
	// ScoreTerms names the terms that add up to an attention score when there are several:
	// DeBERTa's "c2c" and its "c2p" and "p2c" (pipeline.AttentionParts); nil otherwise.
	ScoreTerms []string `json:"score_terms,omitempty"`
	// Shared lists what the weights share, one sentence each (none: empty).
	Shared []string `json:"shared"`
	// Heads are the pre-training heads of the family's kind, present or not.
	Heads []FamilyHead `json:"heads"`
}

// FamilyHead is one pre-training head: MLM, NSP, SOP or RTD.
type FamilyHead struct {
	Name    string `json:"name"`
	What    string `json:"what"`
	Present bool   `json:"present"`
}

// familyFacts are what DescribeFamily says of each family whatever the checkpoint.
var familyFacts = map[bert.Family]struct{ name, paper, idea string }{
	bert.FamilyBERT: {"BERT", "Devlin et al., 2018",
		"A stack of transformer encoder blocks pre-trained to fill in masked words and to tell whether two sentences follow each other"},
	bert.FamilyRoBERTa: {"RoBERTa", "Liu et al., 2019",
		"BERT's architecture with a better recipe: more data, longer training, dynamic masking, no next-sentence task, a byte-level BPE vocabulary"},
	bert.FamilyDistilBERT: {"DistilBERT", "Sanh et al., 2019",
		"A smaller BERT (half the layers, no token types, no pooler) trained to imitate a full BERT's outputs (distillation)"},
	bert.FamilyALBERT: {"ALBERT", "Lan et al., 2019",
		"Fewer parameters: small embeddings projected up to the hidden size, and one layer's weights reused at every depth; sentence-order prediction replaces next-sentence prediction"},
	bert.FamilyELECTRA: {"ELECTRA", "Clark et al., 2020",
		"A small generator fills masked words, and the discriminator learns to tell, for every token, whether it was replaced: every token gives a training signal, not just the masked 15%"},
	bert.FamilyDeBERTaV2: {"DeBERTa", "He et al., 2021",
		"Disentangled attention: each token's content and its relative position are kept apart, and attention scores add content-to-content, content-to-position and position-to-content terms"},
}

// DescribeFamily is the family card of m; params is its parameter count as the engine reports it.
func DescribeFamily(m *bert.Model, params int64) *FamilyCard {
	c := m.Config
	fam := c.FamilyOf()
	facts, ok := familyFacts[fam]
	if !ok {
		facts.name = fam.Name()
	}
	card := &FamilyCard{Family: fam.Name(), Name: facts.name, Paper: facts.paper, Idea: facts.idea,
		Parameters: params, VocabSize: c.VocabSize, EmbeddingSize: c.EmbDim(), HiddenSize: c.HiddenSize, EmbeddingProjection: m.EmbProj != nil,
		Blocks: c.NumHiddenLayers, DistinctLayers: c.NumLayers(), Shared: []string{}}
	for l := range c.NumHiddenLayers {
		card.LayerOf = append(card.LayerOf, c.LayerIndex(l))
	}
	card.PositionKind, card.Positions = positions(c)

	if fam == bert.FamilyELECTRA {
		switch {
		case m.RTD != nil:
			card.Role = "discriminator"
		case m.MLM != nil:
			card.Role = "generator"
		}
	}
	if c.SharesLayers() {
		card.Shared = append(card.Shared, sharedLayers(card.LayerOf, card.DistinctLayers))
	}
	if m.MLM != nil && m.MLM.Decoder == m.WordEmb {
		card.Shared = append(card.Shared, fmt.Sprintf("the masked-LM head's output layer is the word embeddings themselves (tied): one [%d × %d] matrix reads tokens in and scores them out", c.VocabSize, c.EmbDim()))
	}
	if d := c.Disentangled; d != nil && d.Relative && (d.C2P || d.P2C) {
		card.ScoreTerms = []string{"c2c"}
		if d.C2P {
			card.ScoreTerms = append(card.ScoreTerms, "c2p")
		}
		if d.P2C {
			card.ScoreTerms = append(card.ScoreTerms, "p2c")
		}
		card.Shared = append(card.Shared, fmt.Sprintf("one table of %d relative-position embeddings serves every layer; each layer reads it through its own key and query projections (share_att_key)", 2*d.Span()))
	}
	if card.Role != "" {
		card.Shared = append(card.Shared, "in pre-training the generator and the discriminator share their token embeddings; this checkpoint is the "+card.Role)
	}

	// ALBERT's sentence head (Model.NSP) is sentence-order prediction.
	sop := fam == bert.FamilyALBERT
	card.Heads = []FamilyHead{
		{Name: "MLM", What: "masked-language model: predicts the hidden word at a [MASK]", Present: m.MLM != nil},
		{Name: "NSP", What: "next-sentence prediction: does sentence B follow sentence A?", Present: m.NSP != nil && !sop},
		{Name: "SOP", What: "sentence-order prediction (ALBERT): are the two sentences in their original order?", Present: m.NSP != nil && sop},
		{Name: "RTD", What: "replaced-token detection (ELECTRA): was each token replaced?", Present: m.RTD != nil},
	}
	return card
}

// positions says how a model of config c knows where its tokens are.
func positions(c bert.Config) (kind, text string) {
	fam, P := c.FamilyOf(), c.MaxPositionEmbeddings
	if d := c.Disentangled; d != nil {
		abs := "no absolute positions in the input"
		if !c.NoPositionEmbeddings {
			abs = fmt.Sprintf("also a learned vector for each of %d absolute positions added to the input", P)
		}
		if !d.Relative {
			return "absolute", fmt.Sprintf("a learned vector for each of %d positions, added to the token embeddings", P)
		}
		if d.PositionBuckets > 0 {
			return "relative buckets", fmt.Sprintf("relative: the offset between two tokens, in %d buckets each way (exact up to ±%d, then log-spaced up to ±%d), enters every attention score; %s",
				d.PositionBuckets, d.PositionBuckets/2, d.MaxRelativePositions, abs)
		}
		return "relative", fmt.Sprintf("relative: the offset between two tokens, clamped to ±%d, enters every attention score; %s", d.MaxRelativePositions, abs)
	}
	switch {
	case c.Relative():
		terms := "the query side (relative_key)"
		if c.PositionEmbeddingType == bert.PositionRelativeKeyQuery {
			terms = "the query and the key sides (relative_key_query)"
		}
		return "relative", fmt.Sprintf("relative: each layer learns a vector per distance between two tokens (up to ±%d), added to the attention scores on %s", P-1, terms)
	case c.SinusoidalPosEmbds:
		return "sinusoidal", fmt.Sprintf("absolute, fixed: sines and cosines of each of %d positions (not learned), added to the token embeddings", P)
	case fam == bert.FamilyRoBERTa:
		return "absolute", fmt.Sprintf("absolute, learned: a vector for each of %d positions, counted from pad_token_id+1 = %d (padding keeps %d)", c.MaxSequenceLength(), c.PadTokenID+1, c.PadTokenID)
	}
	return "absolute", fmt.Sprintf("absolute, learned: a vector for each of %d positions, added to the token embeddings", P)
}

// sharedLayers says which blocks (the page's layers) run which distinct layer (a layer group),
// e.g. "all 12 layers run the same weights ..." or "3 layers share 2 sets of weights (layer
// groups): layers 0–1 run group 0, layer 2 runs group 1".
func sharedLayers(layerOf []int, distinct int) string {
	if distinct == 1 {
		return fmt.Sprintf("all %d layers run the same weights (one layer group): the model applies one layer %d times (cross-layer sharing)", len(layerOf), len(layerOf))
	}
	var runs []string
	for g := range distinct {
		lo, hi := -1, -1
		for l, x := range layerOf {
			if x == g {
				if lo < 0 {
					lo = l
				}
				hi = l
			}
		}
		switch {
		case lo < 0:
			continue
		case lo == hi:
			runs = append(runs, fmt.Sprintf("layer %d runs group %d", lo, g))
		default:
			runs = append(runs, fmt.Sprintf("layers %d–%d run group %d", lo, hi, g))
		}
	}
	return fmt.Sprintf("%d layers share %d sets of weights (layer groups): %s", len(layerOf), distinct, strings.Join(runs, ", "))
}

// Replaced is ELECTRA's discriminator on text (and pair): each token's probability of having
// been replaced (pipeline.ReplacedTokens).
func (e *Engine) Replaced(text string, pair *string) (*pipeline.ReplacedResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.ReplacedTokens(e.model, e.tok, text, pair)
}

// AttentionParts is one layer of DeBERTa's attention scores split into content-to-content,
// content-to-position and position-to-content (pipeline.AttentionParts).
func (e *Engine) AttentionParts(text string, pair *string, layer int) (*pipeline.AttentionPartsResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.AttentionParts(e.model, e.tok, text, pair, layer)
}
