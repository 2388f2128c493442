package pipeline

// The embeddings view's result types; embedmap.go computes them.

// Bounds of an embedding map: it is a picture of a few short sentences, and one PCA per layer
// over all their tokens.
const (
	MaxEmbeddingSentences = 8
	// MaxEmbeddingTokens is how many tokens of a sentence ([CLS] and [SEP] included) are kept.
	MaxEmbeddingTokens = 48
)

// EmbeddingPoint is one token of an embedding map.
type EmbeddingPoint struct {
	Sentence int    `json:"sentence"` // index into the sentences
	Token    string `json:"token"`
	Position int    `json:"position"` // token index in its sentence ([CLS] is 0)
	// Special marks the [CLS] and [SEP] the tokenizer added; Punct a token of punctuation only.
	Special bool    `json:"special,omitempty"`
	Punct   bool    `json:"punct,omitempty"`
	X       float64 `json:"x"` // coordinate on the first principal axis
	Y       float64 `json:"y"` // coordinate on the second
}

// EmbeddingMapResult (EmbeddingMap) is every token's hidden state at one layer, of several sentences,
// projected to 2-D by a PCA of those hidden states (fitted to this layer's points alone).
type EmbeddingMapResult struct {
	// Layer 0 is the embedding output, layer l the output of encoder layer l (HF's
	// hidden_states[l]); NumLayers is the model's encoder layer count.
	Layer     int              `json:"layer"`
	NumLayers int              `json:"num_layers"`
	Points    []EmbeddingPoint `json:"points"`
	// Explained is the share of the points' variance along the two axes.
	Explained [2]float64 `json:"explained"`
	// Truncated[s] reports that sentence s was cut to MaxEmbeddingTokens (or the model's positions).
	Truncated []bool `json:"truncated"`
}

// EmbeddingMapOptions choose the tokens of a map.
type EmbeddingMapOptions struct {
	// HideSpecial leaves [CLS], [SEP] and punctuation out of the map and of its PCA (they often
	// sit far from the words and would take up the first axis).
	HideSpecial bool
}
