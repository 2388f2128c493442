package lab

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/tinydata"
)

// Finetune is a fine-tuning run of the training lab (engine.TaskSentiment, engine.TaskPOS):
// core/train's Finetuner over a copy of a model's body with a new task head, driven one step
// at a time (Advance) so that the caller decides when to go on.
type Finetune struct {
	Tuner *train.Finetuner
	Tok   *tokenizer.Tokenizer
	// MaxLen is the sequence length of the data, and of Predict.
	MaxLen   int
	info     engine.FinetuneInfo
	finished bool
	start    time.Time
}

// NewFinetune prepares a fine-tuning run of req on a copy of body (body itself is left as it
// is: the other views keep using it), the task head initialised from req.Seed.
func NewFinetune(body *bert.Model, tok *tokenizer.Tokenizer, req engine.FinetuneRequest) (*Finetune, error) {
	if req.Epochs < 1 || req.Epochs > 50 {
		return nil, fmt.Errorf("epochs must be 1 to 50, not %d", req.Epochs)
	}
	if req.BatchSize < 1 || req.BatchSize > 256 {
		return nil, fmt.Errorf("batch size must be 1 to 256, not %d", req.BatchSize)
	}
	if !(req.LR > 0 && req.LR < 1) {
		return nil, fmt.Errorf("learning rate must be in (0, 1), not %g", req.LR)
	}
	maxLen := req.MaxLen
	if maxLen <= 0 {
		maxLen = 128
	}
	maxLen = min(maxLen, body.Config.MaxPositionEmbeddings)
	var (
		task        bert.Task
		labels      []string
		trainD, dev train.TaskDataset
		nTrain, nTe int
	)
	switch req.Task {
	case engine.TaskSentiment:
		tr, err := tinydata.LoadClassification(tinydata.WebSentimentTrain)
		if err != nil {
			return nil, err
		}
		te, err := tinydata.LoadClassification(tinydata.WebSentimentTest)
		if err != nil {
			return nil, err
		}
		if req.MaxTrain > 0 && req.MaxTrain < len(tr) {
			tr = tr[:req.MaxTrain]
		}
		task, labels = bert.SequenceClassification, train.ClassificationLabels(tr, te)
		d, err := train.NewClassificationData(tok, tr, labels, maxLen)
		if err != nil {
			return nil, err
		}
		t, err := train.NewClassificationData(tok, te, labels, maxLen)
		if err != nil {
			return nil, err
		}
		trainD, dev, nTrain, nTe = d, t, len(tr), len(te)
	case engine.TaskPOS:
		tr, err := tinydata.LoadTagged(tinydata.WebPOSTrain)
		if err != nil {
			return nil, err
		}
		te, err := tinydata.LoadTagged(tinydata.WebPOSTest)
		if err != nil {
			return nil, err
		}
		if req.MaxTrain > 0 && req.MaxTrain < len(tr) {
			tr = tr[:req.MaxTrain]
		}
		task, labels = bert.TokenClassification, train.TagLabels(tr, te)
		d, err := train.NewTaggingData(tok, tr, labels, maxLen)
		if err != nil {
			return nil, err
		}
		t, err := train.NewTaggingData(tok, te, labels, maxLen)
		if err != nil {
			return nil, err
		}
		trainD, dev, nTrain, nTe = d, t, len(tr), len(te)
	default:
		return nil, fmt.Errorf("unknown task %q (want %q, %q or %q)", req.Task, engine.TaskSentiment, engine.TaskPOS, engine.TaskMLM)
	}
	tm, err := copyWithHead(body, task, labels, req.Seed)
	if err != nil {
		return nil, err
	}
	c := train.DefaultFinetune()
	c.Epochs, c.BatchSize, c.LR, c.Seed, c.KeepBest = req.Epochs, req.BatchSize, req.LR, req.Seed, false
	c.GroupByLength = req.GroupByLength
	f, err := train.NewFinetuner(tm, trainD, dev, c)
	if err != nil {
		return nil, err
	}
	return &Finetune{
		info: engine.FinetuneInfo{Task: req.Task, Arch: string(task), Labels: labels, MainMetric: dev.MainMetric(),
			TotalSteps: f.TotalSteps, StepsPerEpoch: f.StepsPerEpoch, Train: nTrain, Test: nTe},
		Tuner: f, Tok: tok, MaxLen: maxLen,
	}, nil
}

// copyWithHead copies body's weights into a new task model whose head is initialised from
// seed: the same model as saving body to a folder and loading it with the task's head
// (TestCopyWithHeadEqualsFolderRoundTrip), without encoding and decoding every weight (in the
// page, a part of the Training lab's start).
func copyWithHead(body *bert.Model, task bert.Task, labels []string, seed uint64) (*bert.TaskModel, error) {
	heads := bert.Heads{Pooler: body.Pooler != nil, MLM: body.MLM != nil, NSP: body.NSP != nil, RTD: body.RTD != nil}
	c, err := bert.NewModel(body.Config, heads)
	if err != nil {
		return nil, err
	}
	src, dst := body.Params(), c.Params()
	if len(src) != len(dst) {
		return nil, fmt.Errorf("copy of the model: %d parameters, the copy has %d", len(src), len(dst))
	}
	for i, p := range src {
		if q := dst[i]; q.Name != p.Name || len(q.T.Data) != len(p.T.Data) {
			return nil, fmt.Errorf("copy of the model: parameter %d is %s %v, in the copy %s %v", i, p.Name, p.T.Shape, q.Name, q.T.Shape)
		}
		copy(dst[i].T.Data, p.T.Data)
	}
	return bert.NewTaskModel(c, task, labels, seed)
}

