package train

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// NeighbourPrior is an auxiliary loss for the start of a pre-training run: the KL divergence
// that pulls chosen heads' attention rows toward one-hot rows on a neighbouring token (the
// previous one, offset −1, or the next, +1). A model trained on masked LM alone learns such
// heads late: its loss rests on a plateau until position-aware heads form (Chen et al. 2023,
// "Sudden Drops in the Loss"; scripts/PRETRAIN.md has this project's measurements). Distilling
// a relative-position teacher's attention gets them at once; this prior does it without a
// teacher. It uses the distillation loss (bert.ForwardBackwardDistil) with targets only on
// the chosen heads: every other head's rows are zero, which leaves them free.
type NeighbourPrior struct {
	Heads []NeighbourHead
	// Weight weighs the mean KL over the chosen heads' attended rows against the masked-LM
	// cross-entropy (weight 1).
	Weight float64
	// Steps: the prior applies to steps 1..Steps of the run, and the run is plain masked LM
	// after that.
	Steps int
}

// NeighbourHead is one head that NeighbourPrior pulls toward token i+Offset from token i.
type NeighbourHead struct {
	Layer, Head, Offset int
}

// String writes h as ParseNeighbourHeads reads it: "layer.head-1" or "layer.head+1".
func (h NeighbourHead) String() string {
	return fmt.Sprintf("%d.%d%+d", h.Layer, h.Head, h.Offset)
}

// ParseNeighbourHeads reads a comma-separated list of heads with their offsets, such as
// "0.0-1,0.1+1" (layer 0 head 0 to the previous token, layer 0 head 1 to the next).
func ParseNeighbourHeads(s string) ([]NeighbourHead, error) {
	var hs []NeighbourHead
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		k := strings.LastIndexAny(f, "+-")
		dot := strings.IndexByte(f, '.')
		if k < 0 || dot < 0 || dot > k {
			return nil, fmt.Errorf("neighbour head %q: want layer.head followed by -N or +N, such as 0.1+1", f)
		}
		l, err1 := strconv.Atoi(f[:dot])
		h, err2 := strconv.Atoi(f[dot+1 : k])
		o, err3 := strconv.Atoi(f[k:])
		if err1 != nil || err2 != nil || err3 != nil || l < 0 || h < 0 || o == 0 {
			return nil, fmt.Errorf("neighbour head %q: want layer.head followed by -N or +N, such as 0.1+1", f)
		}
		hs = append(hs, NeighbourHead{Layer: l, Head: h, Offset: o})
	}
	return hs, nil
}

// Active reports whether the prior applies to the step after step steps have been taken.
func (n NeighbourPrior) Active(step int) bool {
	return len(n.Heads) > 0 && n.Weight > 0 && step < n.Steps
}

// check reports a head outside c or a repeated head.
func (n NeighbourPrior) check(c bert.Config) error {
	seen := map[[2]int]bool{}
	for _, h := range n.Heads {
		if h.Layer >= c.NumHiddenLayers || h.Head >= c.NumAttentionHeads {
			return fmt.Errorf("neighbour head %s: the model has %d layers of %d heads", h, c.NumHiddenLayers, c.NumAttentionHeads)
		}
		if seen[[2]int{h.Layer, h.Head}] {
			return fmt.Errorf("neighbour head %s: given twice", h)
		}
		seen[[2]int{h.Layer, h.Head}] = true
	}
	if len(n.Heads) > 0 && !(n.Weight >= 0) {
		return fmt.Errorf("neighbour prior: weight %g", n.Weight)
	}
	return nil
}

// targets fills ts (one [B, A, S, S] tensor per layer, reused between steps) with the prior's
// rows for b: on each chosen head, query i of a sequence attends to key i+Offset when that is
// a token of the sequence; every other row is zero (free).
func (n NeighbourPrior) targets(ts []*tensor.Tensor, b bert.Batch, c bert.Config) []*tensor.Tensor {
	L, A, S := c.NumHiddenLayers, c.NumAttentionHeads, b.S
	if len(ts) != L || !tensor.SameShape(ts[0].Shape, []int{b.B, A, S, S}) {
		ts = make([]*tensor.Tensor, L)
		for l := range ts {
			ts[l] = tensor.New(b.B, A, S, S)
		}
	} else {
		for _, t := range ts {
			clear(t.Data)
		}
	}
	in := func(bi, j int) bool {
		return j >= 0 && j < S && (b.AttentionMask == nil || b.AttentionMask[bi*S+j] != 0)
	}
	for _, h := range n.Heads {
		d := ts[h.Layer].Data
		for bi := range b.B {
			base := (bi*A + h.Head) * S * S
			for i := range S {
				if j := i + h.Offset; in(bi, i) && in(bi, j) {
					d[base+i*S+j] = 1
				}
			}
		}
	}
	return ts
}

// priorStep is a micro-batch's forward and backward of the masked-LM loss plus the prior. The
// attention term of the returned losses is the mean over the chosen heads' rows.
func (p *Pretrainer) priorStep(b PretrainBatch, opt bert.TrainOptions) (bert.DistilLosses, error) {
	n, c := p.Config.Neighbours, p.Model.Config
	p.priorTargets = n.targets(p.priorTargets, b.Batch, c)
	// ForwardBackwardDistil averages over every head's rows; the prior's mean is over its own.
	k := float64(c.NumHiddenLayers*c.NumAttentionHeads) / float64(len(n.Heads))
	l, err := p.Model.ForwardBackwardDistil(b.Batch, b.MLMLabels, bert.DistilTargets{Attentions: p.priorTargets},
		bert.DistilWeights{Hard: 1, Attention: n.Weight * k}, opt, p.grads)
	l.Attention *= k
	return l, err
}
