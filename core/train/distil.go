package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tensor"
)

// Teacher is a frozen model that a Pretrainer distils into its student: each step, the
// teacher runs in eval mode on the step's batch, and the student learns from its masked-LM
// distributions and attention rows as well as from the labels (bert.ForwardBackwardDistil).
type Teacher struct {
	Model   *bert.Model
	Weights bert.DistilWeights
	// LayerOf[l] is the teacher layer whose attention student layer l learns from.
	LayerOf []int
}

// NewTeacher checks that teacher can teach student and maps their layers: the same vocabulary
// size and number of heads, at least as many positions as the student, and an MLM head;
// student layer l learns from teacher layer ⌈(l+1)·Lt/Ls⌉−1, so the last from the last (as
// MiniLM) and equal depths layer by layer. Position types may differ: that is the point of
// distilling a relative-position teacher into an absolute student.
func NewTeacher(teacher, student *bert.Model, w bert.DistilWeights) (*Teacher, error) {
	tc, sc := teacher.Config, student.Config
	switch {
	case teacher.MLM == nil:
		return nil, fmt.Errorf("teacher: no MLM head (cls.predictions)")
	case tc.VocabSize != sc.VocabSize:
		return nil, fmt.Errorf("teacher: vocab_size %d, the student's is %d: they must share a vocabulary", tc.VocabSize, sc.VocabSize)
	case w.Attention != 0 && tc.NumAttentionHeads != sc.NumAttentionHeads:
		return nil, fmt.Errorf("teacher: %d attention heads, the student has %d: attention distillation pairs them head by head", tc.NumAttentionHeads, sc.NumAttentionHeads)
	case tc.MaxPositionEmbeddings < sc.MaxPositionEmbeddings:
		return nil, fmt.Errorf("teacher: %d positions, fewer than the student's %d", tc.MaxPositionEmbeddings, sc.MaxPositionEmbeddings)
	case w.Hard < 0 || w.Soft < 0 || w.Attention < 0 || w.Cosine < 0 || w.Temperature < 0 || w.Hard+w.Soft+w.Attention+w.Cosine == 0:
		return nil, fmt.Errorf("teacher: loss weights %+v: want non-negative weights, not all 0", w)
	case w.Cosine != 0 && tc.HiddenSize != sc.HiddenSize:
		return nil, fmt.Errorf("teacher: hidden size %d, the student's is %d: the cosine term compares their hidden states", tc.HiddenSize, sc.HiddenSize)
	}
	t := &Teacher{Model: teacher, Weights: w}
	Lt, Ls := tc.NumHiddenLayers, sc.NumHiddenLayers
	for l := range Ls {
		t.LayerOf = append(t.LayerOf, ((l+1)*Lt+Ls-1)/Ls-1)
	}
	return t, nil
}

// Targets runs the teacher in eval mode on b: its masked-LM distributions at the positions
// labelled in labels [B, S] (in order; at the weights' temperature), with an attention weight
// the attention probabilities of the layer each student layer learns from ([B, A, S, S] each),
// and with a cosine weight its last hidden state.
func (t *Teacher) Targets(b bert.Batch, labels []int) (bert.DistilTargets, error) {
	var rows []int
	for i, y := range labels {
		if y != bert.IgnoreIndex {
			rows = append(rows, i)
		}
	}
	trace := t.Weights.Attention != 0
	out, err := t.Model.Forward(b, bert.Options{MLM: true, MLMRows: rows, Trace: trace})
	if err != nil {
		return bert.DistilTargets{}, fmt.Errorf("teacher: %w", err)
	}
	tg := bert.DistilTargets{MLM: out.MLMLogits.Data}
	if T := t.Weights.Temperature; T > 0 && T != 1 {
		tensor.Scale(tg.MLM, float32(1/T))
	}
	tensor.SoftmaxRows(tg.MLM, t.Model.Config.VocabSize, nil)
	if t.Weights.Cosine != 0 {
		tg.Hidden = out.Hidden
	}
	if trace {
		for _, l := range t.LayerOf {
			tg.Attentions = append(tg.Attentions, out.Trace.Attentions[l])
		}
	}
	return tg, nil
}

