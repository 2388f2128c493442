package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bertlab/bertlab/core/bert"
)

// FinetuneConfig are the settings of a fine-tuning run, named after HF Trainer's arguments.
type FinetuneConfig struct {
	Epochs      int     // num_train_epochs
	BatchSize   int     // sequences per optimizer step (per_device_train_batch_size)
	LR          float64 // peak learning rate (learning_rate)
	WarmupRatio float64 // fraction of the steps of linear warm-up from 0 (warmup_ratio), then linear decay to 0
	WeightDecay float64 // AdamW's decoupled weight decay (not on biases and LayerNorm)
	// MaxGradNorm clips the global gradient norm (max_grad_norm, 1.0); 0 or less does not clip.
	MaxGradNorm float64
	// Seed selects the order of the examples in each epoch and the dropout masks.
	Seed uint64
	// NoDropout trains in eval mode; otherwise dropout is on with the config's probabilities.
	NoDropout bool
	// EvalBatchSize is the batch of evaluations (0: BatchSize).
	EvalBatchSize int
	// KeepBest ends the run with the weights of the epoch whose dev evaluation scored best on the
	// data's main metric (load_best_model_at_end), rather than those of the last epoch.
	KeepBest bool
	// GroupByLength batches sequences of about the same length together (group_by_length), so
	// that a batch, padded to its longest, carries little padding: see groupByLength.
	GroupByLength bool
}

// DefaultFinetune is the BERT paper's fine-tuning recipe as HF's examples run it: 3 epochs of
// batch 32 at 5e-5 with 10% warm-up, weight decay 0.01, clipping at 1.0, the best epoch kept.
func DefaultFinetune() FinetuneConfig {
	return FinetuneConfig{Epochs: 3, BatchSize: 32, LR: 5e-5, WarmupRatio: 0.1, WeightDecay: 0.01, MaxGradNorm: 1, KeepBest: true}
}

func (c FinetuneConfig) validate() error {
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("finetune: %d epochs", c.Epochs)
	case c.BatchSize < 1:
		return fmt.Errorf("finetune: batch size %d", c.BatchSize)
	case !(c.LR >= 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("finetune: learning rate %g", c.LR)
	case !(c.WarmupRatio >= 0 && c.WarmupRatio <= 1):
		return fmt.Errorf("finetune: warm-up ratio %g outside [0, 1]", c.WarmupRatio)
	case !(c.WeightDecay >= 0):
		return fmt.Errorf("finetune: weight decay %g", c.WeightDecay)
	}
	return nil
}

// Finetuner trains a task model on a dataset one optimizer step at a time (Step: the page
// calls it between frames), evaluating on the dev set after each epoch (Evaluate), or runs
// the whole schedule (Run). It uses no goroutines of its own, so it runs in the browser as it
// runs natively. It is not safe for concurrent use.
type Finetuner struct {
	Model  *bert.TaskModel
	Train  TaskDataset
	Dev    TaskDataset // nil: no evaluation, and the last weights are kept
	Config FinetuneConfig

	Optimizer     *AdamW
	StepsPerEpoch int // ceil(training features / batch size): the last batch may be short
	TotalSteps    int
	WarmupSteps   int // ceil(WarmupRatio · TotalSteps), as HF's get_warmup_steps
	Steps         int // optimizer steps taken
	// Best is the dev evaluation that scored best on Dev.MainMetric() so far, of epoch BestEpoch
	// (from 1); nil before the first evaluation.
	Best      Metrics
	BestEpoch int
	// History holds the events of the run's steps and evaluations.
	History []Event

	grads     *bert.TaskGrads
	order     []int // the features in this epoch's order
	pos       int   // next index into order
	epochs    int   // epochs completed
	evaluated int   // epochs evaluated
	best      [][]float32
	started   time.Time
	tokens    int64
	positions int64 // tokens plus padding
}

// NewFinetuner prepares a run of m on train (and dev, which may be nil) with the optimizer
// over every parameter of m.
func NewFinetuner(m *bert.TaskModel, train, dev TaskDataset, c FinetuneConfig) (*Finetuner, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	if m.Bert.Packed() {
		return nil, errPacked
	}
	for _, d := range []TaskDataset{train, dev} {
		if d != nil && d.Task() != m.Task {
			return nil, fmt.Errorf("finetune: %s data for a %s model", d.Task(), m.Task)
		}
	}
	if train == nil || train.Len() == 0 {
		return nil, fmt.Errorf("finetune: no training examples")
	}
	adam := DefaultAdamW(c.LR)
	adam.WeightDecay = c.WeightDecay
	f := &Finetuner{Model: m, Train: train, Dev: dev, Config: c, Optimizer: NewAdamW(m.Params(), adam), grads: m.NewGrads()}
	f.StepsPerEpoch = (train.Len() + c.BatchSize - 1) / c.BatchSize
	f.TotalSteps = f.StepsPerEpoch * c.Epochs
	f.WarmupSteps = int(math.Ceil(c.WarmupRatio * float64(f.TotalSteps)))
	return f, nil
}

