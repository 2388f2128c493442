package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/train"
)

// The training lab's defaults: a few epochs at a rate the loaded model learns at.
const (
	DefaultTask   = engine.TaskSentiment
	DefaultEpochs = 3
	DefaultBatch  = 16
	// DefaultLR is the fine-tuning learning rate of models wider than SmallHidden (BERT-Base
	// and up, as the BERT paper fine-tunes them); SmallModelLR that of the small ones, the
	// built-in bertlab-mini among them. On the web sample, 3 epochs of batch 16 from
	// bertlab-mini (8 x 256): part-of-speech test accuracy 35% at 1e-4, 64% at 5e-4, 76% at 1e-3
	// (seed 1; the 4-layer model before it: 35%, 63%, 74%).
	DefaultLR    = 1e-4
	SmallModelLR = 1e-3
	SmallHidden  = 256

	// Pre-training a tiny MLM from scratch (task "mlm"): a couple of minutes in the page.
	DefaultMLMSteps  = 200
	DefaultMLMLR     = 2e-3
	DefaultMLMHidden = 64
	// DefaultMLMTry is the "try it" sentence offered after a pre-training run.
	DefaultMLMTry = "she fell asleep before she could [MASK] the question."
)

// MLMSizes are the model sizes the lab pre-trains: 2 layers and 2 heads, and the hidden size.
var MLMSizes = []struct {
	Hidden int
	Title  string
}{
	{64, "2 layers · hidden 64 · 2 heads"},
	{128, "2 layers · hidden 128 · 2 heads"},
}

// States of a training-lab run (TrainLab.State, the view's data-state).
const (
	TrainIdle     = "idle"
	TrainRunning  = "running"
	TrainPaused   = "paused"
	TrainStopping = "stopping"
	TrainDone     = "done"
)

// TrainTasks are the tasks the lab offers, with their titles.
var TrainTasks = []struct{ ID, Title string }{
	{engine.TaskSentiment, "Sentiment (positive / negative)"},
	{engine.TaskPOS, "Part of speech (tag each word)"},
	{engine.TaskMLM, "Pre-train a tiny BERT (masked LM)"},
}

// TrainLab is the training lab's state: the settings (in the URL), the run the engine's worker
// does one step at a time at the page's request, and the "try it" answer.
type TrainLab struct {
	Task   string
	Epochs int
	LR     float64
	Batch  int
	// Ungrouped turns off grouping the fine-tuning batches by length (engine.FinetuneRequest's
	// GroupByLength, on by default: a step then computes little padding).
	Ungrouped bool
	// Pre-training (Task engine.TaskMLM): optimizer steps, the new model's hidden size, the
	// vocabulary (engine.VocabCorpus or VocabModel) and the corpus: the sample, or the
	// user's text when UseText.
	MLMSteps   int
	Hidden     int
	Vocab      string
	UseText    bool
	CorpusText string
	// modelHidden is the loaded model's hidden size (0 before one loads): it picks the
	// fine-tuning learning rate's default.
	modelHidden int
	// VocabOpen keeps the vocabulary list open across renders.
	VocabOpen bool

	State string
	Info  *engine.FinetuneInfo
	Steps []train.Event // every optimizer step, in order
	Evals []train.Event // the test-set evaluation after every epoch
	Final *train.Event  // the end of the run
	Err   string
	gen   int // bumped with every new event: the curves redraw when it changes
	run   int // bumped by every Start: answers for an older run are dropped
	loop  int // bumped whenever a stepping loop starts or must stop
	// Stepping is true while a step asked of the engine has not been answered (a paused run's
	// last step may still land).
	Stepping bool

	TryText string
	Pred    *engine.TaskPrediction
	tryReq  int
	// Downloaded counts the archives handed out (tests read it).
	Downloaded int
}

