package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// PretrainConfig are the settings of a pre-training run (run_pretraining.py's flags, with HF
// Trainer's names where they differ).
type PretrainConfig struct {
	Steps     int // optimizer steps of the whole run (num_train_steps)
	BatchSize int // sequences per optimizer step (train_batch_size)
	// GradAccum splits each step into this many micro-batches of BatchSize/GradAccum sequences
	// whose gradients add up (gradient_accumulation_steps); less than 1 means 1.
	GradAccum   int
	LR          float64 // peak learning rate
	Warmup      int     // steps of linear warm-up from 0, then linear decay to 0 at Steps
	WeightDecay float64 // AdamW's decoupled weight decay (not on biases and LayerNorm)
	// MaxGradNorm clips the global gradient norm (1.0 in BERT); 0 or less does not clip.
	MaxGradNorm float64
	// NoDropout trains in eval mode; otherwise dropout is on with the config's probabilities.
	NoDropout bool
	// Seed selects the dropout masks (the data has its own seed).
	Seed uint64
	// PadTo pads every batch to this length; 0 pads to the longest sequence of the batch.
	PadTo int

	// OutDir receives checkpoints (OutDir/checkpoint-<step>) and the final model; "" saves
	// nothing.
	OutDir string
	// SaveEvery writes a checkpoint every this many steps (0: only at the end).
	SaveEvery int
	// KeepCheckpoints is how many checkpoints stay on disk; older ones are removed after a new
	// one is complete (0 keeps all).
	KeepCheckpoints int
	// EvalEvery evaluates on Pretrainer.Eval every this many steps and at the end (0: only at
	// the end, and never without Eval).
	EvalEvery int
	// Neighbours, when it names heads, adds NeighbourPrior's loss to the first steps (masked
	// LM only: the data must have no sentence task).
	Neighbours NeighbourPrior
	// StartStep starts a new run at this step of its schedule, from weights without optimizer
	// state (a run carried on from its last saved model after its checkpoints were lost): the
	// data position is where the run would be, and the learning rate ramps from 0 back up to
	// the schedule's over Rewarm steps, so that the fresh AdamW moments settle first.
	StartStep int
	// Rewarm is the length of that ramp (with StartStep > 0; 0: no ramp).
	Rewarm int
}

// DefaultPretrain is BERT's recipe scaled to a small run: batch 32, peak learning rate 1e-4
// with 1% warm-up, weight decay 0.01, clipping at 1.0, two checkpoints kept.
func DefaultPretrain(steps int) PretrainConfig {
	return PretrainConfig{Steps: steps, BatchSize: 32, GradAccum: 1, LR: 1e-4, Warmup: steps / 100,
		WeightDecay: 0.01, MaxGradNorm: 1, KeepCheckpoints: 2}
}

