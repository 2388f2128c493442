package bert

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/tensor"
)

// ForwardBackward runs BertForPreTraining on a batch in training mode and adds the gradient of
// its loss to g (+=, so that calls accumulate until g.Zero). The loss is HF's: the MLM loss,
// the mean cross-entropy over the positions whose label in mlmLabels [B, S] is not
// IgnoreIndex, plus the NSP loss, the mean cross-entropy of nspLabels [B] (0 = IsNext,
// 1 = NotNext; IgnoreIndex skips a sequence). A nil label slice leaves that loss out (0 in
// Losses); each loss given must count at least one label, since the mean of none is undefined.
//
// Only the labelled positions go through the MLM head: the other logits do not reach the loss.
// g must come from m.NewGrads; it is not safe to share between concurrent calls.
func (m *Model) ForwardBackward(b Batch, mlmLabels, nspLabels []int, opt TrainOptions, g *Grads) (Losses, error) {
	c := m.Config
	if err := b.Validate(c); err != nil {
		return Losses{}, err
	}
	if err := g.checkShapes(m); err != nil { // mlmBackward sets a decoder gradient that Zero marked
		return Losses{}, err
	}
	if mlmLabels == nil && nspLabels == nil {
		return Losses{}, fmt.Errorf("forward-backward: no labels")
	}
	if mlmLabels != nil {
		if m.MLM == nil {
			return Losses{}, fmt.Errorf("forward-backward: MLM labels given, but the model has no MLM head (cls.predictions)")
		}
		if err := checkLabels("MLM", mlmLabels, b.B*b.S, c.VocabSize); err != nil {
			return Losses{}, err
		}
	}
	if nspLabels != nil {
		if m.NSP == nil || m.Pooler == nil {
			return Losses{}, fmt.Errorf("forward-backward: NSP labels given, but the model has no NSP head (cls.seq_relationship and bert.pooler)")
		}
		if err := checkLabels("NSP", nspLabels, b.B, 2); err != nil {
			return Losses{}, err
		}
	}
	a, err := m.forwardTrain(b, opt, &g.acts)
	if err != nil {
		return Losses{}, err
	}
	var loss Losses
	dHidden := g.acts.tensor(b.B, b.S, c.HiddenSize)
	clear(dHidden.Data) // the heads add to it
	if mlmLabels != nil {
		loss.MLM = m.mlmBackward(a, mlmLabels, dHidden.Data, g.g, g.takeDecoderZero())
	}
	var dPooled *tensor.Tensor
	if nspLabels != nil {
		dPooled = g.acts.tensor(b.B, c.HiddenSize) // set by nspBackward
		loss.NSP = m.nspBackward(a, nspLabels, dPooled.Data, g.g)
	}
	loss.Total = loss.MLM + loss.NSP
	return loss, m.Backward(a, dHidden, dPooled, g)
}

// checkLabels checks n labels against c classes and that at least one counts.
func checkLabels(what string, labels []int, n, c int) error {
	if len(labels) != n {
		return fmt.Errorf("forward-backward: %d %s labels, want %d", len(labels), what, n)
	}
	counted := 0
	for i, y := range labels {
		if y == IgnoreIndex {
			continue
		}
		if y < 0 || y >= c {
			return fmt.Errorf("forward-backward: %s label %d at %d outside [0, %d)", what, y, i, c)
		}
		counted++
	}
	if counted == 0 {
		return fmt.Errorf("forward-backward: every %s label is %d: the mean loss of no position is undefined", what, IgnoreIndex)
	}
	return nil
}

// mlmBackward runs the MLM head on the labelled rows of the hidden states, returns the MLM
// loss, adds the head's gradients to g and d hidden to dh [B, S, H]. With setDecoder, g's
// decoder gradient is set, not added to (what it holds is not read).
func (m *Model) mlmBackward(a *Activations, labels []int, dh []float32, g *Model, setDecoder bool) float64 {
	rows, lab, ma, logits := m.mlmLabelled(a, labels)
	n, V, E := len(rows), m.Config.VocabSize, m.Config.EmbDim()
	// The cross entropy and the decoder's backward fused (the same bits as one after the
	// other, with less traffic through memory): every row is labelled, so each counts 1/n.
	// logits = t · Decoderᵀ + bias; a tied decoder's gradient lands in the word embeddings'.
	// dt and din from the step's arena (each set whole before it is read), as mlmLabelled's
	// rows: no garbage a step.
	dt := a.pass.ar.tensor(n, E)
	sum := tensor.SoftmaxCrossEntropyLinearBackward(dt.Data, g.MLM.Decoder.Data, g.MLM.Bias.Data, logits.Data, lab, float32(1/float64(n)), ma.t.Data, m.MLM.Decoder.Data, n, E, V, !setDecoder)
	din := a.pass.ar.tensor(n, m.Config.HiddenSize)
	m.mlmTransformBackward(ma, dt, n, g, din)
	m.mlmScatter(rows, din, dh)
	return sum / float64(n)
}

// mlmLabelled runs the MLM head on the rows of the hidden states whose label is not
// IgnoreIndex: it returns those rows, their labels, the head's activations and its logits
// [n, V].
func (m *Model) mlmLabelled(a *Activations, labels []int) (rows, lab []int, ma *mlmActs, logits *tensor.Tensor) {
	H := m.Config.HiddenSize
	for i, y := range labels {
		if y != IgnoreIndex {
			rows, lab = append(rows, i), append(lab, y)
		}
	}
	in := a.pass.ar.tensor(len(rows), H)
	for i, r := range rows {
		copy(in.Row(i), a.Hidden.Data[r*H:(r+1)*H])
	}
	ma = &mlmActs{}
	_, logits = m.mlmHead(in, len(rows), a.pass, ma, nil)
	return rows, lab, ma, logits
}