// LR is the learning rate of the next step: the peak rate times HF's linear schedule.
func (f *Finetuner) LR() float64 {
	return f.Config.LR * LinearSchedule(f.Steps, f.WarmupSteps, f.TotalSteps)
}

// Epoch is the progress in epochs, fractional (HF's logged "epoch").
func (f *Finetuner) Epoch() float64 {
	return float64(f.epochs) + float64(f.pos)/float64(f.Train.Len())
}

// NeedsEval reports whether an epoch has ended whose dev evaluation has not run yet.
func (f *Finetuner) NeedsEval() bool { return f.Dev != nil && f.evaluated < f.epochs }

// Done reports whether every step has been taken and every epoch evaluated.
func (f *Finetuner) Done() bool { return f.Steps >= f.TotalSteps && !f.NeedsEval() }

// Step takes one optimizer step on the next batch of the epoch (shuffled by the seed at the
// start of each epoch): forward and backward in training mode, gradient clipping, and an AdamW
// update at the scheduled learning rate. A cancelled ctx or an error leaves the model, the
// optimizer and the position as they were; a non-finite loss or gradient is ErrNonFinite.
func (f *Finetuner) Step(ctx context.Context) (Event, error) {
	if err := ctx.Err(); err != nil {
		return Event{}, err
	}
	if f.Steps >= f.TotalSteps {
		return Event{}, fmt.Errorf("finetune: all %d steps taken", f.TotalSteps)
	}
	if f.started.IsZero() {
		f.started = time.Now()
	}
	n := f.Train.Len()
	if f.pos == 0 {
		rng := rand.New(rand.NewPCG(f.Config.Seed, 0x6f72646572<<16|uint64(f.epochs)))
		f.order = rng.Perm(n)
		if f.Config.GroupByLength {
			groupByLength(f.order, f.Train.Length, f.Config.BatchSize, rng)
		}
	}
	idx := f.order[f.pos:min(f.pos+f.Config.BatchSize, n)]
	b, labels, tokens := f.Train.Batch(idx)
	f.grads.Zero()
	seed := rand.NewPCG(f.Config.Seed, 0x64726f70<<32|uint64(f.Steps)).Uint64()
	loss, _, err := f.Model.ForwardBackward(b, labels, bert.TrainOptions{Dropout: !f.Config.NoDropout, Seed: seed}, f.grads)
	if err != nil {
		return Event{}, fmt.Errorf("finetune step %d: %w", f.Steps+1, err)
	}
	gs := f.grads.Params()
	maxNorm := f.Config.MaxGradNorm
	if maxNorm <= 0 {
		maxNorm = math.Inf(1)
	}
	norm := GradNorm(gs)
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return Event{}, fmt.Errorf("finetune step %d: loss %g, gradient norm %g: %w", f.Steps+1, loss, norm, ErrNonFinite)
	}
	lr := f.LR()
	if err := f.Optimizer.ApplyScaled(gs, lr, ClipCoef(norm, maxNorm)); err != nil {
		return Event{}, err
	}
	f.Steps++
	f.tokens += int64(tokens)
	f.positions += int64(b.B * b.S)
	f.pos += len(idx)
	if f.pos >= n {
		f.pos = 0
		f.epochs++
	}
	ev := f.event(EventStep)
	ev.Loss, ev.LR, ev.GradNorm = loss, lr, norm
	f.History = append(f.History, ev)
	return ev, nil
}

// event is an event of the current state, with the run's throughput.
func (f *Finetuner) event(k EventKind) Event {
	ev := Event{Kind: k, Step: f.Steps, TotalSteps: f.TotalSteps, Epoch: f.Epoch(), Tokens: f.tokens, Positions: f.positions}
	if !f.started.IsZero() {
		ev.Elapsed = time.Since(f.started)
		if s := ev.Elapsed.Seconds(); s > 0 {
			ev.TokensPerSec = float64(f.tokens) / s
		}
	}
	return ev
}

