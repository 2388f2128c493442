package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/bertlab/bertlab/core/engine"
)

// FamilylabView is the "Family lab": the picks, Start / Stop / Reset, a row of figures per
// variant (parameters, bytes and forward speed measured in the worker, the run's counts and
// latest figures), a canvas chart per metric with a line per variant (live: solid; the
// recorded native run: dashed), and the lesson.
type FamilylabView struct {
	App *App
}

// Compute sets the lab's defaults and fetches the recorded run, once, before the first build.
func (c *FamilylabView) Compute(vugu.ComputeCtx) { c.App.openFamilyLab() }

func (c *FamilylabView) picked(id string) bool { return slices.Contains(c.App.Race.Picked, id) }

func (c *FamilylabView) choiceClass(id string) string {
	s := "famchoice"
	if c.picked(id) {
		s += " on"
	}
	if !Racing(id) {
		s += " off"
	}
	return s
}

func (c *FamilylabView) choiceTitle(id string) string {
	if !Racing(id) {
		return "cannot race from random weights here (see below)"
	}
	return "race this variant"
}

func (c *FamilylabView) swatch(color string) string { return "background:" + color }
func (c *FamilylabView) ftoa(x float64) string      { return strconv.FormatFloat(x, 'g', -1, 64) }
func (c *FamilylabView) raceEngineMissing() bool    { return c.App.raceEngine() == nil }

// stepsAttr lists every variant's logged steps ("12,11"): tests wait on it.
func (c *FamilylabView) stepsAttr() string {
	l := &c.App.Race
	s := make([]string, len(l.Steps))
	for i := range l.Steps {
		s[i] = strconv.Itoa(len(l.Steps[i]))
	}
	return strings.Join(s, ",")
}

func (c *FamilylabView) recordAttr() string {
	switch {
	case c.App.Race.Rec != nil:
		return strconv.Itoa(len(c.App.Race.Rec.Results))
	case c.App.Race.RecErr != "":
		return "error"
	}
	return ""
}

func (c *FamilylabView) progress() string {
	l := &c.App.Race
	switch {
	case l.Info == nil && l.State == RaceRunning:
		return "preparing: learning a vocabulary from the sample text, making the models, timing their forward passes…"
	case l.Info == nil:
		return "Pick two or more variants and press Start."
	}
	var parts []string
	for i, v := range l.Info.Variants {
		title, _ := choice(v.Family)
		parts = append(parts, fmt.Sprintf("%s %d/%d", title, l.StepsOf(i), v.Steps))
	}
	s := fmt.Sprintf("steps: %s · budget %s %s each", strings.Join(parts, " · "), famNum(l.Info.Amount), l.Info.Budget)
	switch l.State {
	case RaceStopping:
		s += " · stopping"
	case RaceDone:
		s += " · done"
	}
	return s
}

