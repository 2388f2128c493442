package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/bertlab/bertlab/core/train"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// TrainView is the "Training lab": settings, Train / Pause / Stop, the live loss and test
// metric curves (canvas, redrawn only when a new event came), then "try it" and the download.
type TrainView struct {
	App *App
}

func (c *TrainView) epochsText() string { return strconv.Itoa(c.App.Training.Epochs) }
func (c *TrainView) lrText() string     { return strconv.FormatFloat(c.App.Training.LR, 'g', -1, 64) }
func (c *TrainView) batchText() string  { return strconv.Itoa(c.App.Training.Batch) }

func (c *TrainView) canTrain() bool {
	l := &c.App.Training
	return c.App.Loaded && (l.State == TrainIdle || l.State == TrainDone || l.State == TrainPaused)
}

func (c *TrainView) trainLabel() string {
	switch c.App.Training.State {
	case TrainPaused:
		return "▶ Resume"
	case TrainDone:
		return "▶ Train again"
	}
	return "▶ Train"
}

func (c *TrainView) metricCaption() string {
	l := &c.App.Training
	if l.IsMLM() {
		set := "held-out"
		if l.Info != nil && l.Info.MLM != nil && !l.Info.MLM.HeldOut {
			set = "fixed masked training set:"
		}
		return set + " masked-LM accuracy (top-1) during the run"
	}
	return "test-set " + l.MetricName() + " after each epoch"
}

func (c *TrainView) itoa(n int) string { return strconv.Itoa(n) }
func (c *TrainView) stepsText() string { return strconv.Itoa(c.App.Training.MLMSteps) }
func (c *TrainView) tryPlaceholder() string {
	if c.App.Training.IsMLM() {
		return "a sentence with [MASK] where a word should be predicted"
	}
	return "type a sentence"
}

func (c *TrainView) modelVocabTitle() string {
	if i := c.App.Info; i != nil && i.Config.VocabSize > 0 {
		return fmt.Sprintf("the loaded model's, %s tokens", groupDigits(int64(i.Config.VocabSize)))
	}
	return "the loaded model's"
}

// mlmInfo describes the model and data of a pre-training run in one line.
func (c *TrainView) mlmInfo() string {
	l := &c.App.Training
	m := l.Info.MLM
	corpus := "the sample corpus"
	if m.Corpus == "text" {
		corpus = "your text"
	}
	eval := fmt.Sprintf("%d held out", l.Info.Test)
	if !m.HeldOut {
		eval = "too few to hold any out: scored on the training sequences, masked once"
	}
	return fmt.Sprintf("A new BertForMaskedLM: %d layers, hidden %d, %d heads, intermediate %d, %s parameters, random weights. Data: %s, %d documents, %d lines, %s tokens, packed into %d sequences of up to %d tokens (%s); %d steps of %d sequences, %.1f epochs.",
		m.Layers, m.Hidden, m.Heads, m.Intermediate, groupDigits(m.Parameters), corpus, m.Documents, m.Sentences, groupDigits(int64(m.CorpusToken)),
		l.Info.Train, m.SeqLen, eval, l.Info.TotalSteps, l.Batch, float64(l.Info.TotalSteps)/float64(max(l.Info.StepsPerEpoch, 1)))
}

func (c *TrainView) vocabSummary() string {
	m := c.App.Training.Info.MLM
	if m.Vocab == "model" {
		return fmt.Sprintf("vocabulary: the loaded model's %s tokens", groupDigits(int64(m.VocabSize)))
	}
	return fmt.Sprintf("vocabulary: %s WordPiece tokens learned from the corpus (5 special tokens, the characters, then the merges in the order they were learned; \"##\" continues a word)", groupDigits(int64(m.VocabSize)))
}

// evalAxis and evalAt are the first column of the evaluation table: the epoch of a
// fine-tuning evaluation, the step of a pre-training one.
func (c *TrainView) evalAxis() string {
	if c.App.Training.IsMLM() {
		return "step"
	}
	return "epoch"
}

func (c *TrainView) evalAt(ev train.Event) string {
	if c.App.Training.IsMLM() {
		return strconv.Itoa(ev.Step)
	}
	return c.epochText(ev.Epoch)
}

func (c *TrainView) fillHead(pos int) string {
	return fmt.Sprintf("[MASK] at token %d", pos)
}

