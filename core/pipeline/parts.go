package pipeline

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// AttentionPartsResult is one layer of DeBERTa's disentangled attention for one text (or pair),
// its scores split into their terms (bert.ScoreParts): what the attention view's split panel
// draws. Every term is [A][S][S] and divided by Divisor as in the scores,
// so that C2C + C2P + P2C = Sum cell by cell.
type AttentionPartsResult struct {
	Layer    int      `json:"layer"`
	NumHeads int      `json:"num_heads"`
	Tokens   []string `json:"tokens"`
	TypeIDs  []int    `json:"token_type_ids"`
	// Divisor is √(d·factor): every term is its dot product divided by it (d the head size,
	// factor 1 plus one for each of c2p and p2c).
	Divisor float64 `json:"divisor"`
	// C2C[h][i][j] is content to content, q_i·k_j; C2P content to position, q_i·K(r[δ(i, j)]);
	// P2C position to content, k_j·Q(r[δ(j, i)]); nil when the model has no such term.
	C2C [][][]float32 `json:"c2c"`
	C2P [][][]float32 `json:"c2p"`
	P2C [][][]float32 `json:"p2c"`
	// Sum is their sum, the scores before the softmax; Probs the attention probabilities.
	Sum   [][][]float32 `json:"sum"`
	Probs [][][]float32 `json:"probs"`
	// Truncated reports that the text was cut to the model's positions.
	Truncated bool `json:"truncated"`
}

// AttentionParts runs a DeBERTa model on text (and the optional second segment pair), truncated
// to its positions, and returns layer's scores split into c2c, c2p and p2c (bert.DisentangledParts).
func AttentionParts(m *bert.Model, tok tokenizer.Encoder, text string, pair *string, layer int) (*AttentionPartsResult, error) {
	enc, err := Encode(tok, text, pair, m.Config.MaxSequenceLength())
	if err != nil {
		return nil, fmt.Errorf("attention parts: %w", err)
	}
	p, err := m.DisentangledParts(bert.Batch{B: 1, S: enc.Len(), InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, layer)
	if err != nil {
		return nil, err
	}
	c := m.Config
	A, S := c.NumAttentionHeads, enc.Len()
	heads := func(t *tensor.Tensor) [][][]float32 {
		if t == nil {
			return nil
		}
		out := make([][][]float32, A)
		for h := range out {
			out[h] = make([][]float32, S)
			for i := range out[h] {
				off := (h*S + i) * S
				out[h][i] = t.Data[off : off+S : off+S]
			}
		}
		return out
	}
	return &AttentionPartsResult{Layer: layer, NumHeads: A, Tokens: enc.Tokens, TypeIDs: enc.TypeIDs,
		Divisor: math.Sqrt(float64(c.HeadDim() * c.Disentangled.ScaleFactor())),
		C2C:     heads(p.C2C), C2P: heads(p.C2P), P2C: heads(p.P2C), Sum: heads(p.Sum), Probs: heads(p.Probs),
		Truncated: enc.Truncated}, nil
}
