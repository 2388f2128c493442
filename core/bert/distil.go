package bert

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/tensor"
)

// Distillation trains a student toward a frozen teacher: the teacher's masked-LM distributions
// as soft targets (Hinton et al. 2015; DistilBERT) and its attention rows, head by head, as
// MiniLM (Wang et al. 2020) distils self-attention. The attention term is what moves an
// absolute-position student off the masked-LM plateau when its teacher has relative positions
// (scripts/PRETRAIN.md): the teacher shows it which tokens to look at.

// DistilTargets are a teacher's outputs on a batch that ForwardBackwardDistil pulls a student
// toward.
type DistilTargets struct {
	// MLM are the teacher's masked-LM distributions (softmax of its logits) at the labelled
	// positions, in the order of the positions in the batch: [n, V]. Nil leaves the soft term out.
	MLM []float32
	// Attentions are the teacher's attention probabilities, one [B, A, S, S] tensor for each
	// layer of the student (from the teacher layer it learns from); nil leaves the attention
	// term out. A row of zeros leaves that query of that head free: no loss and no gradient
	// (the mean still counts it), so a target can name only some heads (train.NeighbourPrior).
	Attentions []*tensor.Tensor
	// Hidden is the teacher's last hidden state [B, S, H] that the cosine term pulls the
	// student's toward (DistilBERT); nil leaves the cosine term out.
	Hidden *tensor.Tensor
}

// DistilWeights weigh the terms of the distillation loss.
type DistilWeights struct {
	Hard      float64 // the masked-LM cross-entropy with the labels
	Soft      float64 // the KL divergence from the teacher's masked-LM distributions
	Attention float64 // the mean KL divergence from the teacher's attention rows
	// Cosine weighs DistilBERT's cosine term: the mean over attended tokens of 1 − cos(student
	// hidden, teacher hidden) of the last hidden states.
	Cosine float64 `json:",omitempty"`
	// Temperature softens both masked-LM distributions of the soft term (Hinton et al. 2015):
	// the teacher's targets are softmax(z/T) and the term is T²·KL, so that its gradients keep
	// their scale; 0 means 1.
	Temperature float64 `json:",omitempty"`
}

// temperature is w.Temperature, 1 when unset.
func (w DistilWeights) temperature() float64 {
	if w.Temperature > 0 {
		return w.Temperature
	}
	return 1
}

// DistilLosses are the terms of a distillation step, unweighted, and their weighted sum.
type DistilLosses struct {
	Total float64
	// Hard is the masked-LM cross-entropy with the labels (the MLM loss of pre-training).
	Hard float64
	// Soft is the mean over the labelled positions of KL(teacher ‖ student) of the masked-LM
	// distributions: 0 when the student predicts as the teacher does.
	Soft float64
	// Attention is the mean over layers, heads and attended query tokens of KL(teacher row ‖
	// student row) of the attention probabilities.
	Attention float64
	// Cosine is the mean over attended tokens of 1 − cos(student, teacher) of the last hidden
	// states.
	Cosine float64
}

// attnDistil is the attention term's part of the backward: d loss / d scaled scores of the
// student's rows gets scale·(Σt·student row − teacher row), the gradient of scale·KL(t ‖
// softmax). A teacher row sums to 1, or to 0: a row of zeros leaves that query of that head
// free (no loss, no gradient), which is how a target names only some heads or queries.
type attnDistil struct {
	targets []*tensor.Tensor // per layer [B, A, S, S]
	scale   float32          // weight / number of rows in the mean
}

// addGrad adds the term to ds [S, S], d loss / d the scaled scores of pair bh = b·A + h of layer
// l, whose probabilities are p [S, S]. Padding queries are outside the loss.
func (d *attnDistil) addGrad(l, bh, A int, mask []int, ds, p []float32, S int) {
	t := d.targets[l].Data[bh*S*S : (bh+1)*S*S]
	bi := bh / A
	for i := 0; i < S; i++ {
		if mask != nil && mask[bi*S+i] == 0 {
			continue
		}
		row, pr, tr := ds[i*S:(i+1)*S], p[i*S:(i+1)*S], t[i*S:(i+1)*S]
		var sum float32
		for _, v := range tr {
			sum += v
		}
		if sum == 0 {
			continue
		}
		for j := range row {
			row[j] += d.scale * (sum*pr[j] - tr[j])
		}
	}
}