// metricKeys are the evaluation's figures, "n" left out, and entity F1 where the tags are
// not chunks (part of speech: every word is its own "entity", so the figure only repeats the
// token accuracy under a name that means nothing for the task).
func (c *TrainView) metricKeys() []string {
	return shownMetrics(c.App.Training.Evals, c.App.Training.MetricName())
}

// shownMetrics are the names of the figures of evals' first evaluation that the lab's table
// shows, sorted, for a task whose main metric is main.
func shownMetrics(evals []train.Event, main string) []string {
	var keys []string
	if len(evals) > 0 {
		for k := range evals[0].Metrics {
			if k == "n" || (k == "entity_f1" && main == "token_accuracy") {
				continue
			}
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func (c *TrainView) epochText(e float64) string { return strconv.FormatFloat(e, 'f', -1, 64) }

func (c *TrainView) metricText(m train.Metrics, k string) string { return fmt.Sprintf("%.4f", m[k]) }

func (c *TrainView) fullProb(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }
func (c *TrainView) probText(p float64) string { return fmt.Sprintf("%.1f%%", 100*p) }
func (c *TrainView) barStyle(p float64) string {
	return fmt.Sprintf("width: %.1f%%", 100*min(max(p, 0), 1))
}

func (c *TrainView) tagTitle(i int) string {
	p := c.App.Training.Pred
	return fmt.Sprintf("%s: %s with probability %.3f", p.Words[i], p.Tags[i], p.TagP[i])
}

// tryKey predicts on Enter.
func (c *TrainView) tryKey(e vugu.DOMEvent) {
	if e.PropString("key") == "Enter" {
		e.PreventDefault()
		c.App.TryTyped(e.PropString("target", "value"))
		c.App.Try()
	}
}

// Size of the curves, in CSS pixels, and their margins.
const (
	curveW, curveH             = 520, 220
	curveL, curveR, curveT, cB = 48, 12, 10, 28
)

// plot prepares a curve canvas in holder for key: sized for the device's pixels, cleared,
// with axes. It returns the context and false when the canvas already shows key.
func plot(holder js.Value, key string, xmax, ymin, ymax float64, xlabel string) (js.Value, bool) {
	canvas, drawn := canvasIn(holder, key)
	if drawn {
		return canvas, false
	}
	ctx := whiteCanvas(canvas, curveW, curveH)
	pw, ph := float64(curveW-curveL-curveR), float64(curveH-curveT-cB)
	ctx.Set("strokeStyle", "#e2e8f0")
	ctx.Set("lineWidth", 1)
	ctx.Set("font", `11px system-ui, sans-serif`)
	ctx.Set("fillStyle", "#64748b")
	ctx.Set("textAlign", "right")
	ctx.Set("textBaseline", "middle")
	for i := 0; i <= 4; i++ {
		y := curveT + ph*float64(i)/4
		ctx.Call("beginPath")
		ctx.Call("moveTo", curveL, y)
		ctx.Call("lineTo", curveL+pw, y)
		ctx.Call("stroke")
		ctx.Call("fillText", strconv.FormatFloat(ymax-(ymax-ymin)*float64(i)/4, 'g', 3, 64), curveL-6, y)
	}
	ctx.Set("textAlign", "center")
	ctx.Set("textBaseline", "top")
	step := tickStep(xmax, 6)
	for v := 0.0; v <= xmax+step*1e-9; v += step {
		ctx.Call("fillText", strconv.FormatFloat(v, 'f', -1, 64), curveL+pw*v/xmax, curveT+ph+4)
	}
	ctx.Call("fillText", xlabel, curveL+pw/2, curveT+ph+15)
	ctx.Set("strokeStyle", "#94a3b8")
	ctx.Call("strokeRect", curveL+0.5, curveT+0.5, pw, ph)
	return ctx, true
}

// tickStep is the step between the labels of a count axis (steps, epochs) from 0 to max: a
// whole 1, 2 or 5 times a power of ten, so that there are at most n steps.
func tickStep(max float64, n int) float64 {
	for p := 1.0; ; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if max/(m*p) <= float64(n) {
				return m * p
			}
		}
	}
}

// line draws ys against xs in the plot's coordinates.
func line(ctx js.Value, xs, ys []float64, xmax, ymin, ymax float64, color string, width float64) {
	pw, ph := float64(curveW-curveL-curveR), float64(curveH-curveT-cB)
	ctx.Set("strokeStyle", color)
	ctx.Set("lineWidth", width)
	ctx.Call("beginPath")
	for i := range xs {
		x := curveL + pw*xs[i]/xmax
		y := curveT + ph*(1-min(max((ys[i]-ymin)/(ymax-ymin), 0), 1))
		if i == 0 {
			ctx.Call("moveTo", x, y)
		} else {
			ctx.Call("lineTo", x, y)
		}
	}
	ctx.Call("stroke")
}

// drawLoss draws the loss of every step and its moving average, unless already drawn.
func (c *TrainView) drawLoss(holder js.Value) {
	l := &c.App.Training
	total := 1.0
	if l.Info != nil {
		total = float64(max(l.Info.TotalSteps, 1))
	}
	// The axis spans the losses seen (a loss that moves little still shows its trend).
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, ev := range l.Steps {
		if !math.IsNaN(ev.Loss) && !math.IsInf(ev.Loss, 0) {
			ymin, ymax = min(ymin, ev.Loss), max(ymax, ev.Loss)
		}
	}
	if ymin > ymax {
		ymin, ymax = 0, 1
	}
	pad := max((ymax-ymin)*0.1, 0.01)
	ymin, ymax = max(ymin-pad, 0), ymax+pad
	ctx, ok := plot(holder, fmt.Sprintf("loss/%d/%d", l.run, l.gen), total, ymin, ymax, "optimizer step")
	if !ok || len(l.Steps) == 0 {
		return
	}
	xs, ys, sm := make([]float64, len(l.Steps)), make([]float64, len(l.Steps)), make([]float64, len(l.Steps))
	vals := make([]any, len(l.Steps))
	ema := l.Steps[0].Loss
	for i, ev := range l.Steps {
		xs[i], ys[i] = float64(ev.Step), ev.Loss
		ema = 0.8*ema + 0.2*ev.Loss
		sm[i] = ema
		vals[i] = ev.Loss
	}
	line(ctx, xs, ys, total, ymin, ymax, "#93c5fd", 1)
	line(ctx, xs, sm, total, ymin, ymax, "#1d4ed8", 2)
	ctx.Get("canvas").Set("bertlabLosses", vals) // for tests
}

// drawMetric draws the test-set main metric after each epoch (of a pre-training run: at every
// evaluation, by step), on a 0 to 1 scale.
func (c *TrainView) drawMetric(holder js.Value) {
	l := &c.App.Training
	epochs := float64(max(l.Epochs, 1))
	if l.Info != nil && l.Info.StepsPerEpoch > 0 {
		epochs = math.Ceil(float64(l.Info.TotalSteps) / float64(l.Info.StepsPerEpoch))
	}
	xlabel := "epoch"
	if l.IsMLM() {
		epochs, xlabel = float64(max(l.MLMSteps, 1)), "optimizer step"
		if l.Info != nil {
			epochs = float64(max(l.Info.TotalSteps, 1))
		}
	}
	name := l.MetricName()
	// A model trained from scratch for minutes predicts a few tokens in a hundred: its scale
	// follows the values seen.
	ymax := 1.0
	if l.IsMLM() {
		ymax = 0.05
		for _, ev := range l.Evals {
			ymax = max(ymax, math.Ceil(ev.Metrics[name]*1.25*20)/20)
		}
		ymax = min(ymax, 1)
	}
	ctx, ok := plot(holder, fmt.Sprintf("metric/%d/%d", l.run, len(l.Evals)), epochs, 0, ymax, xlabel)
	if !ok || len(l.Evals) == 0 {
		return
	}
	xs, ys := []float64{}, []float64{}
	vals := make([]any, 0, len(l.Evals))
	for _, ev := range l.Evals {
		x := ev.Epoch
		if l.IsMLM() {
			x = float64(ev.Step)
		}
		xs, ys = append(xs, x), append(ys, ev.Metrics[name])
		vals = append(vals, ev.Metrics[name])
	}
	line(ctx, xs, ys, epochs, 0, ymax, "#059669", 2)
	pw, ph := float64(curveW-curveL-curveR), float64(curveH-curveT-cB)
	ctx.Set("fillStyle", "#059669")
	for i := range xs {
		ctx.Call("beginPath")
		ctx.Call("arc", curveL+pw*xs[i]/epochs, curveT+ph*(1-ys[i]/ymax), 3.5, 0, 2*math.Pi)
		ctx.Call("fill")
	}
	ctx.Get("canvas").Set("bertlabMetrics", vals)
}
