package train

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// TaskDataset is a fine-tuning dataset turned into model inputs: features, one sequence each,
// that a Finetuner batches, and the examples they came from, against which Evaluate scores a
// model. A classification or tagging example is one feature; a QA example over a long context
// is several (overlapping windows).
type TaskDataset interface {
	// Task is the head the data trains.
	Task() bert.Task
	// Len is the number of features.
	Len() int
	// Length is the number of tokens of feature i, padding left out.
	Length(i int) int
	// Examples is the number of examples (what metrics count as "n").
	Examples() int
	// Batch pads the features idx to their longest and returns the inputs, the labels as
	// bert.TaskModel.ForwardBackward takes them and the number of non-padding tokens.
	Batch(idx []int) (b bert.Batch, labels []int, tokens int)
	// Evaluate runs m in eval mode over every feature, batchSize at a time, and scores its
	// predictions against the examples. ctx is checked between batches.
	Evaluate(ctx context.Context, m *bert.TaskModel, batchSize int) (Metrics, error)
	// MainMetric names the metric that picks the best model.
	MainMetric() string
}

// feature is one model input: ids and token types, and labels as the task's head takes them
// for one sequence (classification: 1; tagging: one per token; QA: start and end).
type feature struct {
	ids, types []int
	labels     []int
}

// features is what every dataset holds.
type features struct {
	padID int
	feats []feature
	task  bert.Task
}

func (f *features) Task() bert.Task { return f.task }
func (f *features) Len() int        { return len(f.feats) }

// Length is the number of tokens of feature i.
func (f *features) Length(i int) int { return len(f.feats[i].ids) }

// Batch pads as HF's DataCollatorWithPadding (and DataCollatorForTokenClassification) do:
// [PAD] ids, attention mask 0, token type 0, label IgnoreIndex.
func (f *features) Batch(idx []int) (bert.Batch, []int, int) {
	S := 0
	for _, i := range idx {
		S = max(S, len(f.feats[i].ids))
	}
	B := len(idx)
	b := bert.Batch{B: B, S: S, InputIDs: make([]int, B*S), TokenTypeIDs: make([]int, B*S), AttentionMask: make([]int, B*S)}
	perToken := f.task == bert.TokenClassification
	var labels []int
	if perToken {
		labels = make([]int, B*S)
	}
	tokens := 0
	for r, i := range idx {
		ft := f.feats[i]
		for s := range S {
			k := r*S + s
			b.InputIDs[k] = f.padID
			if perToken {
				labels[k] = bert.IgnoreIndex
			}
			if s < len(ft.ids) {
				b.InputIDs[k], b.TokenTypeIDs[k], b.AttentionMask[k] = ft.ids[s], ft.types[s], 1
				if perToken {
					labels[k] = ft.labels[s]
				}
			}
		}
		if !perToken {
			labels = append(labels, ft.labels...)
		}
		tokens += len(ft.ids)
	}
	return b, labels, tokens
}

// forEachLogits runs m in eval mode over every feature, the shortest first so that batches
// carry little padding, and calls fn with each feature's index and logits: [L] for sequence
// classification, [len(ids), L] rows for the other heads.
func (f *features) forEachLogits(ctx context.Context, m *bert.TaskModel, batchSize int, fn func(i int, logits []float32)) error {
	if err := m.Check(); err != nil {
		return err
	}
	if m.Task != f.task {
		return fmt.Errorf("evaluate: %s data for a %s model", f.task, m.Task)
	}
	order := make([]int, len(f.feats))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(f.feats[order[a]].ids) < len(f.feats[order[b]].ids) })
	batchSize = max(1, batchSize)
	L := m.NumLabels()
	for lo := 0; lo < len(order); lo += batchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		idx := order[lo:min(lo+batchSize, len(order))]
		b, _, _ := f.Batch(idx)
		logits, err := m.Forward(b)
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		for r, i := range idx {
			if f.task == bert.SequenceClassification {
				fn(i, logits.Data[r*L:(r+1)*L])
			} else {
				fn(i, logits.Data[r*b.S*L:(r*b.S+len(f.feats[i].ids))*L])
			}
		}
	}
	return nil
}