func (l *TrainLab) setSettings(r Route) {
	l.Task, l.Epochs, l.LR, l.Batch, l.Ungrouped = r.Task, r.Epochs, r.LR, r.Batch, r.Ungrouped
	l.MLMSteps, l.Hidden, l.Vocab = r.Steps, r.Hidden, r.MLMVocab
	if l.Task != engine.TaskSentiment && l.Task != engine.TaskPOS && l.Task != engine.TaskMLM {
		l.Task = DefaultTask
	}
	if l.Epochs <= 0 {
		l.Epochs = DefaultEpochs
	}
	if l.LR <= 0 {
		l.LR = l.defaultLR()
	}
	if l.MLMSteps <= 0 {
		l.MLMSteps = DefaultMLMSteps
	}
	l.MLMSteps = min(l.MLMSteps, lab.MLMMaxSteps)
	if l.Hidden != 64 && l.Hidden != 128 {
		l.Hidden = DefaultMLMHidden
	}
	if l.Vocab != engine.VocabModel {
		l.Vocab = engine.VocabCorpus
	}
	if l.Batch <= 0 {
		l.Batch = DefaultBatch
	}
	l.Epochs, l.Batch = min(l.Epochs, 50), min(l.Batch, 256)
	if l.State == "" {
		l.State = TrainIdle
	}
}

// IsMLM reports whether the lab pre-trains rather than fine-tunes.
func (l *TrainLab) IsMLM() bool { return l.Task == engine.TaskMLM }

func (l *TrainLab) defaultLR() float64 {
	switch {
	case l.IsMLM():
		return DefaultMLMLR
	case l.modelHidden > 0 && l.modelHidden <= SmallHidden:
		return SmallModelLR
	}
	return DefaultLR
}

// setModel records the loaded model's hidden size; a learning rate still at the default
// follows it.
func (l *TrainLab) setModel(hidden int) {
	def := l.LR == l.defaultLR()
	l.modelHidden = hidden
	if def && !l.Busy() {
		l.LR = l.defaultLR()
	}
}

// route writes the lab's pre-training settings into r (only for a pre-training task: the
// fine-tuning links stay as they were).
func (l *TrainLab) route(r *Route) {
	if !l.IsMLM() {
		return
	}
	r.Steps, r.Hidden = l.MLMSteps, l.Hidden
	if l.Vocab == engine.VocabModel {
		r.MLMVocab = l.Vocab
	}
}

// SteppingAttr is Stepping for the data-stepping attribute that tests wait on.
func (l *TrainLab) SteppingAttr() string {
	if l.Stepping {
		return "1"
	}
	return "0"
}

// Busy reports whether a run is under way (running, paused or stopping).
func (l *TrainLab) Busy() bool {
	return l.State == TrainRunning || l.State == TrainPaused || l.State == TrainStopping
}

// SetTrainTask, SetEpochs, SetLR and SetBatch take the settings from the form; a run under
// way keeps the settings it started with.
func (a *App) SetTrainTask(task string) {
	l := &a.Training
	// The learning rate follows the task while it is the default of the one before: a model
	// trained from scratch wants a larger one.
	if l.LR == l.defaultLR() {
		l.LR = 0
	}
	l.Task = task
	l.setSettings(a.route())
	a.writeRoute()
}

// SetMLMSteps, SetMLMHidden, SetMLMVocab, SetUseText and SetCorpusText take the
// pre-training settings from the form.
func (a *App) SetMLMSteps(s string) {
	fmt.Sscan(strings.TrimSpace(s), &a.Training.MLMSteps)
	a.Training.setSettings(a.route())
	a.writeRoute()
}

func (a *App) SetMLMHidden(s string) {
	fmt.Sscan(strings.TrimSpace(s), &a.Training.Hidden)
	a.Training.setSettings(a.route())
	a.writeRoute()
}

func (a *App) SetMLMVocab(v string) {
	a.Training.Vocab = v
	a.Training.setSettings(a.route())
	a.writeRoute()
}

func (a *App) SetUseText(on bool) { a.Training.UseText = on }

