package bert

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/tensor"
)

// RTDResult is what a discriminator's training step reports besides the gradients.
type RTDResult struct {
	// Loss is HF ElectraForPreTraining's: the mean binary cross-entropy with logits over the
	// attended tokens (attention mask 1, or every token without a mask).
	Loss float64
	// Correct counts the attended tokens whose logit has the label's sign (> 0 for replaced),
	// of Counted.
	Correct, Counted int
	// Logits are the discriminator's logits [B, S] (positive: replaced).
	Logits *tensor.Tensor
}

// ForwardBackwardRTD runs ELECTRA's discriminator (the RTD head) in training mode on the batch
// and adds weight × d loss / d parameter to g (+=), with HF's loss (RTDResult.Loss) for labels
// [B, S] of 0 (original) and 1 (replaced); labels of unattended positions are not read. ELECTRA
// weighs this loss by λ = 50 against its generator's masked LM; the loss returned is unweighted.
func (m *Model) ForwardBackwardRTD(b Batch, labels []int, weight float64, opt TrainOptions, g *Grads) (RTDResult, error) {
	if m.RTD == nil {
		return RTDResult{}, fmt.Errorf("forward-backward: the model has no replaced-token detection head (discriminator_predictions)")
	}
	if err := b.Validate(m.Config); err != nil {
		return RTDResult{}, err
	}
	if err := g.check(m); err != nil {
		return RTDResult{}, err
	}
	n := b.B * b.S
	if len(labels) != n {
		return RTDResult{}, fmt.Errorf("forward-backward: %d replaced-token labels, want %d", len(labels), n)
	}
	counted := 0
	for i, y := range labels {
		if b.AttentionMask != nil && b.AttentionMask[i] == 0 {
			continue
		}
		if y != 0 && y != 1 {
			return RTDResult{}, fmt.Errorf("forward-backward: replaced-token label %d at %d: want 0 or 1", y, i)
		}
		counted++
	}
	if counted == 0 {
		return RTDResult{}, fmt.Errorf("forward-backward: no attended token: the mean loss of none is undefined")
	}
	a, err := m.forwardTrain(b, opt, &g.acts)
	if err != nil {
		return RTDResult{}, err
	}
	H := m.Config.HiddenSize
	actB, err := activationBackward(m.Config.HiddenAct)
	if err != nil {
		return RTDResult{}, err
	}
	// logits = act(h·Denseᵀ + b)·Outᵀ + b: pre [n, H], t = act(pre) [n, H], logits [n].
	h := a.Hidden.Data
	pre := make([]float32, n*H)
	m.RTD.Dense.apply(pre, h, n, H, H, false)
	t := append([]float32(nil), pre...)
	a.pass.act(t)
	logits := tensor.New(b.B, b.S)
	m.RTD.Out.apply(logits.Data, t, n, H, 1, false)

	// d loss / d logit = weight·(σ(z) − y)/counted on attended tokens; the loss as
	// BCEWithLogits computes it, max(z, 0) − z·y + log(1 + e^−|z|).
	res := RTDResult{Counted: counted, Logits: logits}
	dl := make([]float32, n)
	k := weight / float64(counted)
	for i, zf := range logits.Data {
		if b.AttentionMask != nil && b.AttentionMask[i] == 0 {
			continue
		}
		z, y := float64(zf), float64(labels[i])
		res.Loss += max(z, 0) - z*y + math.Log1p(math.Exp(-math.Abs(z)))
		dl[i] = float32(k * (1/(1+math.Exp(-z)) - y))
		if (z > 0) == (labels[i] == 1) {
			res.Correct++
		}
	}
	res.Loss /= float64(counted)
	dt := make([]float32, n*H)
	tensor.LinearBackward(dt, g.g.RTD.Out.W.Data, g.g.RTD.Out.B.Data, dl, t, m.RTD.Out.W.Data, n, H, 1, 0)
	actB(dt, dt, pre, t)
	dHidden := g.acts.tensor(b.B, b.S, H)
	tensor.LinearBackward(dHidden.Data, g.g.RTD.Dense.W.Data, g.g.RTD.Dense.B.Data, dt, h, m.RTD.Dense.W.Data, n, H, H, 0)
	return res, m.Backward(a, dHidden, nil, g)
}
