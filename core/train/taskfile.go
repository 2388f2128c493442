package train

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// MissingLabels returns the labels of have that are not in want.
func MissingLabels(have, want []string) []string {
	var out []string
	for _, l := range have {
		if !slices.Contains(want, l) {
			out = append(out, l)
		}
	}
	return out
}

// TaskFile is a parsed data file of one fine-tuning task, in the task's format
// (core/dataset: classification TSV, CoNLL or SQuAD JSON).
type TaskFile struct {
	task bert.Task
	path string
	cls  []dataset.Example
	tag  []dataset.TaggedSentence
	qa   []dataset.SQuADExample
}

// ReadTaskFile parses a data file in the task's format. A malformed line is fatal: the error
// names the file and line.
func ReadTaskFile(task bert.Task, path string) (*TaskFile, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t := &TaskFile{task: task, path: path}
	var n int
	switch task {
	case bert.SequenceClassification:
		t.cls, err = dataset.ParseClassification(r)
		n = len(t.cls)
	case bert.TokenClassification:
		t.tag, err = dataset.ParseCoNLL(r)
		n = len(t.tag)
	default:
		t.qa, err = dataset.ParseSQuAD(r)
		n = len(t.qa)
	}
	var pe *dataset.ParseError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("%s:%d: %s (fatal: malformed lines are not skipped)", path, pe.Line, pe.Msg)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case n == 0:
		return nil, fmt.Errorf("%s: no examples", path)
	}
	return t, nil
}

// Labels lists the file's labels, sorted (nil for QA).
func (t *TaskFile) Labels() []string {
	switch t.task {
	case bert.SequenceClassification:
		return ClassificationLabels(t.cls)
	case bert.TokenClassification:
		return TagLabels(t.tag)
	}
	return nil
}

// Dataset tokenizes the file for a model with these labels, and says what it had to cut.
func (t *TaskFile) Dataset(tok *tokenizer.Tokenizer, labels []string, seq int, qc QAConfig) (TaskDataset, []string, error) {
	var notes []string
	switch t.task {
	case bert.SequenceClassification:
		d, err := NewClassificationData(tok, t.cls, labels, seq)
		if err != nil {
			return nil, nil, err
		}
		if d.Truncated > 0 {
			notes = append(notes, fmt.Sprintf("%d of %d examples cut to %d tokens", d.Truncated, len(t.cls), seq))
		}
		if d.Unknown > 0 {
			notes = append(notes, fmt.Sprintf("%d examples have labels the model does not know (%q): not trained on, scored as wrong", d.Unknown, MissingLabels(t.Labels(), labels)))
		}
		return d, notes, nil
	case bert.TokenClassification:
		d, err := NewTaggingData(tok, t.tag, labels, seq)
		if err != nil {
			return nil, nil, err
		}
		if d.Dropped > 0 {
			notes = append(notes, fmt.Sprintf("%d words beyond %d tokens (or without a word piece) neither trained on nor scored", d.Dropped, seq))
		}
		if d.Unknown > 0 {
			notes = append(notes, fmt.Sprintf("%d words have tags the model does not know (%q): not trained on, scored as wrong", d.Unknown, MissingLabels(t.Labels(), labels)))
		}
		return d, notes, nil
	}
	d, err := NewQAData(tok, t.qa, qc)
	if err != nil {
		return nil, nil, err
	}
	if d.QuestionsTruncated > 0 {
		notes = append(notes, fmt.Sprintf("%d questions cut to %d tokens", d.QuestionsTruncated, qc.MaxQueryLength))
	}
	if d.Len() > len(t.qa) {
		notes = append(notes, fmt.Sprintf("%d questions in %d windows of %d tokens (doc stride %d)", len(t.qa), d.Len(), seq, qc.DocStride))
	}
	return d, notes, nil
}
