package pipeline

import (
	"fmt"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// Pooling says how a sequence of hidden states becomes one vector.
type Pooling string

const (
	// PoolCLS takes the last hidden state of [CLS] (last_hidden_state[:, 0]), without the
	// pooler's dense and tanh.
	PoolCLS Pooling = "cls"
	// PoolMean averages the last hidden states of the attended tokens, [CLS] and [SEP]
	// included, as sentence-transformers' mean pooling does.
	PoolMean Pooling = "mean"
)

// ParsePooling returns the pooling named s ("cls" or "mean"; "" is "cls").
func ParsePooling(s string) (Pooling, error) {
	switch Pooling(s) {
	case "", PoolCLS:
		return PoolCLS, nil
	case PoolMean:
		return PoolMean, nil
	}
	return "", fmt.Errorf("pooling %q: want %q or %q", s, PoolCLS, PoolMean)
}

// EmbedResult holds one vector per text: what `POST /api/embed` answers.
type EmbedResult struct {
	Pooling Pooling     `json:"pooling"`
	Dim     int         `json:"dim"`
	Vectors [][]float32 `json:"vectors"` // [N, H]
	// Truncated[i] reports that texts[i] was cut to the model's max_position_embeddings tokens.
	Truncated []bool `json:"truncated"`
}

// Embed returns one vector per text, each text truncated to the model's positions.
//
// Each text runs through the model on its own (batch of 1): a padded batch would do the work of
// its longest text for every text, and the vectors would then depend, by float32 rounding, on
// which other texts came in the same request.
func Embed(m *bert.Model, tok tokenizer.Encoder, texts []string, pooling Pooling) (*EmbedResult, error) {
	if pooling != PoolCLS && pooling != PoolMean {
		return nil, fmt.Errorf("embed: pooling %q: want %q or %q", pooling, PoolCLS, PoolMean)
	}
	H := m.Config.HiddenSize
	res := &EmbedResult{Pooling: pooling, Dim: H, Vectors: make([][]float32, len(texts)), Truncated: make([]bool, len(texts))}
	for i, text := range texts {
		enc, err := tok.Encode(text, m.Config.MaxSequenceLength())
		if err != nil {
			return nil, fmt.Errorf("embed: text %d: %w", i, err)
		}
		S := enc.Len()
		out, err := m.Forward(bert.Batch{B: 1, S: S, InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, bert.Options{})
		if err != nil {
			return nil, fmt.Errorf("embed: text %d: %w", i, err)
		}
		res.Vectors[i] = pool(out.Hidden.Data, S, H, pooling) // [S, H] -> [H]
		res.Truncated[i] = enc.Truncated
	}
	return res, nil
}

// pool reduces hidden [S, H] to [H]: the row of token 0, or the mean of all rows (a batch of one
// has no padding, so every token is attended), summed in float64.
func pool(hidden []float32, S, H int, pooling Pooling) []float32 {
	v := make([]float32, H)
	if pooling == PoolCLS {
		copy(v, hidden[:H])
		return v
	}
	sum := make([]float64, H)
	for s := 0; s < S; s++ {
		for j, x := range hidden[s*H : (s+1)*H] {
			sum[j] += float64(x)
		}
	}
	for j := range v {
		v[j] = float32(sum[j] / float64(S))
	}
	return v
}