// argmax returns the index of the largest value (the first of equal ones, as torch.argmax).
func argmax[T cmp.Ordered](x []T) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// LabelSet returns the distinct labels sorted, the order HF's run_glue and run_ner give class
// ids when the model has none yet.
func LabelSet(labels ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, ls := range labels {
		for _, l := range ls {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// labelIDs maps each label name to its id.
func labelIDs(labels []string) map[string]int {
	m := make(map[string]int, len(labels))
	for i, l := range labels {
		m[l] = i
	}
	return m
}

// ClassificationData is a sequence-classification dataset: single texts or pairs
// (dataset.ParseClassification's format).
type ClassificationData struct {
	features
	Labels []string          // the model's classes: a label's id is its index
	Source []dataset.Example // the examples, in feature order
	// Truncated counts the examples cut to fit the sequence length.
	Truncated int
	// Unknown counts the examples whose label is not among Labels: they are not trained on
	// (label IgnoreIndex) and Evaluate scores them as wrong.
	Unknown int
	gold    []int // the label ids, unknown labels numbered from len(Labels) on
}

// ClassificationLabels lists the labels of examples, sorted.
func ClassificationLabels(examples ...[]dataset.Example) []string {
	var ls []string
	for _, ex := range examples {
		for _, e := range ex {
			ls = append(ls, e.Label)
		}
	}
	return LabelSet(ls)
}

// NewClassificationData tokenizes examples as HF's run_glue does: [CLS] text [SEP], or
// [CLS] a [SEP] b [SEP] for pairs, truncated to maxLen tokens (longest first for pairs).
// labels are the model's classes (see Unknown for the others).
func NewClassificationData(tok *tokenizer.Tokenizer, examples []dataset.Example, labels []string, maxLen int) (*ClassificationData, error) {
	if maxLen < 3 {
		return nil, fmt.Errorf("classification data: sequence length %d (need at least 3)", maxLen)
	}
	ids := labelIDs(labels)
	d := &ClassificationData{features: features{padID: tok.PadID(), task: bert.SequenceClassification}, Labels: labels, Source: examples}
	for i, e := range examples {
		y, ok := ids[e.Label]
		if !ok {
			y = len(ids)
			ids[e.Label] = y
		}
		train := y
		if y >= len(labels) {
			train = bert.IgnoreIndex
			d.Unknown++
		}
		var enc tokenizer.Encoding
		var err error
		if e.Pair != "" {
			enc, err = tok.EncodePair(e.Text, e.Pair, maxLen)
		} else {
			enc, err = tok.Encode(e.Text, maxLen)
		}
		if err != nil {
			return nil, fmt.Errorf("example %d: %w", i+1, err)
		}
		if enc.Truncated {
			d.Truncated++
		}
		d.feats = append(d.feats, feature{ids: enc.IDs, types: enc.TypeIDs, labels: []int{train}})
		d.gold = append(d.gold, y)
	}
	return d, nil
}

func (d *ClassificationData) Examples() int      { return len(d.Source) }
func (d *ClassificationData) MainMetric() string { return "accuracy" }

// Predict returns the predicted class id of every example.
func (d *ClassificationData) Predict(ctx context.Context, m *bert.TaskModel, batchSize int) ([]int, error) {
	pred := make([]int, len(d.feats))
	err := d.forEachLogits(ctx, m, batchSize, func(i int, logits []float32) { pred[i] = argmax(logits) })
	return pred, err
}

// Evaluate returns "accuracy", "macro_f1" and "n". Labels the model does not know count as
// classes of their own, never predicted.
func (d *ClassificationData) Evaluate(ctx context.Context, m *bert.TaskModel, batchSize int) (Metrics, error) {
	if !slices.Equal(m.Labels, d.Labels) {
		return nil, fmt.Errorf("evaluate: the model's labels %q are not the data's %q", m.Labels, d.Labels)
	}
	pred, err := d.Predict(ctx, m, batchSize)
	if err != nil {
		return nil, err
	}
	acc, err := Accuracy(pred, d.gold)
	if err != nil {
		return nil, err
	}
	f1, err := MacroF1(pred, d.gold)
	if err != nil {
		return nil, err
	}
	return Metrics{"accuracy": acc, "macro_f1": f1, "n": float64(len(d.gold))}, nil
}

// TaggingData is a token-classification dataset (dataset.ParseCoNLL's format).
type TaggingData struct {
	features
	Labels    []string // the model's tags: a tag's id is its index
	Sentences []dataset.TaggedSentence
	// Dropped counts the words left out of training and scoring: cut by the sequence length,
	// or with no word piece at all (HF's run_ner drops them the same way).
	Dropped int
	// Unknown counts the words whose tag is not among Labels: they are not trained on and
	// Evaluate scores them as wrong.
	Unknown int
	// first[i] lists the position in feature i of each scored word's first piece, and
	// words[i] the index of that word in its sentence.
	first, words [][]int
}

// TagLabels lists the tags of sentences, sorted.
func TagLabels(sents ...[]dataset.TaggedSentence) []string {
	var ls [][]string
	for _, ss := range sents {
		for _, s := range ss {
			ls = append(ls, s.Tags)
		}
	}
	return LabelSet(ls...)
}

// NewTaggingData tokenizes pre-split words as HF's run_ner does (is_split_into_words): each
// word into its word pieces, [CLS] pieces [SEP] truncated to maxLen, the word's tag on its first
// piece and IgnoreIndex on the others and on [CLS] and [SEP] (label_all_tokens false).
// labels are the model's tags (see Unknown for the others).
func NewTaggingData(tok *tokenizer.Tokenizer, sents []dataset.TaggedSentence, labels []string, maxLen int) (*TaggingData, error) {
	if maxLen < 3 {
		return nil, fmt.Errorf("tagging data: sequence length %d (need at least 3)", maxLen)
	}
	ids := labelIDs(labels)
	d := &TaggingData{features: features{padID: tok.PadID(), task: bert.TokenClassification}, Labels: labels, Sentences: sents}
	for si, s := range sents {
		if len(s.Tokens) != len(s.Tags) {
			return nil, fmt.Errorf("sentence %d: %d tokens, %d tags", si+1, len(s.Tokens), len(s.Tags))
		}
		ft := feature{ids: []int{tok.CLSID()}, labels: []int{bert.IgnoreIndex}}
		var first, words []int
		for w, word := range s.Tokens {
			pieces := tok.Tokenize(word)
			if len(pieces) == 0 || len(ft.ids)+1 >= maxLen {
				d.Dropped++
				continue
			}
			y, ok := ids[s.Tags[w]]
			if !ok {
				y = bert.IgnoreIndex
				d.Unknown++
			}
			first, words = append(first, len(ft.ids)), append(words, w)
			for k, p := range pieces {
				if len(ft.ids)+1 >= maxLen {
					break
				}
				ft.ids = append(ft.ids, p.ID)
				if k == 0 {
					ft.labels = append(ft.labels, y)
				} else {
					ft.labels = append(ft.labels, bert.IgnoreIndex)
				}
			}
		}
		ft.ids = append(ft.ids, tok.SEPID())
		ft.labels = append(ft.labels, bert.IgnoreIndex)
		ft.types = make([]int, len(ft.ids))
		d.feats = append(d.feats, ft)
		d.first, d.words = append(d.first, first), append(d.words, words)
	}
	return d, nil
}

func (d *TaggingData) Examples() int { return len(d.Sentences) }

// MainMetric is entity F1 for chunk tags (B-, I-, E-, S- prefixes: named entities), token
// accuracy otherwise (part of speech).
func (d *TaggingData) MainMetric() string {
	for _, l := range d.Labels {
		if len(l) > 2 && l[1] == '-' && strings.IndexByte("BIES", l[0]) >= 0 {
			return "entity_f1"
		}
	}
	return "token_accuracy"
}

// Predict returns, for every sentence, the gold and predicted tags of its scored words (see
// Dropped): the prediction of a word is that of its first piece.
func (d *TaggingData) Predict(ctx context.Context, m *bert.TaskModel, batchSize int) (pred, gold [][]string, err error) {
	pred, gold = make([][]string, len(d.feats)), make([][]string, len(d.feats))
	L := m.NumLabels()
	err = d.forEachLogits(ctx, m, batchSize, func(i int, logits []float32) {
		for k, s := range d.first[i] {
			pred[i] = append(pred[i], m.Labels[argmax(logits[s*L:(s+1)*L])])
			gold[i] = append(gold[i], d.Sentences[i].Tags[d.words[i][k]])
		}
	})
	return pred, gold, err
}

// Evaluate returns "token_accuracy", "entity_f1" (seqeval's, see EntityScores) and "n", the
// number of sentences.
func (d *TaggingData) Evaluate(ctx context.Context, m *bert.TaskModel, batchSize int) (Metrics, error) {
	if !slices.Equal(m.Labels, d.Labels) {
		return nil, fmt.Errorf("evaluate: the model's labels %q are not the data's %q", m.Labels, d.Labels)
	}
	pred, gold, err := d.Predict(ctx, m, batchSize)
	if err != nil {
		return nil, err
	}
	acc, err := TokenAccuracy(pred, gold)
	if err != nil {
		return nil, err
	}
	_, _, f1, err := EntityScores(pred, gold)
	if err != nil {
		return nil, err
	}
	return Metrics{"token_accuracy": acc, "entity_f1": f1, "n": float64(len(d.Sentences))}, nil
}