func (a *App) SetCorpusText(s string) { a.Training.CorpusText = s }

func (a *App) SetEpochs(s string) {
	fmt.Sscan(strings.TrimSpace(s), &a.Training.Epochs)
	a.Training.setSettings(a.route())
	a.writeRoute()
}

func (a *App) SetLR(s string) {
	var lr float64
	if _, err := fmt.Sscan(strings.TrimSpace(s), &lr); err == nil && lr > 0 && lr < 1 {
		a.Training.LR = lr
	}
	a.writeRoute()
}

// SetGrouped takes the "group by length" box.
func (a *App) SetGrouped(on bool) {
	a.Training.Ungrouped = !on
	a.writeRoute()
}

func (a *App) SetBatch(s string) {
	fmt.Sscan(strings.TrimSpace(s), &a.Training.Batch)
	a.Training.setSettings(a.route())
	a.writeRoute()
}

// TrainStart starts a new run with the form's settings; on a paused run it resumes.
func (a *App) TrainStart() {
	l := &a.Training
	if l.State == TrainPaused {
		l.State = TrainRunning
		a.trainLoop()
		return
	}
	if l.Busy() || !a.Loaded {
		return
	}
	l.run++
	run := l.run
	l.State, l.Info, l.Steps, l.Evals, l.Final, l.Err, l.Pred = TrainRunning, nil, nil, nil, nil, "", nil
	l.gen++
	req := engine.FinetuneRequest{Task: l.Task, Epochs: l.Epochs, LR: l.LR, BatchSize: l.Batch, Seed: 1, GroupByLength: !l.Ungrouped}
	if l.IsMLM() {
		req.Steps, req.Layers, req.Hidden, req.Heads, req.Vocab = l.MLMSteps, 2, l.Hidden, 2, l.Vocab
		if l.UseText {
			if strings.TrimSpace(l.CorpusText) == "" {
				l.State, l.Err = TrainIdle, "paste some text to train on, or choose the sample corpus"
				return
			}
			req.Text = l.CorpusText
		}
		if l.TryText == "" {
			l.TryText = DefaultMLMTry
		}
	}
	a.spawn(func() {
		info, err := a.Eng.TrainStart(req)
		a.Do(func() {
			if run != l.run {
				return
			}
			if err != nil {
				l.State, l.Err = TrainIdle, err.Error()
				return
			}
			l.Info = info
			l.gen++
			if l.State == TrainRunning {
				a.trainLoop()
			}
		})
	})
}

// trainLoop asks the engine for one step after another while the run is running. Called with
// the render lock held; the loop takes it only to store each answer, so the page handles
// clicks between steps, and the worker reads other requests between them.
func (a *App) trainLoop() {
	l := &a.Training
	l.loop++
	run, loop := l.run, l.loop
	going := func() (ok bool) {
		a.Do(func() { ok = l.run == run && l.loop == loop && l.State == TrainRunning && l.Info != nil })
		return ok
	}
	a.spawn(func() {
		for going() {
			a.Do(func() { l.Stepping = true })
			res, err := a.Eng.TrainStep()
			a.Do(func() {
				l.Stepping = false
				if l.run != run {
					return
				}
				if err != nil {
					l.State, l.Err = TrainDone, err.Error()
					return
				}
				l.add(res)
			})
		}
	})
}

func (l *TrainLab) add(res *TrainEvents) {
	for _, ev := range res.Events {
		switch ev.Kind {
		case train.EventStep:
			l.Steps = append(l.Steps, ev)
		case train.EventEval:
			l.Evals = append(l.Evals, ev)
		case train.EventDone:
			l.Final = &ev
		}
	}
	if res.Done {
		l.State = TrainDone
	}
	l.gen++
}

// TrainPause stops asking for steps; Train resumes.
func (a *App) TrainPause() {
	if a.Training.State == TrainRunning {
		a.Training.State = TrainPaused
		a.Training.loop++
	}
}