// Distil makes p's steps distil t into p.Model (masked LM only: the data must have no sentence
// task, since the distillation loss has no next-sentence term).
func (p *Pretrainer) Distil(t *Teacher) error {
	if task := p.Data.Config.Instances.Task; task != NoSentenceTask {
		return fmt.Errorf("distil: the data's %s task has no place in the distillation loss: pre-train with no sentence task", task)
	}
	if len(p.Config.Neighbours.Heads) > 0 {
		return fmt.Errorf("distil: a run with the neighbour prior takes no teacher: the teacher's attention is the prior")
	}
	if _, err := NewTeacher(t.Model, p.Model, t.Weights); err != nil {
		return err
	}
	p.Teacher = t
	return nil
}

// distilStep is a micro-batch's forward and backward of the distillation loss.
func (p *Pretrainer) distilStep(b PretrainBatch, opt bert.TrainOptions) (bert.DistilLosses, error) {
	tg, err := p.Teacher.Targets(b.Batch, b.MLMLabels)
	if err != nil {
		return bert.DistilLosses{}, err
	}
	return p.Model.ForwardBackwardDistil(b.Batch, b.MLMLabels, tg, p.Teacher.Weights, opt, p.grads)
}

// TeacherFile is the file in a distilled run's output folder that records its teacher, so that
// a resumed run distils from the same one.
const TeacherFile = "distil.json"

// TeacherRecord is TeacherFile's content: the teacher's model folder and the loss weights.
type TeacherRecord struct {
	Dir     string             `json:"teacher"`
	Weights bert.DistilWeights `json:"weights"`
}

// WriteTeacherRecord writes r to out/TeacherFile (atomically), creating out if needed.
func WriteTeacherRecord(out string, r TeacherRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return hf.WriteFileAtomic(filepath.Join(out, TeacherFile), append(b, '\n'))
}

// ReadTeacherRecord reads out/TeacherFile; a run without one (not distilled) gives nil, nil.
func ReadTeacherRecord(out string) (*TeacherRecord, error) {
	path := filepath.Join(out, TeacherFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r TeacherRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Dir == "" {
		return nil, fmt.Errorf("%s: no teacher folder", path)
	}
	return &r, nil
}

// DistilFrom loads the teacher folder r.Dir and makes p's steps distil it (NewTeacher, Distil).
func (p *Pretrainer) DistilFrom(r TeacherRecord) error {
	f, err := hf.LoadFolder(r.Dir)
	if err != nil {
		return fmt.Errorf("teacher: %w", err)
	}
	t, err := NewTeacher(f.Model, p.Model, r.Weights)
	if err != nil {
		return err
	}
	return p.Distil(t)
}

// ErrDistilUsage marks an error of SetupDistil that is the command line's: a teacher or weights
// that do not fit the run.
var ErrDistilUsage = errors.New("distillation")

// SetupDistil sets up the distillation of a run writing to out: from the teacher given on a new
// run (then recorded in out), or from the record of a resumed run, which a teacher or weights
// given again must agree with (weightsGiven: the weights were asked for, not defaults). It
// returns the record in use, nil when the run has no teacher.
func (p *Pretrainer) SetupDistil(out string, resume bool, given TeacherRecord, weightsGiven bool) (*TeacherRecord, error) {
	rec := &given
	if resume {
		was, err := ReadTeacherRecord(out)
		switch {
		case err != nil:
			return nil, err
		case was == nil && given.Dir != "":
			return nil, fmt.Errorf("%w: teacher %s: the run in %s was not distilled; a teacher cannot join it on resume", ErrDistilUsage, given.Dir, out)
		case was == nil:
			return nil, nil
		case (given.Dir != "" && filepath.Clean(given.Dir) != filepath.Clean(was.Dir)) || (weightsGiven && given.Weights != was.Weights):
			return nil, fmt.Errorf("%w: the run distils %s with weights %+v; asked for %s with %+v", ErrDistilUsage, was.Dir, was.Weights, given.Dir, given.Weights)
		}
		rec = was
	} else if given.Dir == "" {
		if weightsGiven {
			return nil, fmt.Errorf("%w: the loss weights need a teacher", ErrDistilUsage)
		}
		return nil, nil
	}
	if err := p.DistilFrom(*rec); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrDistilUsage, err)
	}
	if !resume {
		return rec, WriteTeacherRecord(out, *rec)
	}
	return rec, nil
}
