package familylab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
)

// TaskSpec is a fine-tuning task every variant is measured on after its pre-training: the
// variant's final body with BERT's head for the task (bert.NewProbeTaskModel: the same head on
// every family, so that the bodies are what differs), fine-tuned on Train and scored on Test.
type TaskSpec struct {
	Name string    `json:"name"` // what the table calls it: "sentiment", "pos"
	Task bert.Task `json:"task"` // sequence or token classification
	// Train and Test are files in the task's format (classification TSV, CoNLL).
	Train string `json:"train"`
	Test  string `json:"test"`
	// MaxTrain keeps the first MaxTrain training examples (0: all); MaxTest the first MaxTest
	// test examples (0: all).
	MaxTrain int     `json:"max_train,omitempty"`
	MaxTest  int     `json:"max_test,omitempty"`
	Epochs   int     `json:"epochs"`
	Batch    int     `json:"batch"`
	LR       float64 `json:"lr"` // peak learning rate (10% warm-up, linear decay)
}

// TaskScore is a variant's figure on one task: the test set's accuracy (token accuracy for
// part of speech) after fine-tuning.
type TaskScore struct {
	Name     string  `json:"name"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Examples int     `json:"examples"` // test examples scored
	Steps    int     `json:"steps"`    // fine-tuning steps
	Seconds  float64 `json:"seconds"`
}

// Task files in a clone: tinydata's sentiment and part-of-speech sets (the command's
// --task-data moves them from TaskDataDir to another folder of the same layout).
const (
	TaskDataDir    = "tinydata"
	SentimentTrain = TaskDataDir + "/sentiment/train.tsv"
	SentimentTest  = TaskDataDir + "/sentiment/test.tsv"
	POSTrain       = TaskDataDir + "/pos/train.conll"
	POSTest        = TaskDataDir + "/pos/test.conll"
)

// DefaultTasks are the record's fine-tuning tasks: tinydata's sentiment (3,200 training
// sentences, 400 test) and part of speech (UD English, 17 tags), 3 epochs each at 5e-4
// (a small model's rate: Turc et al. fine-tune their small BERTs at 1e-4 to 5e-4, batch 32).
func DefaultTasks() []TaskSpec {
	return []TaskSpec{
		{Name: "sentiment", Task: bert.SequenceClassification, Train: SentimentTrain, Test: SentimentTest, Epochs: 3, Batch: 32, LR: 5e-4},
		{Name: "pos", Task: bert.TokenClassification, Train: POSTrain, Test: POSTest, Epochs: 3, Batch: 32, LR: 5e-4},
	}
}

// quickTasks are DefaultTasks cut to a few hundred examples and one epoch, for the quick
// setting.
func quickTasks() []TaskSpec {
	ts := DefaultTasks()
	for i := range ts {
		ts[i].Epochs, ts[i].MaxTrain, ts[i].MaxTest = 1, 256, 128
	}
	return ts
}

func (s TaskSpec) validate() error {
	switch {
	case s.Name == "":
		return errors.New("task without a name")
	case s.Task != bert.SequenceClassification && s.Task != bert.TokenClassification:
		return fmt.Errorf("task %s: %q is not sequence or token classification", s.Name, s.Task)
	case s.Train == "" || s.Test == "":
		return fmt.Errorf("task %s: needs a training and a test file", s.Name)
	case s.Epochs < 1 || s.Batch < 1 || s.MaxTrain < 0 || s.MaxTest < 0:
		return fmt.Errorf("task %s: %d epochs, batch %d (at least 1 each)", s.Name, s.Epochs, s.Batch)
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return fmt.Errorf("task %s: learning rate %g", s.Name, s.LR)
	}
	return nil
}

// taskData is a task's training and test sets, tokenized, with the training file's labels.
type taskData struct {
	spec        TaskSpec
	labels      []string
	train, test train.TaskDataset
}

// loadTask reads and tokenizes a task's files for sequences of at most seq tokens.
func loadTask(s TaskSpec, tok *tokenizer.Tokenizer, seq int) (*taskData, error) {
	read := func(path string, max int) (*train.TaskFile, error) {
		f, err := train.ReadTaskFile(s.Task, path)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", s.Name, err)
		}
		f.Head(max)
		return f, nil
	}
	trainFile, err := read(s.Train, s.MaxTrain)
	if err != nil {
		return nil, err
	}
	testFile, err := read(s.Test, s.MaxTest)
	if err != nil {
		return nil, err
	}
	d := &taskData{spec: s, labels: trainFile.Labels()}
	if d.train, _, err = trainFile.Dataset(tok, d.labels, seq, train.QAConfig{}); err == nil {
		d.test, _, err = testFile.Dataset(tok, d.labels, seq, train.QAConfig{})
	}
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", s.Name, err)
	}
	return d, nil
}

// finetune measures the body saved in folder on one task: BERT's head for it on a fresh load of
// the body, fine-tuned with the task's settings (dropout on, no evaluation until the end), then
// scored on the test set.
func finetune(ctx context.Context, folder string, d *taskData, seed uint64) (TaskScore, error) {
	f, err := hf.LoadFolder(folder)
	if err != nil {
		return TaskScore{}, err
	}
	m, err := bert.NewProbeTaskModel(f.Model, d.spec.Task, d.labels, seed)
	if err != nil {
		return TaskScore{}, err
	}
	fc := train.DefaultFinetune()
	fc.Epochs, fc.BatchSize, fc.LR, fc.Seed, fc.KeepBest = d.spec.Epochs, d.spec.Batch, d.spec.LR, seed, false
	ft, err := train.NewFinetuner(m, d.train, nil, fc)
	if err != nil {
		return TaskScore{}, err
	}
	start := time.Now()
	if _, err := ft.Run(ctx, nil); err != nil {
		return TaskScore{}, err
	}
	metrics, err := d.test.Evaluate(ctx, m, 64)
	if err != nil {
		return TaskScore{}, err
	}
	name := d.test.MainMetric()
	v, ok := metrics[name]
	if !ok {
		return TaskScore{}, fmt.Errorf("task %s: no %s in the evaluation", d.spec.Name, name)
	}
	return TaskScore{Name: d.spec.Name, Metric: name, Value: v, Examples: d.test.Examples(), Steps: ft.Steps, Seconds: time.Since(start).Seconds()}, nil
}

// scoreTasks fine-tunes r's final body on every task of c that r has no score for yet, in
// order, adding the scores to r.
func scoreTasks(ctx context.Context, c Config, r *Result, tok *tokenizer.Tokenizer, data map[string]*taskData, log io.Writer) error {
	have := map[string]bool{}
	for _, s := range r.Tasks {
		have[s.Name] = true
	}
	for _, s := range c.Tasks {
		if have[s.Name] {
			continue
		}
		d := data[s.Name]
		if d == nil {
			var err error
			if d, err = loadTask(s, tok, c.SeqLen); err != nil {
				return err
			}
			data[s.Name] = d
		}
		sc, err := finetune(ctx, r.Folder, d, c.Seed)
		if err != nil {
			return fmt.Errorf("fine-tuning on %s: %w", s.Name, err)
		}
		fmt.Fprintf(log, "%s: %s fine-tuned (%d steps, %.0f s): test %s %.4f\n", r.Family, s.Name, sc.Steps, sc.Seconds, sc.Metric, sc.Value)
		r.Tasks = append(r.Tasks, sc)
	}
	return nil
}

// measureTeacher fills rec.Teacher (unless a record of these settings has it): the teacher
// folder's parameters, held-out masked-LM figures and task scores, measured as the variants'.
func measureTeacher(ctx context.Context, c Config, rec *Record, tok *tokenizer.Tokenizer, heldout []train.Instance, data map[string]*taskData, log io.Writer) error {
	if rec.Teacher == nil {
		f, err := hf.LoadFolder(c.Teacher)
		if err != nil {
			return err
		}
		m := f.Model
		ev, err := train.EvaluateMLM(m, heldout, tok.PadID(), c.Batch)
		if err != nil {
			return err
		}
		rec.Teacher = &Result{Family: m.Config.FamilyOf(), Architecture: architecture(c.Teacher), Params: m.NumParams(),
			Hidden: m.Config.HiddenSize, EmbeddingDim: m.Config.EmbDim(), Blocks: m.NumBlocks(), Layers: len(m.Layers),
			Folder: c.Teacher, Final: Point{Accuracy: ev.Accuracy, Top5: ev.Top5, Perplexity: ev.Perplexity}}
		fmt.Fprintf(log, "teacher %s: held-out masked-LM accuracy %.4f\n", c.Teacher, ev.Accuracy)
	}
	if len(rec.Teacher.Tasks) < len(c.Tasks) {
		return scoreTasks(ctx, c, rec.Teacher, tok, data, log)
	}
	return nil
}

// forwardRounds are the rounds of timeForwards.
const forwardRounds = 7

// timeForwards times every result's final model (and the teacher's) in eval mode with its
// pre-training heads over a batch of c.Batch held-out sequences padded to c.SeqLen: one untimed
// pass each, then forwardRounds rounds that time every model in turn, so that a busy moment of
// the machine falls on all alike; each model's median, in milliseconds, into ForwardMs.
func timeForwards(c Config, rec *Record, heldout []train.Instance, padID int) error {
	rs := []*Result{}
	for i := range rec.Results {
		rs = append(rs, &rec.Results[i])
	}
	if rec.Teacher != nil {
		rs = append(rs, rec.Teacher)
	}
	insts := make([]train.Instance, c.Batch)
	for i := range insts {
		insts[i] = heldout[i%len(heldout)]
	}
	b, err := train.NewPretrainBatch(insts, padID, c.SeqLen)
	if err != nil {
		return err
	}
	models := make([]*bert.Model, len(rs))
	for i, r := range rs {
		f, err := hf.LoadFolder(r.Folder)
		if err != nil {
			return err
		}
		models[i] = f.Model
	}
	ms := make([][]float64, len(rs))
	for round := -1; round < forwardRounds; round++ {
		for i, m := range models {
			opt := bert.Options{MLM: m.MLM != nil, NSP: m.NSP != nil, RTD: m.RTD != nil}
			t0 := time.Now()
			if _, err := m.Forward(b.Batch, opt); err != nil {
				return fmt.Errorf("%s: timing the forward pass: %w", rs[i].Family, err)
			}
			if round >= 0 {
				ms[i] = append(ms[i], float64(time.Since(t0).Microseconds())/1000)
			}
		}
	}
	for i, r := range rs {
		slices.Sort(ms[i])
		r.ForwardMs = max(ms[i][len(ms[i])/2], 0.001)
	}
	return nil
}
