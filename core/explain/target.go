// Package explain answers "why did BERT say that?": gradient attributions (gradient x input
// and integrated gradients) of one output to the input tokens, the logit lens, head ablation
// and head importance (Michel et al. 2019), and the numbers behind one attention row (the
// neuron view). It works on encoded inputs (ids) and leaves the tokenizer to the text-level
// Explainer; it has no UI and no HTTP.
package explain

import (
	"fmt"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// Model is what is explained: a pre-training model (its MLM and NSP heads) or a fine-tuned task
// model (sequence or token classification).
type Model struct {
	// Bert is the encoder, with the pre-training heads it has; for a task model, Task.Bert.
	Bert *bert.Model
	// Task is the fine-tuned model; nil for a pre-training model.
	Task *bert.TaskModel
}

// PreTraining returns the Model of a pre-training (or masked-LM) checkpoint.
func PreTraining(m *bert.Model) Model { return Model{Bert: m} }

// FineTuned returns the Model of a task model.
func FineTuned(t *bert.TaskModel) Model { return Model{Bert: t.Bert, Task: t} }

// Input is one encoded sequence, [CLS] and [SEP] included.
type Input struct {
	IDs     []int `json:"input_ids"`      // [S]
	TypeIDs []int `json:"token_type_ids"` // [S]; nil: all 0
}

// batch returns the input repeated n times as a batch [n, S].
func (in Input) batch(n int) bert.Batch {
	S := len(in.IDs)
	b := bert.Batch{B: n, S: S, InputIDs: make([]int, 0, n*S)}
	if in.TypeIDs != nil {
		b.TokenTypeIDs = make([]int, 0, n*S)
	}
	for range n {
		b.InputIDs = append(b.InputIDs, in.IDs...)
		b.TokenTypeIDs = append(b.TokenTypeIDs, in.TypeIDs...)
	}
	return b
}

// check reports whether the input fits the model.
func (in Input) check(c bert.Config) error {
	if len(in.IDs) == 0 {
		return fmt.Errorf("explain: empty input")
	}
	if in.TypeIDs != nil && len(in.TypeIDs) != len(in.IDs) {
		return fmt.Errorf("explain: %d token types for %d ids", len(in.TypeIDs), len(in.IDs))
	}
	return in.batch(1).Validate(c)
}

// TargetKind names the kind of output explained.
type TargetKind string

// The outputs that can be explained.
const (
	// MaskedToken is the MLM logit of vocabulary id Index at token Position.
	MaskedToken TargetKind = "mlm"
	// IsNext is the NSP head's IsNext logit (seq_relationship_logits[0]).
	IsNext TargetKind = "isnext"
	// Class is a sequence classifier's logit of class Index.
	Class TargetKind = "class"
	// Tag is a token classifier's logit of tag Index at token Position.
	Tag TargetKind = "tag"
)

// Target is the output whose logit is explained.
type Target struct {
	Kind     TargetKind `json:"kind"`
	Position int        `json:"position"` // token index: the [MASK] (mlm) or the tagged token (tag); 0 otherwise
	Index    int        `json:"index"`    // vocabulary id (mlm), class (class) or tag (tag); 0 for isnext
}

// String is the target as the command line writes it.
func (t Target) String() string {
	switch t.Kind {
	case MaskedToken:
		return fmt.Sprintf("mlm:%d:%d", t.Position, t.Index)
	case IsNext:
		return "isnext"
	case Class:
		return fmt.Sprintf("class:%d", t.Index)
	}
	return fmt.Sprintf("tag:%d:%d", t.Position, t.Index)
}

// check reports whether m has the head t needs and t's position and index are in range for an
// input of S tokens.
func (m Model) check(t Target, S int) error {
	pos := func() error {
		if t.Position < 0 || t.Position >= S {
			return fmt.Errorf("explain: target position %d outside the %d tokens", t.Position, S)
		}
		return nil
	}
	index := func(n int, what string) error {
		if t.Index < 0 || t.Index >= n {
			return fmt.Errorf("explain: %s %d outside [0, %d)", what, t.Index, n)
		}
		return nil
	}
	switch t.Kind {
	case MaskedToken:
		if m.Bert.MLM == nil {
			return fmt.Errorf("explain: the model has no MLM head (cls.predictions)")
		}
		if err := pos(); err != nil {
			return err
		}
		return index(m.Bert.Config.VocabSize, "vocabulary id")
	case IsNext:
		if m.Bert.NSP == nil || m.Bert.Pooler == nil {
			return fmt.Errorf("explain: the model has no NSP head (cls.seq_relationship and bert.pooler)")
		}
		return index(1, "NSP output")
	case Class:
		if m.Task == nil || m.Task.Task != bert.SequenceClassification {
			return fmt.Errorf("explain: a class target needs a sequence classifier (BertForSequenceClassification)")
		}
		return index(m.Task.NumLabels(), "class")
	case Tag:
		if m.Task == nil || m.Task.Task != bert.TokenClassification {
			return fmt.Errorf("explain: a tag target needs a token classifier (BertForTokenClassification)")
		}
		if err := pos(); err != nil {
			return err
		}
		return index(m.Task.NumLabels(), "tag")
	}
	return fmt.Errorf("explain: unknown target kind %q", t.Kind)
}

// seed computes the target's logit for each of the B sequences of a pass and the gradient of
// their sum with respect to the encoder's outputs: dHidden [B, S, H] or dPooled [B, H] (the
// other nil). Sequences do not interact, so the gradient of the sum holds each sequence's own.
func (m Model) seed(a *bert.Activations, t Target, B, S int, g *bert.Grads) (logits []float64, dHidden, dPooled *tensor.Tensor, err error) {
	H := m.Bert.Config.HiddenSize
	logits = make([]float64, B)
	// A linear head row w, b on x [H]: the logit and its gradient w.
	linear := func(W, bias *tensor.Tensor, x, dx []float32) float64 {
		w := W.Row(t.Index)
		s := float64(bias.Data[t.Index])
		for j, v := range x {
			s += float64(v) * float64(w[j])
		}
		copy(dx, w)
		return s
	}
	switch t.Kind {
	case MaskedToken:
		V := m.Bert.Config.VocabSize
		rows := tensor.New(B, H)
		for i := range B {
			copy(rows.Row(i), a.Hidden.Data[(i*S+t.Position)*H:(i*S+t.Position+1)*H])
		}
		lg, err := m.Bert.MLMHeadLogits(rows)
		if err != nil {
			return nil, nil, nil, err
		}
		dl := tensor.New(B, V)
		for i := range B {
			logits[i] = float64(lg.Data[i*V+t.Index])
			dl.Data[i*V+t.Index] = 1
		}
		dr, err := m.Bert.MLMHeadBackward(rows, dl, g)
		if err != nil {
			return nil, nil, nil, err
		}
		dHidden = tensor.New(B, S, H)
		for i := range B {
			copy(dHidden.Data[(i*S+t.Position)*H:], dr.Row(i))
		}
	case IsNext, Class:
		head := m.Bert.NSP
		if t.Kind == Class {
			head = &m.Task.Head
		}
		W, bias := head.W, head.B
		dPooled = tensor.New(B, H)
		for i := range B {
			logits[i] = linear(W, bias, a.Pooled.Row(i), dPooled.Row(i))
		}
	case Tag:
		dHidden = tensor.New(B, S, H)
		for i := range B {
			r := (i*S + t.Position) * H
			logits[i] = linear(m.Task.Head.W, m.Task.Head.B, a.Hidden.Data[r:r+H], dHidden.Data[r:r+H])
		}
	}
	return logits, dHidden, dPooled, nil
}
