package explain

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/bert"
)

// Neuron is the neuron view of one attention row (after bertviz's): for a layer, a head and a
// query token, the query and key vectors per dimension, their elementwise products, the scaled
// dot product, the additive mask and the softmax row that they give.
type Neuron struct {
	Layer int `json:"layer"`
	Head  int `json:"head"`
	Query int `json:"query"` // the query token
	// Q is the head's query vector of the query token: [d].
	Q []float32 `json:"q"`
	// K[j] is the head's key vector of token j: [S, d].
	K [][]float32 `json:"k"`
	// QK[j][e] = Q[e]·K[j][e]: [S, d].
	QK [][]float64 `json:"qk"`
	// With relative positions (position_embedding_type relative_key or relative_key_query),
	// QR[j] = Q·r(query−j) and, for relative_key_query only, KR[j] = K[j]·r(query−j), where r(δ)
	// is the layer's distance embedding of the distance δ: [S] each, added to the dot product
	// before the scaling (HF 4.x's BertSelfAttention). Nil for absolute positions.
	QR []float64 `json:"qr,omitempty"`
	KR []float64 `json:"kr,omitempty"`
	// Scores[j] = (Σ_e QK[j][e] + QR[j] + KR[j]) / √d, the scaled dot product with the
	// relative terms, if any: [S].
	Scores []float64 `json:"scores"`
	// Mask[j] is the additive attention mask: 0 for an attended key, bert.MaskValue for padding.
	Mask []float64 `json:"mask"`
	// Probs = softmax(Scores + Mask), the attention row: [S].
	Probs []float64 `json:"probs"`
}

// NeuronView runs the model with the trace and computes the neuron view of head (layer, head)
// for query token query from the traced query and key projections. The row it computes is
// the traced attention row (a test holds them equal).
func NeuronView(m *bert.Model, in Input, layer, head, query int) (*Neuron, error) {
	c := m.Config
	if err := in.check(c); err != nil {
		return nil, err
	}
	S, A := len(in.IDs), c.NumAttentionHeads
	if layer < 0 || layer >= m.NumBlocks() || head < 0 || head >= A {
		return nil, fmt.Errorf("neuron view: head %d.%d outside the model's %d layers x %d heads", layer, head, m.NumBlocks(), A)
	}
	if query < 0 || query >= S {
		return nil, fmt.Errorf("neuron view: query token %d outside the %d tokens", query, S)
	}
	out, err := m.Forward(in.batch(1), bert.Options{Trace: true})
	if err != nil {
		return nil, err
	}
	H, d := c.HiddenSize, c.HeadDim()
	lt := out.Trace.Layers[layer]
	slice := func(t []float32, s int) []float32 {
		return append([]float32(nil), t[s*H+head*d:s*H+(head+1)*d]...)
	}
	n := &Neuron{Layer: layer, Head: head, Query: query, Q: slice(lt.Query.Data, query)}
	scale := 1 / math.Sqrt(float64(d))
	dist := m.Block(layer).Distance // [2P−1, d] with relative positions, else nil
	for j := range S {
		k := slice(lt.Key.Data, j)
		qk := make([]float64, d)
		var dot float64
		for e := range d {
			qk[e] = float64(n.Q[e]) * float64(k[e])
			dot += qk[e]
		}
		n.K, n.QK = append(n.K, k), append(n.QK, qk)
		if dist != nil {
			at := (query - j + c.MaxPositionEmbeddings - 1) * d
			r := dist.Data[at : at+d]
			var qr, kr float64
			for e := range d {
				qr += float64(n.Q[e]) * float64(r[e])
				kr += float64(k[e]) * float64(r[e])
			}
			n.QR = append(n.QR, qr)
			dot += qr
			if c.PositionEmbeddingType == bert.PositionRelativeKeyQuery {
				n.KR = append(n.KR, kr)
				dot += kr
			}
		}
		n.Scores = append(n.Scores, dot*scale)
		n.Mask = append(n.Mask, 0) // an Input has no padding: every key is attended
	}
	mx := math.Inf(-1)
	for j, s := range n.Scores {
		mx = math.Max(mx, s+n.Mask[j])
	}
	var sum float64
	for j, s := range n.Scores {
		p := math.Exp(s + n.Mask[j] - mx)
		n.Probs = append(n.Probs, p)
		sum += p
	}
	for j := range n.Probs {
		n.Probs[j] /= sum
	}
	return n, nil
}
