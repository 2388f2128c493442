package bert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"

	"github.com/bertlab/bertlab/core/tensor"
)

// Task names a fine-tuning head by the HuggingFace class that has it; the name is what
// config.json lists under "architectures".
type Task string

// The fine-tuning heads of HF's modeling_bert.py.
const (
	// SequenceClassification is BertForSequenceClassification: dropout, then the linear
	// "classifier" [num_labels, H] on the pooled output; single-label cross-entropy.
	SequenceClassification Task = "BertForSequenceClassification"
	// TokenClassification is BertForTokenClassification: no pooler; dropout, then the linear
	// "classifier" [num_labels, H] on every hidden state; cross-entropy over labelled tokens.
	TokenClassification Task = "BertForTokenClassification"
	// QuestionAnswering is BertForQuestionAnswering: no pooler, no dropout; the linear
	// "qa_outputs" [2, H] on every hidden state gives the start and end logits of a span.
	QuestionAnswering Task = "BertForQuestionAnswering"
)

// Tasks lists the fine-tuning heads.
var Tasks = []Task{SequenceClassification, TokenClassification, QuestionAnswering}

// ParseTask returns the Task of an HF architecture name.
func ParseTask(arch string) (Task, error) {
	for _, t := range Tasks {
		if string(t) == arch {
			return t, nil
		}
	}
	return "", fmt.Errorf("task %q: not one of %v", arch, Tasks)
}

// HeadName is the prefix of the head's parameters: "classifier" or "qa_outputs".
func (t Task) HeadName() string {
	if t == QuestionAnswering {
		return "qa_outputs"
	}
	return "classifier"
}

// hasPooler reports whether HF builds the task's BertModel with its pooler
// (add_pooling_layer): only sequence classification reads the pooled output.
func (t Task) hasPooler() bool { return t == SequenceClassification }

// TaskModel is BERT with a fine-tuning head, as HF's BertFor<Task> classes: the body under the
// "bert." prefix (with the pooler for sequence classification only, never the pre-training
// heads) and the head's linear layer.
type TaskModel struct {
	Task Task
	Bert *Model // the body: Params names start with "bert."
	Head Linear // classifier.{weight,bias}: [num_labels, H], [num_labels]; qa_outputs: [2, H], [2]
	// Labels are id2label: Labels[i] names class i. QA has none (its two outputs are start and end).
	Labels []string
}

// NewTaskModel puts a head for task on body. The body's pre-training heads are left out (the
// tensors stay shared with body: no copy); its pooler is kept for sequence classification, where
// a body without one gets a new one, and left out for the other tasks. New parameters are
// initialised as HF's _init_weights does: weights from N(0, initializer_range²), biases 0, from
// a generator seeded with seed. labels name the classes of a classifier; QA takes none.
func NewTaskModel(body *Model, task Task, labels []string, seed uint64) (*TaskModel, error) {
	if fam := body.Config.Family; !fam.Is(FamilyBERT) {
		// Their task heads differ from BERT's (RoBERTa's classifier has its own dense layer,
		// DistilBERT's a pre_classifier, ...).
		return nil, fmt.Errorf("%s: task heads of model_type %q are not supported yet (only bert's)", task, fam)
	}
	return newTaskModel(body, task, labels, seed)
}

// NewProbeTaskModel is NewTaskModel for a body of any family: BERT's head for task (the pooler
// and classifier, or the token classifier) on it, the same head whatever the body, as the family
// lab compares bodies on the same tasks. ELECTRA's replaced-token head is left out like the
// other pre-training heads. The model trains and predicts as any TaskModel does, but only a
// BERT body's is an HF task class: hf.SaveTaskFolder refuses the others (RoBERTa's classifier,
// DistilBERT's pre_classifier, ... differ from BERT's).
func NewProbeTaskModel(body *Model, task Task, labels []string, seed uint64) (*TaskModel, error) {
	return newTaskModel(body, task, labels, seed)
}

func newTaskModel(body *Model, task Task, labels []string, seed uint64) (*TaskModel, error) {
	if _, err := ParseTask(string(task)); err != nil {
		return nil, err
	}
	n := len(labels)
	if task == QuestionAnswering {
		if n != 0 {
			return nil, fmt.Errorf("%s: takes no labels (got %d)", task, n)
		}
		n = 2
	} else {
		if err := checkLabelNames(labels); err != nil {
			return nil, fmt.Errorf("%s: %w", task, err)
		}
	}
	c := body.Config
	b := *body
	b.MLM, b.NSP, b.RTD = nil, nil, nil
	rng := rand.New(rand.NewPCG(seed, 0x68656164)) // "head"
	normal := func(t *tensor.Tensor) {
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64() * c.InitializerRange)
		}
	}
	H := c.HiddenSize
	switch {
	case !task.hasPooler():
		b.Pooler = nil
	case b.Pooler == nil:
		p := Linear{W: tensor.New(H, H), B: tensor.New(H)}
		normal(p.W)
		b.Pooler = &p
	}
	t := &TaskModel{Task: task, Bert: &b, Head: Linear{W: tensor.New(n, H), B: tensor.New(n)}}
	normal(t.Head.W)
	if labels != nil {
		t.Labels = append([]string(nil), labels...)
	}
	return t, nil
}