// Evaluate scores the model on the dev set (eval mode) and returns the metrics as an EventEval.
// An evaluation at the end of an epoch that beats the best so far on the main metric becomes
// Best, and with KeepBest its weights are kept for Finish.
func (f *Finetuner) Evaluate(ctx context.Context) (Event, error) {
	if f.Dev == nil {
		return Event{}, errors.New("finetune: no dev set")
	}
	bs := f.Config.EvalBatchSize
	if bs <= 0 {
		bs = f.Config.BatchSize
	}
	m, err := f.Dev.Evaluate(ctx, f.Model, bs)
	if err != nil {
		return Event{}, err
	}
	ev := f.event(EventEval)
	ev.Metrics = m
	if f.evaluated < f.epochs {
		f.evaluated = f.epochs
		key := f.Dev.MainMetric()
		if f.Best == nil || m[key] > f.Best[key] {
			f.Best, f.BestEpoch = m, f.epochs
			if f.Config.KeepBest {
				f.snapshot()
			}
		}
	}
	f.History = append(f.History, ev)
	return ev, nil
}

// snapshot copies the model's weights.
func (f *Finetuner) snapshot() {
	ps := f.Model.Params()
	if f.best == nil {
		f.best = make([][]float32, len(ps))
	}
	for i, p := range ps {
		f.best[i] = append(f.best[i][:0], p.T.Data...)
	}
}

// Finish ends the run: with KeepBest, the model gets back the weights of the best epoch. It
// returns the metrics of the model it leaves (nil without a dev set).
func (f *Finetuner) Finish() Metrics {
	if f.Config.KeepBest && f.best != nil {
		for i, p := range f.Model.Params() {
			copy(p.T.Data, f.best[i])
		}
		return f.Best
	}
	if f.Dev == nil {
		return nil
	}
	for i := len(f.History) - 1; i >= 0; i-- {
		if f.History[i].Kind == EventEval {
			return f.History[i].Metrics
		}
	}
	return nil
}

// Run trains to the end of the schedule, evaluating after each epoch, then Finish-es and
// returns the metrics of the model it leaves. onEvent (which may be nil) gets every step and
// evaluation, and an EventDone whose Metrics are those returned. A cancelled ctx stops it
// between steps with ctx's error; the model is then as the last step left it.
func (f *Finetuner) Run(ctx context.Context, onEvent func(Event)) (Metrics, error) {
	emit := func(e Event) {
		if onEvent != nil {
			onEvent(e)
		}
	}
	for !f.Done() {
		var ev Event
		var err error
		if f.NeedsEval() {
			ev, err = f.Evaluate(ctx)
		} else {
			ev, err = f.Step(ctx)
		}
		if err != nil {
			return nil, err
		}
		emit(ev)
	}
	m := f.Finish()
	done := f.event(EventDone)
	done.Metrics = m
	emit(done)
	return m, nil
}

// groupByLength rearranges order, a shuffled order of the features, as HF's
// LengthGroupedSampler does (group_by_length): it cuts order into megabatches of 50 batches,
// sorts each by length, longest first, and cuts those into batches of batchSize, so that a
// batch holds sequences of about one length and little padding. Unlike HF it then shuffles the
// full batches with rng, so that an epoch does not run from long sequences to short ones; as HF
// it puts the batch of the longest feature first; a short last batch stays last, so that every
// batch but the last is full as without grouping.
// length(i) is feature i's token count.
func groupByLength(order []int, length func(i int) int, batchSize int, rng *rand.Rand) {
	mega := 50 * batchSize
	for lo := 0; lo < len(order); lo += mega {
		m := order[lo:min(lo+mega, len(order))]
		slices.SortStableFunc(m, func(a, b int) int { return length(b) - length(a) })
	}
	full := len(order) / batchSize
	batches := make([][]int, full)
	for i := range batches {
		batches[i] = slices.Clone(order[i*batchSize : (i+1)*batchSize])
	}
	rng.Shuffle(full, func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
	// The batch of the longest feature goes first, as HF puts it: a batch too big for the
	// memory fails at the first step, not in the middle of the run, and the step's buffers grow
	// to their size once.
	longest, at := -1, 0
	for i, b := range batches {
		for _, f := range b {
			if l := length(f); l > longest {
				longest, at = l, i
			}
		}
	}
	if full > 0 {
		batches[0], batches[at] = batches[at], batches[0]
	}
	for i, b := range batches {
		copy(order[i*batchSize:], b)
	}
}