// ForwardBackwardDistil runs the student m on a batch in training mode, adds the gradient of
// the distillation loss to g (+=, as ForwardBackward) and returns its terms:
//
//	loss = w.Hard·CE(labels) + w.Soft·T²·KL(teacher MLM at T ‖ student MLM at T)
//	     + w.Attention·KL(teacher attention ‖ student attention) + w.Cosine·(1 − cos(student hidden, teacher hidden))
//
// mlmLabels [B, S] name the labelled positions (IgnoreIndex elsewhere; at least one); t.MLM
// holds the teacher's distributions at those positions, in order, at the temperature T =
// w.Temperature (softmax(z/T)); t.Attentions one tensor per student layer in the student's
// shape [B, A, S, S]; t.Hidden the teacher's last hidden state [B, S, H]. The means are over the
// labelled positions, over layers × heads × attended query tokens, and over attended tokens.
// There is no next-sentence term. With w.Cosine 0 and T 1 it is the loss without those terms.
func (m *Model) ForwardBackwardDistil(b Batch, mlmLabels []int, t DistilTargets, w DistilWeights, opt TrainOptions, g *Grads) (DistilLosses, error) {
	c := m.Config
	if err := b.Validate(c); err != nil {
		return DistilLosses{}, err
	}
	if err := g.check(m); err != nil {
		return DistilLosses{}, err
	}
	if m.MLM == nil {
		return DistilLosses{}, fmt.Errorf("distil: the student has no MLM head (cls.predictions)")
	}
	if err := checkLabels("MLM", mlmLabels, b.B*b.S, c.VocabSize); err != nil {
		return DistilLosses{}, err
	}
	n := 0
	for _, y := range mlmLabels {
		if y != IgnoreIndex {
			n++
		}
	}
	if t.MLM != nil && len(t.MLM) != n*c.VocabSize {
		return DistilLosses{}, fmt.Errorf("distil: %d teacher MLM probabilities for %d labelled positions of %d classes", len(t.MLM), n, c.VocabSize)
	}
	if h := t.Hidden; h != nil && !tensor.SameShape(h.Shape, []int{b.B, b.S, c.HiddenSize}) {
		return DistilLosses{}, fmt.Errorf("distil: teacher hidden state of shape %v, want [%d %d %d] (the cosine term needs the student's width)", h.Shape, b.B, b.S, c.HiddenSize)
	}
	if t.Attentions != nil {
		if len(t.Attentions) != c.NumHiddenLayers {
			return DistilLosses{}, fmt.Errorf("distil: teacher attentions for %d layers, the student has %d", len(t.Attentions), c.NumHiddenLayers)
		}
		want := []int{b.B, c.NumAttentionHeads, b.S, b.S}
		for l, at := range t.Attentions {
			if at == nil || !tensor.SameShape(at.Shape, want) {
				var got []int
				if at != nil {
					got = at.Shape
				}
				return DistilLosses{}, fmt.Errorf("distil: teacher attention of layer %d has shape %v, want %v", l, got, want)
			}
		}
	}
	a, err := m.forwardTrain(b, opt, &g.acts)
	if err != nil {
		return DistilLosses{}, err
	}
	var loss DistilLosses
	dHidden := g.acts.tensor(b.B, b.S, c.HiddenSize)
	clear(dHidden.Data) // the head adds to it
	if t.MLM == nil {
		w.Soft = 0
	}
	loss.Hard, loss.Soft = m.mlmDistilBackward(a, mlmLabels, t.MLM, w, dHidden.Data, g.g)
	if t.Attentions != nil {
		rows := attendedRows(b) * c.NumHiddenLayers * c.NumAttentionHeads
		loss.Attention = attentionKL(a, t.Attentions, b, c.NumAttentionHeads) / float64(rows)
		if w.Attention != 0 {
			a.distil = &attnDistil{targets: t.Attentions, scale: float32(w.Attention / float64(rows))}
		}
	}
	if t.Hidden != nil {
		loss.Cosine = cosineBackward(a.Hidden.Data, t.Hidden.Data, b, c.HiddenSize, w.Cosine, dHidden.Data)
	}
	loss.Total = w.Hard*loss.Hard + w.Soft*loss.Soft + w.Attention*loss.Attention + w.Cosine*loss.Cosine
	err = m.Backward(a, dHidden, nil, g)
	a.distil = nil
	return loss, err
}