// mlmScatter adds din [n, H], the gradient of the head's input rows, to those rows of dh
// [B, S, H].
func (m *Model) mlmScatter(rows []int, din *tensor.Tensor, dh []float32) {
	H := m.Config.HiddenSize
	for i, r := range rows {
		d := dh[r*H : (r+1)*H]
		for j, v := range din.Row(i) {
			d[j] += v
		}
	}
}

// mlmHeadBackward is the backward of mlmHead on n rows with the activations ma: it adds the
// head's parameter gradients to g, the decoder bias's to db (g.MLM.Bias.Data, or nil when the
// caller has added it), and returns d in [n, H] for dl = d loss / d logits [n, V].
func (m *Model) mlmHeadBackward(ma *mlmActs, dl []float32, n int, g *Model, db []float32) *tensor.Tensor {
	V, E := m.Config.VocabSize, m.Config.EmbDim()
	// logits = t · Decoderᵀ + bias; a tied decoder's gradient lands in the word embeddings'.
	dt := tensor.New(n, E)
	tensor.LinearBackward(dt.Data, g.MLM.Decoder.Data, db, dl, ma.t.Data, m.MLM.Decoder.Data, n, E, V, 0)
	din := tensor.New(n, m.Config.HiddenSize)
	m.mlmTransformBackward(ma, dt, n, g, din)
	return din
}

// mlmTransformBackward is the backward of the MLM head's transform on n rows: it takes dt
// [n, E], the gradient of t = LayerNorm(act(dense(in))) (overwritten), adds the transform's
// parameter gradients to g and sets din [n, H] to d in.
func (m *Model) mlmTransformBackward(ma *mlmActs, dt *tensor.Tensor, n int, g *Model, din *tensor.Tensor) {
	H, E := m.Config.HiddenSize, m.Config.EmbDim()
	// t = LayerNorm(act(dense(in))): [n, E].
	tensor.LayerNormBackward(dt.Data, g.MLM.LN.W.Data, g.MLM.LN.B.Data, dt.Data, ma.act.Data, m.MLM.LN.W.Data, ma.mean, ma.rstd, E)
	actB, _ := activationBackward(m.Config.MLMAct()) // the forward pass accepted it
	actB(dt.Data, dt.Data, ma.pre.Data, ma.act.Data)
	tensor.LinearBackward(din.Data, g.MLM.Transform.W.Data, g.MLM.Transform.B.Data, dt.Data, ma.in.Data, m.MLM.Transform.W.Data, n, H, E, 0)
}

// nspBackward runs the NSP head on the pooled output, returns the NSP loss, adds the head's
// gradients to g and sets dPooled [B, H].
func (m *Model) nspBackward(a *Activations, labels []int, dPooled []float32, g *Model) float64 {
	B, H := a.pass.B, m.Config.HiddenSize
	logits := make([]float32, B*2)
	tensor.Linear(logits, a.Pooled.Data, m.NSP.W.Data, m.NSP.B.Data, B, H, 2)
	loss, _, _ := CrossEntropyBackward(logits, logits, 2, labels, 1) // labels checked already
	tensor.LinearBackward(dPooled, g.NSP.W.Data, g.NSP.B.Data, logits, a.Pooled.Data, m.NSP.W.Data, B, H, 2, 0)
	return loss
}

// CrossEntropyBackward is CrossEntropy with its gradient: it returns the loss (as CrossEntropy,
// up to float32 rounding of the exponentials) and the count of rows counted, and sets
// dlogits [N, C] to scale · d loss / d logits, which is (softmax(row) - onehot(label)) ·
// scale / count for a counted row and 0 for an ignored one. dlogits may alias logits. With no
// row counted the loss is NaN and dlogits is 0.
func CrossEntropyBackward(dlogits, logits []float32, c int, labels []int, scale float64) (float64, int, error) {
	if len(logits) != len(labels)*c || len(dlogits) != len(logits) {
		return 0, 0, fmt.Errorf("cross entropy: %d logits and %d gradients for %d labels of %d classes", len(logits), len(dlogits), len(labels), c)
	}
	n := 0
	for i, y := range labels {
		if y == IgnoreIndex {
			continue
		}
		if y < 0 || y >= c {
			return 0, 0, fmt.Errorf("cross entropy: label %d at row %d outside [0, %d)", y, i, c)
		}
		n++
	}
	if n == 0 {
		clear(dlogits)
		return math.NaN(), 0, nil
	}
	k := float32(scale / float64(n))
	losses := make([]float64, len(labels))
	tensor.ParallelFor(len(labels), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d := dlogits[i*c : (i+1)*c]
			if labels[i] == IgnoreIndex {
				clear(d)
				continue
			}
			losses[i] = tensor.SoftmaxCrossEntropyBackward(d, logits[i*c:(i+1)*c], labels[i], k)
		}
	})
	var sum float64
	for i, y := range labels {
		if y != IgnoreIndex {
			sum += losses[i]
		}
	}
	return sum / float64(n), n, nil
}
