package bert

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/tensor"
)

// This file holds what interpretability methods need from the model beyond training: the
// gradient with respect to the embedding output and to HF's head_mask, the MLM head on
// arbitrary hidden states, and the head mask itself.

// InputGrads are gradients with respect to the inputs of the encoder rather than its
// parameters.
type InputGrads struct {
	// Embeddings is d out / d embedding output (HF's hidden_states[0], after the embedding
	// LayerNorm): [B, S, H].
	Embeddings *tensor.Tensor
	// HeadMask is d out / d head_mask: [L, A]; nil when the pass had no TrainOptions.HeadMask.
	HeadMask *tensor.Tensor
}

// BackwardInputs is Backward that also returns the gradients with respect to the embedding
// output and, when the pass had a head mask, the head mask (Michel et al. 2019's head
// importance is its absolute value at a mask of ones). The parameter gradients are added to
// g as Backward adds them.
func (m *Model) BackwardInputs(a *Activations, dHidden, dPooled *tensor.Tensor, g *Grads) (*InputGrads, error) {
	return m.backward(a, dHidden, dPooled, g, true)
}

// checkHeadMask reports whether hm is nil or a head mask [L, A] for m of finite entries.
func (m *Model) checkHeadMask(hm []float32) error {
	if hm == nil {
		return nil
	}
	if m.Config.SharesLayers() || m.Config.Family.Is(FamilyALBERT) || m.Config.Disentangled != nil {
		// transformers hands ALBERT's blocks the rows of group_idx·layers_per_group, not their own.
		return fmt.Errorf("a head mask is not supported for %s", m.Config.Family.Name())
	}
	L, A := len(m.Layers), m.Config.NumAttentionHeads
	if len(hm) != L*A {
		return fmt.Errorf("head mask has %d entries, want %d layers x %d heads = %d", len(hm), L, A, L*A)
	}
	for i, v := range hm {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("head mask entry for layer %d head %d is %g", i/A, i%A, v)
		}
	}
	return nil
}

// maskHeads applies the head mask to block l's context ctx [B, S, H] (A heads), in place. HF
// multiplies a head's attention probabilities P by its entry w; since (w·P)·V = w·(P·V), this
// scales the head's columns of the context. With keep (training), it returns the context
// before the mask, which the mask's gradient needs; nil without a mask.
func (p *pass) maskHeads(l, A int, ctx *tensor.Tensor, keep bool) *tensor.Tensor {
	if p.headMask == nil {
		return nil
	}
	var raw *tensor.Tensor
	if keep {
		raw = ctx.Clone()
	}
	w := p.headMask[l*A : (l+1)*A]
	H := ctx.Shape[len(ctx.Shape)-1]
	d := H / A
	for r := 0; r < ctx.Len(); r += H {
		for h, s := range w {
			if s != 1 {
				tensor.Scale(ctx.Data[r+h*d:r+(h+1)*d], s)
			}
		}
	}
	return raw
}

// headMaskBackward is the backward of maskHeads for block l: with ctx = w·raw per head, it
// adds d/dw = Σ raw·dctx to dmask[l*A+h] (when dmask is not nil) and scales dctx [B*S*H] by w,
// giving d raw. Nothing happens without a head mask.
func headMaskBackward(hm []float32, l, A int, la *layerActs, dctx, dmask []float32) {
	if hm == nil {
		return
	}
	H := la.ctxRaw.Shape[len(la.ctxRaw.Shape)-1]
	d := H / A
	raw := la.ctxRaw.Data
	acc := make([]float64, A)
	for r := 0; r < len(raw); r += H {
		for h := range A {
			lo, hi := r+h*d, r+(h+1)*d
			if dmask != nil {
				var s float64
				for i := lo; i < hi; i++ {
					s += float64(raw[i]) * float64(dctx[i])
				}
				acc[h] += s
			}
			if w := hm[l*A+h]; w != 1 {
				tensor.Scale(dctx[lo:hi], w)
			}
		}
	}
	if dmask != nil {
		for h, s := range acc {
			dmask[l*A+h] += float32(s)
		}
	}
}

// Embed returns the embedding output of the batch in eval mode (HF's hidden_states[0]:
// LayerNorm(word + position + token type)): [B, S, H].
func (m *Model) Embed(b Batch) (*tensor.Tensor, error) {
	if err := b.Validate(m.Config); err != nil {
		return nil, err
	}
	p, err := m.newPass(b, dropoutConfig{}, nil)
	if err != nil {
		return nil, err
	}
	return m.embed(b, p, nil, nil), nil
}

// headPass is the pass the MLM head runs in outside a forward pass.
func (m *Model) headPass() (*pass, error) {
	if m.MLM == nil {
		return nil, fmt.Errorf("mlm head: the model has no MLM head (cls.predictions)")
	}
	act, err := activation(m.Config.HiddenAct)
	if err != nil {
		return nil, err
	}
	mlmAct, err := activation(m.Config.MLMAct())
	if err != nil {
		return nil, err
	}
	return &pass{act: act, mlmAct: mlmAct, eps: float32(m.Config.LayerNormEps)}, nil
}

// checkRows reports whether h is [n, H] for the model.
func (m *Model) checkRows(what string, h *tensor.Tensor) (int, error) {
	H := m.Config.HiddenSize
	if h == nil || h.Len() == 0 || h.Len()%H != 0 {
		shape := "nil"
		if h != nil {
			shape = tensor.ShapeString(h.Shape)
		}
		return 0, fmt.Errorf("%s: hidden states of shape %s, want [n, %d]", what, shape, H)
	}
	return h.Len() / H, nil
}

// MLMHeadLogits applies the MLM head (cls.predictions) to hidden states h [n, H] and returns
// the logits [n, V]. Applied to an intermediate layer's states it is the logit lens.
func (m *Model) MLMHeadLogits(h *tensor.Tensor) (*tensor.Tensor, error) {
	p, err := m.headPass()
	if err != nil {
		return nil, err
	}
	n, err := m.checkRows("mlm head", h)
	if err != nil {
		return nil, err
	}
	in := &tensor.Tensor{Shape: []int{n, m.Config.HiddenSize}, Data: h.Data}
	_, logits := m.mlmHead(in, n, p, nil, nil)
	return logits, nil
}

// MLMHeadBackward back-propagates dLogits [n, V] through the MLM head applied to h [n, H]:
// it adds the head's parameter gradients to g and returns d h [n, H].
func (m *Model) MLMHeadBackward(h, dLogits *tensor.Tensor, g *Grads) (*tensor.Tensor, error) {
	m.EnsureRaw()
	p, err := m.headPass()
	if err != nil {
		return nil, err
	}
	n, err := m.checkRows("mlm head backward", h)
	if err != nil {
		return nil, err
	}
	if dLogits == nil || dLogits.Len() != n*m.Config.VocabSize {
		return nil, fmt.Errorf("mlm head backward: d logits do not match [%d, %d]", n, m.Config.VocabSize)
	}
	if err := g.check(m); err != nil {
		return nil, err
	}
	in := &tensor.Tensor{Shape: []int{n, m.Config.HiddenSize}, Data: h.Data}
	var ma mlmActs
	m.mlmHead(in, n, p, &ma, nil)
	return m.mlmHeadBackward(&ma, dLogits.Data, n, g.g, g.g.MLM.Bias.Data), nil
}