// TrainStop ends the run where it is: the model keeps its last weights.
func (a *App) TrainStop() {
	l := &a.Training
	if l.State != TrainRunning && l.State != TrainPaused {
		return
	}
	l.State = TrainStopping
	l.loop++
	run := l.run
	a.spawn(func() {
		res, err := a.Eng.TrainStop()
		a.Do(func() {
			if run != l.run {
				return
			}
			if err != nil {
				l.State, l.Err = TrainDone, err.Error()
				return
			}
			l.add(res)
			l.State = TrainDone
		})
	})
}

// CanTry reports whether the run has a model to try and download.
func (l *TrainLab) CanTry() bool {
	return l.Info != nil && (l.State == TrainDone || l.State == TrainPaused)
}

// TryTyped takes the "try it" box's value.
func (a *App) TryTyped(s string) { a.Training.TryText = s }

// Try runs the fine-tuned model on the "try it" text.
func (a *App) Try() {
	l := &a.Training
	if !l.CanTry() || strings.TrimSpace(l.TryText) == "" {
		return
	}
	l.tryReq++
	n, run, text := l.tryReq, l.run, l.TryText
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		p, err := a.Eng.TrainPredict(text)
		a.Do(func() {
			if n != l.tryReq || run != l.run {
				return
			}
			if err != nil {
				l.Err = err.Error()
				return
			}
			l.Pred = p
		})
	})
}

// Download hands the fine-tuned model to the user as a zip of its HF folder.
func (a *App) Download() {
	l := &a.Training
	if !l.CanTry() {
		return
	}
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		name, zip, err := a.Eng.TrainExport()
		a.Do(func() {
			if err != nil {
				l.Err = err.Error()
				return
			}
			if a.OnDownload != nil {
				a.OnDownload(name, zip)
			}
			l.Downloaded++
		})
	})
}

// LastLoss is the loss of the latest step (NaN before any).
func (l *TrainLab) LastLoss() float64 {
	if len(l.Steps) == 0 {
		return math.NaN()
	}
	return l.Steps[len(l.Steps)-1].Loss
}

// Progress describes the run in one line.
func (l *TrainLab) Progress() string {
	switch {
	case l.Info == nil && l.State == TrainRunning:
		return "preparing the data…"
	case l.Info == nil:
		return "Choose a task and press Train."
	}
	if n := len(l.Steps); n > 0 && l.IsMLM() && l.Info.MLM != nil {
		ev := l.Steps[n-1]
		s := fmt.Sprintf("step %d of %d · epoch %.2f · loss %.4f · lr %.2e · %.0f tokens/s", ev.Step, l.Info.TotalSteps, ev.Epoch, ev.Loss, ev.LR, ev.TokensPerSec)
		return s + l.stateSuffix()
	}
	s := fmt.Sprintf("step %d of %d", len(l.Steps), l.Info.TotalSteps)
	if n := len(l.Steps); n > 0 {
		ev := l.Steps[n-1]
		s += fmt.Sprintf(" · epoch %.2f · loss %.4f · lr %.2e · %.0f tokens/s", ev.Epoch, ev.Loss, ev.LR, ev.TokensPerSec)
		if ev.Positions > 0 {
			s += fmt.Sprintf(" · padding %.0f%%", 100*float64(ev.Positions-ev.Tokens)/float64(ev.Positions))
		}
	}
	return s + l.stateSuffix()
}

func (l *TrainLab) stateSuffix() string {
	switch l.State {
	case TrainPaused:
		return " · paused"
	case TrainStopping:
		return " · stopping"
	case TrainDone:
		return " · done"
	}
	return ""
}

// MetricName is the test-set metric the accuracy curve shows.
func (l *TrainLab) MetricName() string {
	if l.Info != nil && l.Info.MainMetric != "" {
		return l.Info.MainMetric
	}
	return "accuracy"
}
