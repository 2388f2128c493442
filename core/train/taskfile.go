package train

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/hf"
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

// Head keeps the file's first n examples (all when n is 0 or more than it has).
func (t *TaskFile) Head(n int) {
	if n <= 0 {
		return
	}
	t.cls, t.tag, t.qa = t.cls[:min(n, len(t.cls))], t.tag[:min(n, len(t.tag))], t.qa[:min(n, len(t.qa))]
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

// FinetuneSetup is what a fine-tuning run of the command line starts from.
type FinetuneSetup struct {
	Folder     *hf.TaskFolder // the model with its task head, and its tokenizer
	Train, Dev TaskDataset    // Dev nil without a dev file
	SeqLen     int            // the sequence length used: at most the model's positions
	Notes      []string       // what the user should know: labels, unused tensors, cuts
}

// PrepareFinetune reads the training file (and the dev file, unless devPath is "") of task,
// loads the model folder with a head for their labels (a label only in dev gets an output,
// never trained), and builds the datasets of at most seq tokens, cut to the model's positions;
// qa gives the question-answering windows for a length.
func PrepareFinetune(task bert.Task, model, trainPath, devPath string, seq int, seed uint64, qa func(seq int) QAConfig) (*FinetuneSetup, error) {
	trainData, err := ReadTaskFile(task, trainPath)
	if err != nil {
		return nil, err
	}
	var devData *TaskFile
	if devPath != "" {
		if devData, err = ReadTaskFile(task, devPath); err != nil {
			return nil, err
		}
	}
	s := &FinetuneSetup{}
	labels := trainData.Labels()
	if devData != nil && labels != nil {
		if extra := MissingLabels(devData.Labels(), labels); len(extra) > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("labels %q occur in %s but not in %s: the model has outputs for them, never trained", extra, devPath, trainPath))
			labels = LabelSet(labels, extra)
		}
	}
	f, err := hf.LoadTaskFolder(model, task, hf.TaskLoadOptions{Labels: labels, Seed: seed})
	if err != nil {
		return nil, err
	}
	if f.Tokenizer == nil {
		return nil, fmt.Errorf("model folder %s has no vocab.txt", model)
	}
	s.Folder = f
	s.Notes = append(s.Notes, f.Report.Notes...)
	if ig := f.Report.Ignored; len(ig) > 0 {
		names := strings.Join(ig, ", ")
		if len(ig) > 4 {
			names = fmt.Sprintf("%s and %d more", strings.Join(ig[:4], ", "), len(ig)-4)
		}
		s.Notes = append(s.Notes, fmt.Sprintf("not used for %s: %s", task, names))
	}
	s.SeqLen = seq
	if p := f.Model.Bert.Config.MaxPositionEmbeddings; seq > p {
		s.Notes = append(s.Notes, fmt.Sprintf("--seq %d is more than the model's %d positions: using %d", seq, p, p))
		s.SeqLen = p
	}
	var notes []string
	if s.Train, notes, err = trainData.Dataset(f.Tokenizer, f.Model.Labels, s.SeqLen, qa(s.SeqLen)); err != nil {
		return nil, fmt.Errorf("%s: %w", trainPath, err)
	}
	for _, n := range notes {
		s.Notes = append(s.Notes, trainPath+": "+n)
	}
	if devData != nil {
		if s.Dev, notes, err = devData.Dataset(f.Tokenizer, f.Model.Labels, s.SeqLen, qa(s.SeqLen)); err != nil {
			return nil, fmt.Errorf("%s: %w", devPath, err)
		}
		for _, n := range notes {
			s.Notes = append(s.Notes, devPath+": "+n)
		}
	}
	return s, nil
}