// attendedRows counts the query tokens the attention term averages over: the attended ones.
func attendedRows(b Batch) int {
	if b.AttentionMask == nil {
		return b.B * b.S
	}
	n := 0
	for _, v := range b.AttentionMask {
		if v != 0 {
			n++
		}
	}
	return n
}

// attentionKL is the sum over layers, heads and attended queries of KL(teacher row ‖ student
// row), with the student's probabilities before dropout.
func attentionKL(a *Activations, targets []*tensor.Tensor, b Batch, A int) float64 {
	S := b.S
	sums := make([]float64, len(targets)*b.B*A)
	tensor.ParallelFor(len(sums), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			l, bh := k/(b.B*A), k%(b.B*A)
			p := a.layers[l].probs.Data[bh*S*S : (bh+1)*S*S]
			t := targets[l].Data[bh*S*S : (bh+1)*S*S]
			bi := bh / A
			var s float64
			for i := 0; i < S; i++ {
				if b.AttentionMask != nil && b.AttentionMask[bi*S+i] == 0 {
					continue
				}
				s += klRow(t[i*S:(i+1)*S], p[i*S:(i+1)*S])
			}
			sums[k] = s
		}
	})
	var s float64
	for _, v := range sums {
		s += v
	}
	return s
}

// klRow is Σ_j t_j·log(t_j / p_j), with 0·log 0 = 0; a p_j that underflowed to 0 where t_j > 0
// counts as the smallest positive float32.
func klRow(t, p []float32) float64 {
	var s float64
	for j, tj := range t {
		if tj <= 0 {
			continue
		}
		pj := float64(p[j])
		if pj <= 0 {
			pj = math.SmallestNonzeroFloat32
		}
		s += float64(tj) * math.Log(float64(tj)/pj)
	}
	return s
}

// cosineBackward returns the mean over attended tokens of 1 − cos(s, t) for the student's and
// teacher's hidden states s, t [B, S, H], and adds w × its gradient to dh:
// d(1 − cos)/ds = −(t/(|s||t|) − cos·s/|s|²).
func cosineBackward(s, t []float32, b Batch, H int, w float64, dh []float32) float64 {
	n := attendedRows(b)
	var loss float64
	for i := 0; i < b.B*b.S; i++ {
		if b.AttentionMask != nil && b.AttentionMask[i] == 0 {
			continue
		}
		sv, tv := s[i*H:(i+1)*H], t[i*H:(i+1)*H]
		var st, ss, tt float64
		for j := range sv {
			st += float64(sv[j]) * float64(tv[j])
			ss += float64(sv[j]) * float64(sv[j])
			tt += float64(tv[j]) * float64(tv[j])
		}
		// PyTorch's cosine_similarity clamps each norm below at eps 1e-8.
		ns, nt := math.Max(math.Sqrt(ss), 1e-8), math.Max(math.Sqrt(tt), 1e-8)
		cos := st / (ns * nt)
		loss += 1 - cos
		k := w / float64(n)
		d := dh[i*H : (i+1)*H]
		for j := range d {
			d[j] += float32(-k * (float64(tv[j])/(ns*nt) - cos*float64(sv[j])/(ns*ns)))
		}
	}
	return loss / float64(n)
}

