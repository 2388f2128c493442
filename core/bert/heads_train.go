package bert

import (
	"fmt"

	"github.com/bertlab/bertlab/core/tensor"
)

// Check reports whether the model is well formed: a known task, a head shaped for the config,
// a pooler exactly when the task has one, and one label name per class.
func (t *TaskModel) Check() error {
	if _, err := ParseTask(string(t.Task)); err != nil {
		return err
	}
	if t.Bert == nil {
		return fmt.Errorf("%s: no body", t.Task)
	}
	H := t.Bert.Config.HiddenSize
	h := t.Task.HeadName()
	if t.Head.W == nil || t.Head.B == nil || len(t.Head.W.Shape) != 2 || t.Head.W.Shape[1] != H ||
		!tensor.SameShape(t.Head.B.Shape, []int{t.Head.W.Shape[0]}) {
		return fmt.Errorf("%s: %s has the wrong shape for hidden size %d", t.Task, h, H)
	}
	n := t.Head.W.Shape[0]
	switch {
	case t.Task == QuestionAnswering && n != 2:
		return fmt.Errorf("%s: qa_outputs has %d outputs, want 2 (start, end)", t.Task, n)
	case t.Task != QuestionAnswering && len(t.Labels) != n:
		return fmt.Errorf("%s: classifier has %d outputs but there are %d label names", t.Task, n, len(t.Labels))
	case t.Task.hasPooler() && t.Bert.Pooler == nil:
		return fmt.Errorf("%s: needs the pooler (bert.pooler.dense)", t.Task)
	case !t.Task.hasPooler() && t.Bert.Pooler != nil:
		return fmt.Errorf("%s: has a pooler, which HF builds this task without", t.Task)
	case t.Bert.MLM != nil || t.Bert.NSP != nil || t.Bert.RTD != nil:
		return fmt.Errorf("%s: the body has pre-training heads", t.Task)
	}
	if p := t.ClassifierDropout(); !(p >= 0 && p < 1) {
		return fmt.Errorf("%s: classifier dropout %g outside [0, 1)", t.Task, p)
	}
	return nil
}

// Forward runs the task model in eval mode (no dropout) and returns the head's logits:
// [B, L] for sequence classification, [B, S, L] for token classification, [B, S, 2] for QA
// (start logits at [..., 0], end logits at [..., 1]).
func (t *TaskModel) Forward(b Batch) (*tensor.Tensor, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	out, err := t.Bert.Forward(b, Options{})
	if err != nil {
		return nil, err
	}
	x, rows := out.Hidden.Data, b.B*b.S
	if t.Task == SequenceClassification {
		x, rows = out.Pooled.Data, b.B
	}
	return t.headLogits(x, rows, b), nil
}

// headLogits applies the head to x [rows, H], shaped as Forward returns the logits.
func (t *TaskModel) headLogits(x []float32, rows int, b Batch) *tensor.Tensor {
	L := t.NumLabels()
	var logits *tensor.Tensor
	if t.Task == SequenceClassification {
		logits = tensor.New(b.B, L)
	} else {
		logits = tensor.New(b.B, b.S, L)
	}
	tensor.Linear(logits.Data, x, t.Head.W.Data, t.Head.B.Data, rows, t.Bert.Config.HiddenSize, L)
	return logits
}

// ForwardBackward runs the task model on a batch in training mode (dropout as opt says, the
// classifier's from HeadDropoutStream on), returns HF's loss and the logits (shaped as Forward
// returns them), and adds the gradient of the loss to g. labels are:
//   - sequence classification: [B] class ids;
//   - token classification: [B, S] class ids, IgnoreIndex on positions that do not count
//     (special tokens, padding, word pieces after a word's first);
//   - QA: [B, 2], the start and end token positions of the answer in each sequence; a
//     position of S or more is ignored, as HF's clamp to ignored_index = S does.
//
// The loss is the mean cross-entropy over the labels that count, for QA the mean of the start
// and end losses. At least one label must count.
func (t *TaskModel) ForwardBackward(b Batch, labels []int, opt TrainOptions, g *TaskGrads) (float64, *tensor.Tensor, error) {
	if err := t.Check(); err != nil {
		return 0, nil, err
	}
	if g == nil || g.Bert == nil || !tensor.SameShape(g.Head.W.Shape, t.Head.W.Shape) {
		return 0, nil, fmt.Errorf("%s: gradients not made by this model's NewGrads", t.Task)
	}
	if err := b.Validate(t.Bert.Config); err != nil {
		return 0, nil, err
	}
	if err := t.checkLabels(labels, b); err != nil {
		return 0, nil, err
	}
	a, err := t.Bert.forwardTrain(b, opt, &g.Bert.acts)
	if err != nil {
		return 0, nil, err
	}
	H, L := t.Bert.Config.HiddenSize, t.NumLabels()
	in, rows := a.Hidden.Data, b.B*b.S
	if t.Task == SequenceClassification {
		in, rows = a.Pooled.Data, b.B
	}
	// HF: classifier(dropout(x)). The activations must stay as they are for Backward.
	x := in
	var keep []uint8
	p := 0.0
	if opt.Dropout {
		p = t.ClassifierDropout()
	}
	if p > 0 {
		x = append([]float32(nil), in...)
		keep = make([]uint8, len(x))
		n := len(x) / b.B
		for s := 0; s < b.B; s++ {
			Dropout(x[s*n:(s+1)*n], keep[s*n:(s+1)*n], p, opt.Seed, HeadDropoutStream+uint64(s))
		}
	}
	logits := t.headLogits(x, rows, b)
	dl := make([]float32, logits.Len())
	loss, counted, err := t.loss(dl, logits.Data, labels, b)
	if err != nil {
		return 0, nil, err
	}
	if !counted {
		return 0, nil, fmt.Errorf("%s: no label counts in this batch: the mean loss of none is undefined", t.Task)
	}
	dx := make([]float32, rows*H)
	tensor.LinearBackward(dx, g.Head.W.Data, g.Head.B.Data, dl, x, t.Head.W.Data, rows, H, L, 0)
	if keep != nil {
		DropoutBackward(dx, keep, p)
	}
	if t.Task == SequenceClassification {
		err = t.Bert.Backward(a, nil, &tensor.Tensor{Shape: []int{b.B, H}, Data: dx}, g.Bert)
	} else {
		err = t.Bert.Backward(a, &tensor.Tensor{Shape: []int{b.B, b.S, H}, Data: dx}, nil, g.Bert)
	}
	return loss, logits, err
}

