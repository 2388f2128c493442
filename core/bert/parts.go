package bert

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/tensor"
)

// ScoreParts are the terms of one block's attention scores in DeBERTa's disentangled attention
// (see Disentangled), each divided by the same √(d·ScaleFactor) as in the scores: [B, A, S, S].
type ScoreParts struct {
	// C2C is content to content, q_i·k_j: what BERT's attention has alone.
	C2C *tensor.Tensor
	// C2P is content to position, q_i·K(r[c2p(i, j)]): how query i's content weighs key j's
	// offset from it; nil when the config has no c2p.
	C2P *tensor.Tensor
	// P2C is position to content, k_j·Q(r[p2c(i, j)]): how key j's content weighs query i's
	// offset from it; nil when the config has no p2c.
	P2C *tensor.Tensor
	// Sum is C2C + C2P + P2C, the scores before the attention mask and the softmax.
	Sum *tensor.Tensor
	// Probs are the attention probabilities after the mask and softmax.
	Probs *tensor.Tensor
}

// DisentangledParts runs a DeBERTa model on b and returns block l's attention scores split into
// their content-to-content, content-to-position and position-to-content terms. C2C is computed
// here from the block's query and key projections; C2P, P2C and Sum are the forward pass's own
// (so C2C + C2P + P2C = Sum to float32 rounding is a check of both).
func (m *Model) DisentangledParts(b Batch, l int) (*ScoreParts, error) {
	c := m.Config
	if c.Disentangled == nil {
		return nil, fmt.Errorf("attention parts: model_type %q has no disentangled attention (DeBERTa-v2/v3 only)", c.FamilyOf())
	}
	if l < 0 || l >= c.NumHiddenLayers {
		return nil, fmt.Errorf("attention parts: layer %d outside 0..%d", l, c.NumHiddenLayers-1)
	}
	out, err := m.Forward(b, Options{Trace: true})
	if err != nil {
		return nil, fmt.Errorf("attention parts: %w", err)
	}
	lt := out.Trace.Layers[l]
	B, S, H, A := b.B, b.S, c.HiddenSize, c.NumAttentionHeads
	d := H / A
	scale := float32(1 / math.Sqrt(float64(d*c.Disentangled.ScaleFactor())))
	c2c := tensor.New(B, A, S, S)
	q, k := lt.Query.Data, lt.Key.Data
	for bi := range B {
		for h := range A {
			// [S, S] = Q_h·K_hᵀ·scale, the head's columns of the [B, S, H] projections.
			off := bi*S*H + h*d
			tensor.Gemm(false, true, S, S, d, scale, q[off:], H, k[off:], H, 0, c2c.Data[(bi*A+h)*S*S:], S)
		}
	}
	return &ScoreParts{C2C: c2c, C2P: lt.C2P, P2C: lt.P2C, Sum: lt.Scores, Probs: out.Trace.Attentions[l]}, nil
}