// checkLabelNames requires at least two distinct, non-empty class names (HF's single-label
// classification; one label would be regression).
func checkLabelNames(labels []string) error {
	if len(labels) < 2 {
		return fmt.Errorf("needs at least 2 labels, got %d %q", len(labels), labels)
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if l == "" {
			return fmt.Errorf("empty label name in %q", labels)
		}
		if seen[l] {
			return fmt.Errorf("label %q twice", l)
		}
		seen[l] = true
	}
	return nil
}

// NumLabels is the number of outputs of the head per position: the classes, or 2 for QA.
func (t *TaskModel) NumLabels() int { return t.Head.W.Shape[0] }

// Params lists the parameters with their HF names, in state_dict order: the body's, then the
// head's.
func (t *TaskModel) Params() []Param {
	h := t.Task.HeadName()
	return append(t.Bert.Params(), Param{h + ".weight", t.Head.W}, Param{h + ".bias", t.Head.B})
}

// NumParams is the number of parameters: the body's and the head's.
func (t *TaskModel) NumParams() int64 {
	var n int64
	for _, p := range t.Params() {
		n += int64(p.T.Len())
	}
	return n
}

// ClassifierDropout is the dropout probability before the head in training mode: config.json's
// classifier_dropout when set, else hidden_dropout_prob (HF); 0 for QA, whose head has none.
func (t *TaskModel) ClassifierDropout() float64 {
	if t.Task == QuestionAnswering {
		return 0
	}
	c := t.Bert.Config
	if raw, ok := c.Extra["classifier_dropout"]; ok {
		var p *float64
		if json.Unmarshal(raw, &p) == nil && p != nil {
			return *p
		}
	}
	return c.HiddenDropoutProb
}

// HFConfig returns the config.json of the task model: the body's config with "architectures"
// naming the task and, for a classifier, id2label and label2id (HF's num_labels is their size)
// and the problem type. The body's config is not changed.
func (t *TaskModel) HFConfig() (Config, error) {
	c := t.Bert.Config
	c.Extra = maps.Clone(c.Extra)
	if err := c.SetExtra("architectures", []string{string(t.Task)}); err != nil {
		return Config{}, err
	}
	// The labels are id2label's alone: a stale num_labels would contradict them.
	for _, k := range []string{"id2label", "label2id", "num_labels", "_num_labels", "problem_type"} {
		delete(c.Extra, k)
	}
	if t.Task == QuestionAnswering {
		return c, nil
	}
	// Written by hand to keep the ids in numeric order, as transformers writes them.
	var id2, l2 bytes.Buffer
	id2.WriteByte('{')
	l2.WriteByte('{')
	for i, l := range t.Labels {
		if i > 0 {
			id2.WriteByte(',')
			l2.WriteByte(',')
		}
		name, _ := json.Marshal(l)
		fmt.Fprintf(&id2, "%q:%s", strconv.Itoa(i), name)
		fmt.Fprintf(&l2, "%s:%d", name, i)
	}
	id2.WriteByte('}')
	l2.WriteByte('}')
	c.Extra["id2label"] = json.RawMessage(id2.Bytes())
	c.Extra["label2id"] = json.RawMessage(l2.Bytes())
	if t.Task == SequenceClassification {
		c.Extra["problem_type"] = json.RawMessage(`"single_label_classification"`)
	}
	return c, nil
}

// ConfigLabels returns the class names of config.json's id2label, in id order, or nil when it
// has none. The ids must be 0..n-1.
func ConfigLabels(c Config) ([]string, error) {
	raw, ok := c.Extra["id2label"]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("config.json: id2label: %w", err)
	}
	labels := make([]string, len(m))
	for k, v := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(m) {
			return nil, fmt.Errorf("config.json: id2label: id %q is not in 0..%d", k, len(m)-1)
		}
		labels[i] = v
	}
	return labels, nil
}

// DefaultLabelNames are HF's names for classes without names: LABEL_0, LABEL_1, ...
func DefaultLabelNames(n int) []string {
	l := make([]string, n)
	for i := range l {
		l[i] = "LABEL_" + strconv.Itoa(i)
	}
	return l
}

// TaskGrads holds d loss / d parameter of a TaskModel, listed as TaskModel.Params lists the
// parameters.
type TaskGrads struct {
	Bert *Grads
	Head Linear
	name string // the head's name, for Params
}

// NewGrads returns zero gradients shaped like t's parameters.
func (t *TaskModel) NewGrads() *TaskGrads {
	return &TaskGrads{Bert: t.Bert.NewGrads(), Head: Linear{W: tensor.New(t.Head.W.Shape...), B: tensor.New(t.Head.B.Shape...)},
		name: t.Task.HeadName()}
}

// Params lists the gradients with the names of the parameters: g.Params()[i] is the gradient
// of t.Params()[i] for the model t that made g.
func (g *TaskGrads) Params() []Param {
	return append(g.Bert.Params(), Param{g.name + ".weight", g.Head.W}, Param{g.name + ".bias", g.Head.B})
}

// Zero sets every gradient to 0.
func (g *TaskGrads) Zero() {
	g.Bert.Zero()
	g.Head.W.Zero()
	g.Head.B.Zero()
}