// Loss is HF's loss of the task for logits as Forward returns them and labels as
// ForwardBackward takes them; NaN when no label counts.
func (t *TaskModel) Loss(logits *tensor.Tensor, labels []int, b Batch) (float64, error) {
	if err := t.checkLabels(labels, b); err != nil {
		return 0, err
	}
	want := b.B * b.S * t.NumLabels()
	if t.Task == SequenceClassification {
		want = b.B * t.NumLabels()
	}
	if logits == nil || logits.Len() != want {
		return 0, fmt.Errorf("%s: logits do not match the batch [%d, %d]", t.Task, b.B, b.S)
	}
	l, _, err := t.loss(nil, logits.Data, labels, b)
	return l, err
}

// checkLabels checks the labels' count and range for the batch.
func (t *TaskModel) checkLabels(labels []int, b Batch) error {
	L := t.NumLabels()
	switch t.Task {
	case SequenceClassification, TokenClassification:
		n := b.B
		if t.Task == TokenClassification {
			n = b.B * b.S
		}
		if len(labels) != n {
			return fmt.Errorf("%s: %d labels for a batch that needs %d", t.Task, len(labels), n)
		}
		for i, y := range labels {
			if y != IgnoreIndex && (y < 0 || y >= L) {
				return fmt.Errorf("%s: label %d at %d outside [0, %d)", t.Task, y, i, L)
			}
		}
	case QuestionAnswering:
		if len(labels) != 2*b.B {
			return fmt.Errorf("%s: %d positions for a batch that needs %d (start, end per sequence)", t.Task, len(labels), 2*b.B)
		}
		for i, y := range labels {
			if y < 0 {
				return fmt.Errorf("%s: negative position %d at sequence %d", t.Task, y, i/2)
			}
		}
	}
	return nil
}

// loss computes the task's loss from logits and, when dl is not nil, sets dl to d loss / d logits.
// counted reports whether every loss counted a label (else the loss is NaN).
func (t *TaskModel) loss(dl, logits []float32, labels []int, b Batch) (loss float64, counted bool, err error) {
	if t.Task != QuestionAnswering {
		var n int
		if dl == nil {
			loss, n, err = CrossEntropy(logits, t.NumLabels(), labels)
		} else {
			loss, n, err = CrossEntropyBackward(dl, logits, t.NumLabels(), labels, 1)
		}
		return loss, n > 0, err
	}
	// Split [B, S, 2] into start and end logits [B, S]; a position of S or more is ignored.
	B, S := b.B, b.S
	counted = true
	for k := range 2 {
		lg := make([]float32, B*S)
		for i := range lg {
			lg[i] = logits[2*i+k]
		}
		pos := make([]int, B)
		for s := range pos {
			pos[s] = labels[2*s+k]
			if pos[s] >= S {
				pos[s] = IgnoreIndex
			}
		}
		var l float64
		var n int
		if dl == nil {
			l, n, err = CrossEntropy(lg, S, pos)
		} else {
			d := make([]float32, B*S)
			l, n, err = CrossEntropyBackward(d, lg, S, pos, 0.5)
			for i, v := range d {
				dl[2*i+k] = v
			}
		}
		if err != nil {
			return 0, false, err
		}
		loss += l / 2
		counted = counted && n > 0
	}
	return loss, counted, nil
}
