package explain

import (
	"fmt"
	"math"
	"sort"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// MaxTopK bounds the predictions listed per position or layer.
const MaxTopK = 100

// Prediction is one vocabulary entry with its probability.
type Prediction struct {
	ID    int     `json:"id"`
	Token string  `json:"token,omitempty"` // filled by the Explainer
	Prob  float64 `json:"prob"`
}

// LensLayer is the MLM head read out at one layer.
type LensLayer struct {
	Layer int          `json:"layer"` // 0: the embedding output; l: the output of block l
	Top   []Prediction `json:"top"`
	// Candidates holds the probability of each chosen candidate, in Lens.Candidates' order.
	Candidates []float64 `json:"candidates,omitempty"`
}

// LensPosition is the logit lens at one token position.
type LensPosition struct {
	Position int         `json:"position"`
	Layers   []LensLayer `json:"layers"`
}

// Lens is the logit lens (nostalgebraist 2020, for BERT's MLM head): the MLM head applied to
// every hidden state at the chosen positions, so that one sees in which layer an answer
// appears. The last layer's readout is the fill-mask output.
type Lens struct {
	Candidates []int          `json:"candidates,omitempty"`
	Positions  []LensPosition `json:"positions"`
}

// LogitLens runs the model once with the trace and applies the MLM head to hidden_states[l]
// at each position for l = 0 (embeddings) .. L: the topK tokens per layer and the
// probabilities of candidates.
func LogitLens(m *bert.Model, in Input, positions, candidates []int, topK int) (*Lens, error) {
	if m.MLM == nil {
		return nil, fmt.Errorf("logit lens: the model has no MLM head (cls.predictions)")
	}
	if err := in.check(m.Config); err != nil {
		return nil, err
	}
	if topK < 1 || topK > MaxTopK {
		return nil, fmt.Errorf("logit lens: top-k %d outside [1, %d]", topK, MaxTopK)
	}
	S, H, V := len(in.IDs), m.Config.HiddenSize, m.Config.VocabSize
	if len(positions) == 0 {
		return nil, fmt.Errorf("logit lens: no position")
	}
	for _, p := range positions {
		if p < 0 || p >= S {
			return nil, fmt.Errorf("logit lens: position %d outside the %d tokens", p, S)
		}
	}
	for _, c := range candidates {
		if c < 0 || c >= V {
			return nil, fmt.Errorf("logit lens: candidate %d outside the vocabulary of %d", c, V)
		}
	}
	out, err := m.Forward(in.batch(1), bert.Options{Trace: true})
	if err != nil {
		return nil, err
	}
	hs := out.Trace.HiddenStates
	// One head application for all layers and positions: rows [(L+1)·P, H].
	P := len(positions)
	rows := tensor.New(len(hs)*P, H)
	for l, h := range hs {
		for i, p := range positions {
			copy(rows.Row(l*P+i), h.Data[p*H:(p+1)*H])
		}
	}
	logits, err := m.MLMHeadLogits(rows)
	if err != nil {
		return nil, err
	}
	lens := &Lens{Candidates: candidates}
	for i, p := range positions {
		lp := LensPosition{Position: p}
		for l := range hs {
			row := logits.Row(l*P + i)
			probs := softmax(row)
			ll := LensLayer{Layer: l, Top: topK64(probs, topK)}
			for _, c := range candidates {
				ll.Candidates = append(ll.Candidates, probs[c])
			}
			lp.Layers = append(lp.Layers, ll)
		}
		lens.Positions = append(lens.Positions, lp)
	}
	return lens, nil
}

// softmax returns softmax(row) in float64.
func softmax(row []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	p := make([]float64, len(row))
	var s float64
	for i, v := range row {
		p[i] = math.Exp(float64(v) - mx)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// topK64 returns the k most probable entries, highest first; ties go to the lower id.
func topK64(p []float64, k int) []Prediction {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	k = min(k, len(p))
	out := make([]Prediction, k)
	for i, id := range idx[:k] {
		out[i] = Prediction{ID: id, Prob: p[id]}
	}
	return out
}