// mlmDistilBackward runs the MLM head on the labelled rows, returns the hard loss (mean
// cross-entropy with the labels) and the soft loss (mean T²·KL from the teacher's distributions
// at temperature T, tMLM [n, V]; 0 when nil), adds w.Hard·d hard + w.Soft·d soft to the head's
// gradients in g and d hidden to dh [B, S, H].
func (m *Model) mlmDistilBackward(a *Activations, labels []int, tMLM []float32, w DistilWeights, dh []float32, g *Model) (hard, soft float64) {
	V := m.Config.VocabSize
	rows, lab, ma, logits := m.mlmLabelled(a, labels)
	n := len(rows)
	dl := logits.Data
	hards, softs := make([]float64, n), make([]float64, n)
	T := w.temperature()
	if T != 1 {
		// d (T²·KL(t ‖ softmax(z/T))) / dz = T·(softmax(z/T) − t): the hard term's gradient and
		// the soft term's are apart.
		wh, ws := w.Hard/float64(n), w.Soft/float64(n)
		tensor.ParallelFor(n, func(lo, hi int) {
			p, pT := make([]float64, V), make([]float64, V)
			for i := lo; i < hi; i++ {
				row := dl[i*V : (i+1)*V]
				logZ := logSoftmax(p, row, 1)
				hards[i] = logZ - float64(row[lab[i]])
				var t []float32
				if tMLM != nil {
					t = tMLM[i*V : (i+1)*V]
					logZT := logSoftmax(pT, row, T)
					var kl float64
					for j, tj := range t {
						if tj > 0 {
							kl += float64(tj) * (math.Log(float64(tj)) - (float64(row[j])/T - logZT))
						}
					}
					softs[i] = T * T * kl
				}
				for j := range row {
					d := wh * p[j]
					if t != nil {
						d += ws * T * (pT[j] - float64(t[j]))
					}
					row[j] = float32(d)
				}
				row[lab[i]] -= float32(wh)
			}
		})
		for i := range n {
			hard += hards[i]
			soft += softs[i]
		}
		m.mlmScatter(rows, m.mlmHeadBackward(ma, dl, n, g, g.MLM.Bias.Data), dh)
		return hard / float64(n), soft / float64(n)
	}
	wh, ws := float32(w.Hard/float64(n)), float32(w.Soft/float64(n))
	tensor.ParallelFor(n, func(lo, hi int) {
		p := make([]float64, V)
		for i := lo; i < hi; i++ {
			row := dl[i*V : (i+1)*V]
			mx := math.Inf(-1)
			for _, z := range row {
				mx = math.Max(mx, float64(z))
			}
			var sum float64
			for j, z := range row {
				p[j] = math.Exp(float64(z) - mx)
				sum += p[j]
			}
			logZ := math.Log(sum) + mx
			hards[i] = logZ - float64(row[lab[i]])
			var t []float32
			if tMLM != nil {
				t = tMLM[i*V : (i+1)*V]
				var kl float64
				for j, tj := range t {
					if tj > 0 {
						kl += float64(tj) * (math.Log(float64(tj)) - (float64(row[j]) - logZ))
					}
				}
				softs[i] = kl
			}
			for j := range row {
				pj := float32(p[j] / sum)
				d := (wh + ws) * pj
				if t != nil {
					d -= ws * t[j]
				}
				row[j] = d
			}
			row[lab[i]] -= wh
		}
	})
	for i := range n {
		hard += hards[i]
		soft += softs[i]
	}
	m.mlmScatter(rows, m.mlmHeadBackward(ma, dl, n, g, g.MLM.Bias.Data), dh)
	return hard / float64(n), soft / float64(n)
}

// logSoftmax sets p to softmax(row/T) and returns log Σ exp(row/T), in float64.
func logSoftmax(p []float64, row []float32, T float64) float64 {
	mx := math.Inf(-1)
	for _, z := range row {
		mx = math.Max(mx, float64(z)/T)
	}
	var sum float64
	for j, z := range row {
		p[j] = math.Exp(float64(z)/T - mx)
		sum += p[j]
	}
	for j := range p {
		p[j] /= sum
	}
	return math.Log(sum) + mx
}