func (c PretrainConfig) validate() error {
	switch {
	case c.Steps < 1:
		return fmt.Errorf("pretrain: %d steps", c.Steps)
	case c.BatchSize < 1:
		return fmt.Errorf("pretrain: batch size %d", c.BatchSize)
	case c.BatchSize%max(1, c.GradAccum) != 0:
		return fmt.Errorf("pretrain: batch size %d is not a multiple of the %d accumulation steps", c.BatchSize, c.GradAccum)
	case !(c.LR >= 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("pretrain: learning rate %g", c.LR)
	case c.Warmup < 0:
		return fmt.Errorf("pretrain: warm-up %d steps", c.Warmup)
	case c.StartStep < 0 || c.StartStep >= c.Steps:
		return fmt.Errorf("pretrain: start step %d outside [0, %d)", c.StartStep, c.Steps)
	case c.Rewarm < 0:
		return fmt.Errorf("pretrain: re-warm-up %d steps", c.Rewarm)
	}
	return nil
}

// TrainState is where a run is: what a checkpoint needs besides weights and optimizer moments.
type TrainState struct {
	Step     int      // optimizer steps taken
	Position Position // the next example
	Tokens   int64    // non-padding tokens trained on
}

// errPacked refuses a model packed for inference (bert.Model.PackWeights): training would
// leave its packed copies behind the weights.
var errPacked = errors.New("the model's weights are packed for inference (PackWeights): training would not update the packed copies; load it again to train")

// ErrNonFinite reports a loss or gradient that is NaN or infinite: the step is not applied and
// the run stops, its last checkpoint intact.
var ErrNonFinite = errors.New("loss or gradient is not finite")

// Pretrainer trains a BertForPreTraining on masked LM and the sentence task of its data, one
// optimizer step at a time (Step: the page calls it between frames) or to the end (Run). It is
// not safe for concurrent use.
type Pretrainer struct {
	Model     *bert.Model
	Tokenizer *tokenizer.Tokenizer // saved with checkpoints; may be nil
	Data      *PretrainData
	// Eval, if set, are the held-out examples (masked; see PretrainData.Fixed) evaluated every
	// Config.EvalEvery steps.
	Eval      []Instance
	Config    PretrainConfig
	Optimizer *AdamW
	State     TrainState
	// History holds the events of this run's steps and evaluations, reloaded on resume; it is
	// written to trainer_state.json as log_history.
	History []Event
	// Teacher, when set (Distil), is the frozen model the steps distil into Model.
	Teacher *Teacher
	// Generator, when set (SetGenerator), is ELECTRA's generator, trained with Model, the
	// discriminator.
	Generator *Generator
	// ExtraEval, if set, adds its figures to each evaluation's metrics (the cloze shares of
	// bertlab pretrain --cloze); it must not change the model.
	ExtraEval func() (map[string]float64, error)

	grads        *bert.Grads
	priorTargets []*tensor.Tensor // NeighbourPrior's targets, reused between steps
	started      time.Time        // this session's first step
	newTokens    int64            // tokens of this session
}

// NewPretrainer starts a run of m on data. The model needs the MLM head, and the pooler and
// NSP head when the data has a sentence task.
func NewPretrainer(m *bert.Model, tok *tokenizer.Tokenizer, data *PretrainData, c PretrainConfig) (*Pretrainer, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.GradAccum < 1 {
		c.GradAccum = 1
	}
	if m.MLM == nil && m.RTD == nil {
		return nil, fmt.Errorf("pretrain: the model has no MLM head (cls.predictions)")
	}
	if m.Packed() {
		return nil, errPacked
	}
	if data.Config.Instances.Task != NoSentenceTask && (m.NSP == nil || m.Pooler == nil) {
		return nil, fmt.Errorf("pretrain: the %s task needs the pooler and the NSP head (cls.seq_relationship), which the model lacks", data.Config.Instances.Task)
	}
	if err := c.Neighbours.check(m.Config); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	if len(c.Neighbours.Heads) > 0 && data.Config.Instances.Task != NoSentenceTask {
		return nil, fmt.Errorf("pretrain: the neighbour prior is a masked-LM loss; the data's %s task has no place in it: pre-train with no sentence task", data.Config.Instances.Task)
	}
	if tok != nil && tok.Vocab().Len() != m.Config.VocabSize {
		return nil, fmt.Errorf("pretrain: vocabulary of %d tokens for a model of vocab_size %d", tok.Vocab().Len(), m.Config.VocabSize)
	}
	if n := data.Config.Instances.MaxSeqLength; n > m.Config.MaxSequenceLength() || c.PadTo > m.Config.MaxSequenceLength() {
		return nil, fmt.Errorf("pretrain: sequences of %d tokens for a model of %d positions", max(n, c.PadTo), m.Config.MaxSequenceLength())
	}
	adam := DefaultAdamW(c.LR)
	adam.WeightDecay = c.WeightDecay
	p := &Pretrainer{Model: m, Tokenizer: tok, Data: data, Config: c,
		Optimizer: NewAdamW(m.Params(), adam), grads: m.NewGrads()}
	if c.StartStep > 0 && data.Len() > 0 {
		seen := c.StartStep * c.BatchSize
		p.State = TrainState{Step: c.StartStep, Position: Position{Epoch: seen / data.Len(), Index: seen % data.Len()}}
	}
	return p, nil
}

// LR is the learning rate of the next step: the peak rate times HF's linear schedule (times
// the re-warm-up ramp after a StartStep).
func (p *Pretrainer) LR() float64 {
	lr := p.Config.LR * LinearSchedule(p.State.Step, p.Config.Warmup, p.Config.Steps)
	if c := p.Config; c.StartStep > 0 && c.Rewarm > 0 && p.State.Step < c.StartStep+c.Rewarm {
		lr *= float64(p.State.Step-c.StartStep+1) / float64(c.Rewarm+1)
	}
	return lr
}

// Step takes one optimizer step: forward and backward over BatchSize examples in GradAccum
// micro-batches, gradients averaged over them, clipped, and an AdamW update at the scheduled
// learning rate. The state moves on only when the step completes: a cancelled ctx (checked
// before each micro-batch) or an error leaves the model, the optimizer and the position as they
// were, except that a non-finite loss (ErrNonFinite) is not recoverable by retrying.
func (p *Pretrainer) Step(ctx context.Context) (Event, error) {
	c := p.Config
	if p.State.Step >= c.Steps {
		return Event{}, fmt.Errorf("pretrain: all %d steps taken", c.Steps)
	}
	if p.started.IsZero() {
		p.started = time.Now()
	}
	micro := c.BatchSize / c.GradAccum
	pos := p.State.Position
	if p.Model.MLM == nil && p.Generator == nil {
		return Event{}, fmt.Errorf("pretrain: the discriminator has no generator (SetGenerator)")
	}
	p.grads.Zero()
	if p.Generator != nil {
		p.Generator.grads.Zero()
	}
	var sum bert.Losses
	var soft, attn, cos float64 // distillation terms
	var el electraLosses        // ELECTRA's, summed over the micro-batches
	tokens := 0
	for a := range c.GradAccum {
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		var insts []Instance
		insts, pos = p.Data.Next(pos, micro)
		b, err := NewPretrainBatch(insts, p.Data.PadID, c.PadTo)
		if err != nil {
			return Event{}, err
		}
		opt := bert.TrainOptions{Dropout: !c.NoDropout, Seed: mix64(mix64(c.Seed^uint64(p.State.Step)) ^ uint64(a))}
		var l bert.Losses
		if p.Generator != nil {
			e, err := p.electraStep(b, opt)
			if err != nil {
				return Event{}, fmt.Errorf("pretrain step %d: %w", p.State.Step+1, err)
			}
			l = bert.Losses{Total: e.generator + p.Generator.Weight*e.discriminator, MLM: e.generator}
			el.discriminator += e.discriminator
			el.correct, el.counted, el.replaced = el.correct+e.correct, el.counted+e.counted, el.replaced+e.replaced
		} else if p.Teacher != nil || c.Neighbours.Active(p.State.Step) {
			step := p.distilStep
			if p.Teacher == nil {
				step = p.priorStep
			}
			dl, err := step(b, opt)
			if err != nil {
				return Event{}, fmt.Errorf("pretrain step %d: %w", p.State.Step+1, err)
			}
			l = bert.Losses{Total: dl.Total, MLM: dl.Hard}
			soft, attn, cos = soft+dl.Soft, attn+dl.Attention, cos+dl.Cosine
		} else if l, err = p.Model.ForwardBackward(b.Batch, b.MLMLabels, b.NSPLabels, opt, p.grads); err != nil {
			return Event{}, fmt.Errorf("pretrain step %d: %w", p.State.Step+1, err)
		}
		sum.Total += l.Total
		sum.MLM += l.MLM
		sum.NSP += l.NSP
		tokens += b.Tokens
	}
	gs := p.stepGrads()
	k := float64(c.GradAccum)
	if c.GradAccum > 1 { // HF divides each micro-batch's loss by the accumulation steps
		s := float32(1 / k)
		for _, g := range gs {
			tensor.Scale(g.T.Data, s)
		}
	}
	loss := bert.Losses{Total: sum.Total / k, MLM: sum.MLM / k, NSP: sum.NSP / k}
	maxNorm := c.MaxGradNorm
	if maxNorm <= 0 {
		maxNorm = math.Inf(1)
	}
	norm := GradNorm(gs)
	if bad(loss.Total) || bad(norm) {
		return Event{}, fmt.Errorf("pretrain step %d: loss %g, gradient norm %g: %w", p.State.Step+1, loss.Total, norm, ErrNonFinite)
	}
	lr := p.LR()
	if err := p.Optimizer.ApplyScaled(gs, lr, ClipCoef(norm, maxNorm)); err != nil {
		return Event{}, err
	}
	p.State.Step++
	p.State.Position = pos
	p.State.Tokens += int64(tokens)
	p.newTokens += int64(tokens)
	ev := p.event(EventStep)
	ev.Loss, ev.MLMLoss, ev.NSPLoss, ev.LR, ev.GradNorm = loss.Total, loss.MLM, loss.NSP, lr, norm
	ev.DistilSoft, ev.DistilAttention, ev.DistilCosine = soft/k, attn/k, cos/k
	if p.Generator != nil {
		ev.RTDLoss, ev.RTDAccuracy = el.discriminator/k, float64(el.correct)/float64(el.counted)
		ev.Replaced = float64(el.replaced) / float64(el.counted)
	}
	p.History = append(p.History, ev)
	return ev, nil
}

// event is an event of the current state, with the session's throughput.
func (p *Pretrainer) event(k EventKind) Event {
	ev := Event{Kind: k, Step: p.State.Step, TotalSteps: p.Config.Steps, Epoch: p.Data.EpochFloat(p.State.Position), Tokens: p.State.Tokens}
	if !p.started.IsZero() {
		ev.Elapsed = time.Since(p.started)
		if s := ev.Elapsed.Seconds(); s > 0 {
			ev.TokensPerSec = float64(p.newTokens) / s
		}
	}
	return ev
}

// Evaluate measures the masked LM on p.Eval (eval mode) and returns it as an EventEval.
func (p *Pretrainer) Evaluate() (Event, error) {
	ev := p.event(EventEval)
	if p.Generator != nil {
		m, err := p.Generator.Evaluate(p.Model, p.Eval, p.Data.PadID, p.Config.BatchSize/p.Config.GradAccum)
		if err != nil {
			return Event{}, err
		}
		ev.Metrics = m
	} else {
		r, err := EvaluateMLM(p.Model, p.Eval, p.Data.PadID, p.Config.BatchSize/p.Config.GradAccum)
		if err != nil {
			return Event{}, err
		}
		ev.Metrics = r.Map()
	}
	if p.ExtraEval != nil {
		extra, err := p.ExtraEval()
		if err != nil {
			return Event{}, fmt.Errorf("evaluation at step %d: %w", p.State.Step, err)
		}
		for k, v := range extra {
			ev.Metrics[k] = v
		}
	}
	p.History = append(p.History, ev)
	return ev, nil
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// MLMMetrics are masked-LM figures over the predicted positions of a set of examples.
type MLMMetrics struct {
	Accuracy   float64 `json:"mlm_accuracy"` // top-1: the label is the arg max
	Top5       float64 `json:"mlm_top5"`     // the label is among the 5 highest logits
	Perplexity float64 `json:"perplexity"`   // exp(Loss)
	Loss       float64 `json:"-"`            // mean cross-entropy (nats)
	N          int     `json:"n"`            // predicted positions
}

// Map returns the figures by their JSON names, with mlm_loss.
func (r MLMMetrics) Map() map[string]float64 {
	return map[string]float64{"mlm_accuracy": r.Accuracy, "mlm_top5": r.Top5, "perplexity": r.Perplexity, "mlm_loss": r.Loss, "n": float64(r.N)}
}

// EvaluateMLM runs m in eval mode over masked instances, batchSize at a time, and measures
// its predictions at their labelled positions (MLMStats).
func EvaluateMLM(m *bert.Model, insts []Instance, padID, batchSize int) (MLMMetrics, error) {
	if m.MLM == nil {
		return MLMMetrics{}, fmt.Errorf("evaluate: the model has no MLM head")
	}
	batchSize = max(1, batchSize)
	var s MLMStats
	for lo := 0; lo < len(insts); lo += batchSize {
		b, err := NewPretrainBatch(insts[lo:min(lo+batchSize, len(insts))], padID, 0)
		if err != nil {
			return MLMMetrics{}, err
		}
		var rows, labels []int
		for i, y := range b.MLMLabels {
			if y != bert.IgnoreIndex {
				rows, labels = append(rows, i), append(labels, y)
			}
		}
		if len(rows) == 0 {
			continue
		}
		out, err := m.Forward(b.Batch, bert.Options{MLM: true, MLMRows: rows})
		if err != nil {
			return MLMMetrics{}, err
		}
		if err := s.Add(out.MLMLogits.Data, m.Config.VocabSize, labels); err != nil {
			return MLMMetrics{}, err
		}
	}
	if s.N == 0 {
		return MLMMetrics{}, fmt.Errorf("evaluate: no masked position in %d examples", len(insts))
	}
	n := float64(s.N)
	r := MLMMetrics{Accuracy: float64(s.Top1) / n, Top5: float64(s.Top5) / n, Loss: s.NLL / n, N: s.N}
	r.Perplexity = math.Exp(r.Loss)
	return r, nil
}

// MLMEvalConfig are the settings of EvaluateMLMFile.
type MLMEvalConfig struct {
	SeqLen    int     // max_seq_length (cut to the model's positions)
	Seed      uint64  // seed of the instances and masks
	Batch     int     // sequences per forward pass
	MaskProb  float64 // share of the tokens predicted
	WholeWord bool    // mask whole words
}

// DefaultMLMEval are the settings of `bertlab eval --task mlm` without flags.
func DefaultMLMEval() MLMEvalConfig {
	return MLMEvalConfig{SeqLen: 128, Batch: 32, MaskProb: 0.15}
}

// EvaluateMLMFile measures m's masked LM on a pre-training text file (ReadDocumentsFile):
// instances of one segment (no sentence task), masked statically by the masking rule from
// c.Seed, as pre-training masks them, with no cap on the predictions (all positions count
// alike). It returns the figures and the number of sequences.
func EvaluateMLMFile(m *bert.Model, tok *tokenizer.Tokenizer, path string, c MLMEvalConfig) (MLMMetrics, int, error) {
	if m.MLM == nil {
		return MLMMetrics{}, 0, fmt.Errorf("evaluate: the model has no masked-LM head (cls.predictions)")
	}
	insts, padID, err := MLMEvalInstances(tok, path, c, m.Config.MaxPositionEmbeddings)
	if err != nil {
		return MLMMetrics{}, 0, err
	}
	r, err := EvaluateMLM(m, insts, padID, c.Batch)
	if err != nil {
		return MLMMetrics{}, 0, fmt.Errorf("%s: %w", path, err)
	}
	return r, len(insts), nil
}

// MLMEvalInstances are the masked instances EvaluateMLMFile scores on the file path for a
// model of maxPositions positions, and the padding id; TrigramModel.Evaluate scores the same.
func MLMEvalInstances(tok *tokenizer.Tokenizer, path string, c MLMEvalConfig, maxPositions int) ([]Instance, int, error) {
	S := min(c.SeqLen, maxPositions)
	docs, err := ReadDocumentsFile(path, tok)
	if err != nil {
		return nil, 0, err
	}
	dc := DefaultData(S, c.Seed)
	dc.Instances = InstanceConfig{MaxSeqLength: S, Task: NoSentenceTask}
	dc.Masking.Prob, dc.Masking.WholeWord = c.MaskProb, c.WholeWord
	dc.Masking.MaxPredictions = 0
	d, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return d.Fixed(), d.PadID, nil
}

// StartModel makes the model a pre-training run starts from, and its tokenizer: a random model
// of the preset (bert.Preset) sized for the vocabulary in the folder vocab, or the model folder
// dir with the heads it lacks initialised at random (hf.Folder.CompleteHeads), its
// vocabulary replaced by vocab's when vocab is not "". posType, when not "", is the random
// model's position_embedding_type. The notes say what was initialised.
func StartModel(dir, preset, vocab, posType string, seed uint64) (*bert.Model, *tokenizer.Tokenizer, []string, error) {
	var tok *tokenizer.Tokenizer
	var err error
	if vocab != "" {
		if tok, err = tokenizer.LoadDir(vocab); err != nil {
			return nil, nil, nil, err
		}
	}
	if preset != "" {
		if tok == nil {
			return nil, nil, nil, fmt.Errorf("preset %s: a random model needs a vocabulary", preset)
		}
		c, err := bert.Preset(preset)
		if err != nil {
			return nil, nil, nil, err
		}
		c.VocabSize, c.PadTokenID = tok.Vocab().Len(), tok.PadID()
		if posType != "" {
			c.PositionEmbeddingType = posType
		}
		m, err := bert.NewRandom(c, bert.AllHeads, seed)
		return m, tok, nil, err
	}
	f, err := hf.LoadFolder(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if fam := f.Model.Config.FamilyOf(); !fam.Is(bert.FamilyBERT) {
		return nil, nil, nil, fmt.Errorf("model folder %s holds a %s model: pre-train it with its family's recipe (StartFamilyModel; bertlab pretrain --family %s)", dir, fam, fam)
	}
	if tok == nil {
		if tok = f.Tokenizer; tok == nil {
			return nil, nil, nil, fmt.Errorf("model folder %s has no vocab.txt: pass --vocab DIR", dir)
		}
	}
	if tok.Vocab().Len() != f.Model.Config.VocabSize {
		return nil, nil, nil, fmt.Errorf("vocabulary of %d tokens for a model of vocab_size %d", tok.Vocab().Len(), f.Model.Config.VocabSize)
	}
	notes := len(f.Report.Notes)
	if err := f.CompleteHeads(seed); err != nil {
		return nil, nil, nil, err
	}
	return f.Model, tok, f.Report.Notes[notes:], nil
}