// famNum writes a count with a metric prefix (16.4k, 1.2G).
func famNum(x float64) string {
	for _, u := range []struct {
		v float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(x) >= u.v {
			return strconv.FormatFloat(x/u.v, 'g', 3, 64) + u.s
		}
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// raceRow is a variant's row of the table.
type raceRow struct {
	Family, Title, Color, Arch, Params, Bytes, Forward, Steps, Tokens, FLOPs, Loss, Acc, PPL string
	ParamsRaw, StepsRaw, ForwardRaw                                                          string
}

func (c *FamilylabView) rows() []raceRow {
	l := &c.App.Race
	if l.Info == nil {
		return nil
	}
	var out []raceRow
	for i, v := range l.Info.Variants {
		title, color := choice(v.Family)
		r := raceRow{Family: v.Family, Title: title, Color: color, Arch: v.Architecture, Params: groupDigits(v.Params),
			Bytes: famNum(float64(v.Bytes)) + "B", Forward: fmt.Sprintf("%.1f ms · %s tokens/s", v.ForwardMs, famNum(v.ForwardTokensPerSec)),
			Steps: fmt.Sprintf("%d / %d", l.StepsOf(i), v.Steps), ParamsRaw: strconv.FormatInt(v.Params, 10),
			StepsRaw: strconv.Itoa(l.StepsOf(i)), ForwardRaw: strconv.FormatFloat(v.ForwardMs, 'g', -1, 64), Loss: "–", Acc: "–", PPL: "–"}
		if v.GeneratorParams > 0 {
			r.Params += " + " + groupDigits(v.GeneratorParams) + " generator"
		}
		if v.Layers < v.Blocks {
			r.Params += fmt.Sprintf(" (%d layer shared by %d)", v.Layers, v.Blocks)
		}
		r.Tokens, r.FLOPs = "0", "0"
		if n := len(l.Steps[i]); n > 0 {
			ev := l.Steps[i][n-1]
			r.Tokens, r.FLOPs, r.Loss = groupDigits(ev.Tokens), famNum(ev.FLOPs), fmt.Sprintf("%.3f", ev.Loss)
		}
		if n := len(l.Evals[i]); n > 0 {
			ev := l.Evals[i][n-1]
			r.Acc, r.PPL = fmt.Sprintf("%.2f%%", 100*ev.Accuracy), fmt.Sprintf("%.1f", ev.Perplexity)
			if ev.RTDAccuracy > 0 {
				r.Acc += fmt.Sprintf(" (generator; discriminator %.1f%%)", 100*ev.RTDAccuracy)
			}
		}
		out = append(out, r)
	}
	return out
}

type recRow struct {
	Family, Title, Color, Params, Steps, Tokens, FLOPs, Seconds, Acc, PPL, Sentiment, POS string
}

func (c *FamilylabView) recRows() []recRow {
	var out []recRow
	for _, r := range c.App.Race.Rec.Results {
		title, color := choice(r.Family)
		row := recRow{Family: r.Family, Title: title, Color: color, Params: groupDigits(r.Params), Steps: strconv.Itoa(r.Steps),
			Tokens: groupDigits(r.Tokens), FLOPs: famNum(r.FLOPs), Seconds: fmt.Sprintf("%.1f", r.Seconds),
			Acc: fmt.Sprintf("%.2f%%", 100*r.Final.Accuracy), PPL: fmt.Sprintf("%.1f", r.Final.Perplexity)}
		switch {
		case r.ProbeSteps > 0 && r.Generator != nil:
			row.Acc += fmt.Sprintf(" (discriminator + MLM head; generator %.2f%%)", 100*r.Generator.Accuracy)
		case r.GeneratorParams > 0:
			row.Acc += " (generator)"
		}
		if r.GeneratorParams > 0 {
			row.Params += " + " + groupDigits(r.GeneratorParams) + " generator"
		}
		row.Sentiment, row.POS = "–", "–"
		for _, t := range r.Tasks {
			switch t.Name {
			case "sentiment":
				row.Sentiment = fmt.Sprintf("%.1f%%", 100*t.Value)
			case "pos":
				row.POS = fmt.Sprintf("%.1f%%", 100*t.Value)
			}
		}
		out = append(out, row)
	}
	return out
}

// recordNote names the recorded run's settings (whatever record file the site has).
func (c *FamilylabView) recordNote() string {
	l := &c.App.Race
	switch {
	case l.RecErr != "":
		return "No recorded native run to show (" + l.RecErr + ")."
	case l.Rec == nil:
		return "Loading the recorded native run…"
	}
	r := l.Rec
	cf := r.Config
	var names []string
	for _, res := range r.Results {
		t, _ := choice(res.Family)
		names = append(names, t)
	}
	vocab := cf.Vocab
	if i := strings.LastIndex(vocab, "/"); i >= 0 {
		vocab = vocab[i+1:]
	}
	return fmt.Sprintf("The recorded run (dashed), made natively by `bertlab family`: %s at %s size with %s's vocabulary (%s), %d-token sequences, %d a step, learning rate %g, the same %s %s each, scored on %d held-out sequences (%d masked words) of %s; seed %d.",
		strings.Join(names, ", "), cf.Preset, vocab, cf.Vocab, cf.SeqLen, cf.Batch, cf.LR, famNum(cf.Amount), cf.Budget,
		r.HeldoutSeqs, r.HeldoutN, cf.Heldout, cf.Seed)
}

// xKind is what the charts' x axis counts: the live race's budget, else the form's.
func (c *FamilylabView) xKind() string {
	if l := &c.App.Race; l.Info != nil {
		return l.Info.Budget
	}
	return c.App.Race.Budget
}

func (c *FamilylabView) recCaption(metric string) string {
	return "recorded: " + c.caption(metric)
}

func (c *FamilylabView) caption(metric string) string {
	x := "tokens"
	if c.xKind() == engine.BudgetFLOPs {
		x = "training FLOPs"
	}
	switch metric {
	case "loss":
		return "training masked-LM loss (smoothed) against " + x
	case "ppl":
		return "held-out masked-LM perplexity against " + x + " (lower is better)"
	}
	return "held-out masked-LM accuracy (top-1, %) against " + x
}

// series is one line of a chart.
type series struct {
	family string
	xs, ys []float64
	dashed bool
}

// chartSeries are the lines of metric: the live race's (solid), or the record's (dashed).
// They are drawn on charts of their own: the record's vocabulary and budget differ from the
// page's, so its losses and perplexities sit on another scale.
func (c *FamilylabView) chartSeries(metric string, recorded bool) []series {
	l := &c.App.Race
	flops := c.xKind() == engine.BudgetFLOPs
	var out []series
	if l.Info != nil && !recorded {
		for i, v := range l.Info.Variants {
			s := series{family: v.Family}
			if metric == "loss" {
				ema := math.NaN()
				for _, ev := range l.Steps[i] {
					if math.IsNaN(ema) {
						ema = ev.Loss
					}
					ema = 0.8*ema + 0.2*ev.Loss
					s.xs, s.ys = append(s.xs, pick(flops, ev.FLOPs, float64(ev.Tokens))), append(s.ys, ema)
				}
			} else {
				for _, ev := range l.Evals[i] {
					s.xs, s.ys = append(s.xs, pick(flops, ev.FLOPs, float64(ev.Tokens))), append(s.ys, metricOf(metric, ev.Accuracy, ev.Perplexity))
				}
			}
			out = append(out, s)
		}
	}
	if l.Rec != nil && recorded {
		for _, r := range l.Rec.Results {
			s := series{family: r.Family, dashed: true}
			pts := r.Evals
			if metric == "loss" {
				pts = r.Train
			}
			ema := math.NaN()
			for _, p := range pts {
				y := metricOf(metric, p.Accuracy, p.Perplexity)
				if metric == "loss" {
					if math.IsNaN(ema) {
						ema = p.Loss
					}
					ema = 0.8*ema + 0.2*p.Loss
					y = ema
				}
				s.xs, s.ys = append(s.xs, pick(flops, p.FLOPs, float64(p.Tokens))), append(s.ys, y)
			}
			out = append(out, s)
		}
	}
	return out
}

func pick(flops bool, f, t float64) float64 {
	if flops {
		return f
	}
	return t
}

// metricOf is the value a chart of metric draws: the perplexity, or the accuracy in percent.
func metricOf(metric string, acc, ppl float64) float64 {
	if metric == "ppl" {
		return ppl
	}
	return 100 * acc
}

// draw draws metric's chart of the live race, or of the recorded run, unless it already
// shows the current figures.
func (c *FamilylabView) draw(holder js.Value, metric string, recorded bool) {
	l := &c.App.Race
	ss := c.chartSeries(metric, recorded)
	xmax, ymin, ymax := 1.0, math.Inf(1), math.Inf(-1)
	if l.Info != nil && !recorded {
		xmax = l.Info.Amount
	}
	for _, s := range ss {
		for i := range s.xs {
			xmax = max(xmax, s.xs[i])
			if !math.IsNaN(s.ys[i]) && !math.IsInf(s.ys[i], 0) {
				ymin, ymax = min(ymin, s.ys[i]), max(ymax, s.ys[i])
			}
		}
	}
	if ymin > ymax {
		ymin, ymax = 0, 1
	}
	pad := max((ymax-ymin)*0.1, 1e-3)
	ymin, ymax = ymin-pad, ymax+pad
	if metric == "acc" {
		// A model trained for a minute may predict no held-out word yet: a 0 to 5% scale then.
		ymin, ymax = max(ymin, 0), max(ymax, 5)
	}
	canvas, drawn := canvasIn(holder, fmt.Sprintf("race/%s/%v/%d/%d/%s", metric, recorded, l.run, l.gen, c.xKind()))
	if drawn {
		return
	}
	ctx := famAxes(canvas, xmax, ymin, ymax)
	live := map[string]any{}
	nrec := 0
	for _, s := range ss {
		_, color := choice(s.family)
		if s.dashed {
			ctx.Call("setLineDash", []any{6, 4})
			nrec++
		} else {
			ctx.Call("setLineDash", []any{})
			vals := make([]any, len(s.ys))
			for i, y := range s.ys {
				vals[i] = y
			}
			live[s.family] = vals
		}
		width := 2.0
		if s.dashed {
			width = 1.5
		}
		line(ctx, s.xs, s.ys, xmax, ymin, ymax, color, width)
		if metric != "loss" && !s.dashed {
			pw, ph := float64(curveW-curveL-curveR), float64(curveH-curveT-cB)
			ctx.Set("fillStyle", color)
			for i := range s.xs {
				ctx.Call("beginPath")
				ctx.Call("arc", curveL+pw*s.xs[i]/xmax, curveT+ph*(1-min(max((s.ys[i]-ymin)/(ymax-ymin), 0), 1)), 3, 0, 2*math.Pi)
				ctx.Call("fill")
			}
		}
	}
	ctx.Call("setLineDash", []any{})
	canvas.Set("bertlabSeries", live) // the live values by family, for tests
	canvas.Set("bertlabRecorded", nrec)
}

// famAxes prepares a chart on canvas: white, gridlines, y labels, and x labels with metric
// prefixes (FLOPs run to 10¹²).
func famAxes(canvas js.Value, xmax, ymin, ymax float64) js.Value {
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
		ctx.Call("fillText", yTick(ymax-(ymax-ymin)*float64(i)/4, ymax-ymin), curveL-6, y)
	}
	ctx.Set("textAlign", "center")
	ctx.Set("textBaseline", "top")
	step := niceStep(xmax, 6)
	for v := 0.0; v <= xmax+step*1e-9; v += step {
		ctx.Call("fillText", famNum(v), curveL+pw*v/xmax, curveT+ph+4)
	}
	ctx.Set("strokeStyle", "#94a3b8")
	ctx.Call("strokeRect", curveL+0.5, curveT+0.5, pw, ph)
	return ctx
}

// yTick writes a y label to a precision that suits the axis's span, in at most 6 characters.
func yTick(v, span float64) string {
	switch {
	case math.Abs(v) >= 1e5:
		return famNum(v)
	case span >= 20:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case span >= 2:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// niceStep is tickStep for any scale: 1, 2 or 5 times a power of ten, at most n steps.
func niceStep(xmax float64, n int) float64 {
	if !(xmax > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(xmax/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if xmax/(m*p) <= float64(n) {
			return m * p
		}
	}
	return 10 * p
}