// Info describes the run as NewFinetune prepared it.
func (f *Finetune) Info() *engine.FinetuneInfo { return &f.info }

// Done reports whether the run has ended: every step taken and evaluated, or Stop called.
func (f *Finetune) Done() bool { return f.finished }

// Advance does the next piece of work of the run: the test-set evaluation when an epoch has
// just ended, else one optimizer step; after the last of them it ends the run (an EventDone
// follows). It returns the events of what it did.
func (f *Finetune) Advance(ctx context.Context) ([]train.Event, error) {
	if f.finished {
		return nil, nil
	}
	if f.start.IsZero() {
		f.start = time.Now()
	}
	var evs []train.Event
	switch {
	case f.Tuner.NeedsEval():
		ev, err := f.Tuner.Evaluate(ctx)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	case !f.Tuner.Done():
		ev, err := f.Tuner.Step(ctx)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	if f.Tuner.Done() && !f.Tuner.NeedsEval() {
		evs = append(evs, f.Stop())
	}
	return evs, nil
}

// Stop ends the run where it is; the model keeps the weights of its last step.
func (f *Finetune) Stop() train.Event {
	f.finished = true
	m := f.Tuner.Finish()
	return train.Event{Kind: train.EventDone, Step: f.Tuner.Steps, TotalSteps: f.Tuner.TotalSteps, Epoch: f.Tuner.Epoch(),
		Metrics: m, Elapsed: time.Since(f.start)}
}

// Predict runs the run's model on text: the task prediction of the classifier.
func (f *Finetune) Predict(text string) (*engine.TaskPrediction, error) {
	return PredictTask(f.Tuner.Model, f.Tok, text, f.MaxLen)
}

// Export returns the run's model as a zip of its HF folder "bertlab-TASK/", and the archive's
// name.
func (f *Finetune) Export() (name string, data []byte, err error) {
	dir := "bertlab-" + f.info.Task
	data, err = TaskFolderZip(f.Tuner.Model, f.Tok, dir)
	return dir + ".zip", data, err
}

// PredictTask runs m on text, encoded as its training data was (maxLen tokens at most).
func PredictTask(m *bert.TaskModel, tok *tokenizer.Tokenizer, text string, maxLen int) (*engine.TaskPrediction, error) {
	if len(m.Labels) == 0 {
		return nil, fmt.Errorf("the model has no labels")
	}
	maxLen = min(max(maxLen, 8), m.Bert.Config.MaxPositionEmbeddings)
	switch m.Task {
	case bert.SequenceClassification:
		d, err := train.NewClassificationData(tok, []dataset.Example{{Label: m.Labels[0], Text: text}}, m.Labels, maxLen)
		if err != nil {
			return nil, err
		}
		b, _, _ := d.Batch([]int{0})
		logits, err := m.Forward(b)
		if err != nil {
			return nil, err
		}
		p := softmax64(logits.Data[:len(m.Labels)])
		best := 0
		for i := range p {
			if p[i] > p[best] {
				best = i
			}
		}
		return &engine.TaskPrediction{Task: engine.TaskSentiment, Labels: m.Labels, Probs: p, Label: m.Labels[best]}, nil
	case bert.TokenClassification:
		words := tokenizer.PreTokenize(tok.Config(), text)
		out := &engine.TaskPrediction{Task: engine.TaskPOS, Words: words}
		if len(words) == 0 {
			return out, nil
		}
		tags := make([]string, len(words))
		for i := range tags {
			tags[i] = m.Labels[0]
		}
		d, err := train.NewTaggingData(tok, []dataset.TaggedSentence{{Tokens: words, Tags: tags}}, m.Labels, maxLen)
		if err != nil {
			return nil, err
		}
		b, labels, _ := d.Batch([]int{0})
		logits, err := m.Forward(b)
		if err != nil {
			return nil, err
		}
		L := len(m.Labels)
		for pos, l := range labels {
			if l == bert.IgnoreIndex {
				continue
			}
			p := softmax64(logits.Data[pos*L : (pos+1)*L])
			best := 0
			for i := range p {
				if p[i] > p[best] {
					best = i
				}
			}
			out.Tags = append(out.Tags, m.Labels[best])
			out.TagP = append(out.TagP, p[best])
		}
		// Words cut by the sequence length have no tag.
		out.Words = out.Words[:len(out.Tags)]
		return out, nil
	}
	return nil, fmt.Errorf("the training lab predicts with classifiers, not %s", m.Task)
}

func softmax64(x []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = max(mx, float64(v))
	}
	p := make([]float64, len(x))
	sum := 0.0
	for i, v := range x {
		p[i] = math.Exp(float64(v) - mx)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// TaskFolderFiles are the files of an HF folder of m, as hf.SaveTaskFolder writes
// them, in memory: config.json (architectures, id2label, label2id), model.safetensors (F32),
// vocab.txt and tokenizer_config.json.
func TaskFolderFiles(m *bert.TaskModel, tok *tokenizer.Tokenizer) (map[string][]byte, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	cfg, err := m.HFConfig()
	if err != nil {
		return nil, err
	}
	cj, err := cfg.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var ts []hf.Tensor
	for _, p := range m.Params() {
		ts = append(ts, hf.Tensor{Name: p.Name, Shape: p.T.Shape, Data: p.T.Data})
	}
	return folderFiles(cj, ts, tok)
}

// TaskFolderZip is TaskFolderFiles as an uncompressed zip archive whose files lie in the
// folder dir (e.g. "bertlab-sentiment/config.json").
func TaskFolderZip(m *bert.TaskModel, tok *tokenizer.Tokenizer, dir string) ([]byte, error) {
	files, err := TaskFolderFiles(m, tok)
	if err != nil {
		return nil, err
	}
	return folderZip(files, dir)
}
