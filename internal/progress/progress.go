// Package progress shows a training run's progress in the terminal: a bar (step, loss,
// tokens/s, ETA) on a terminal, plain lines every so many steps elsewhere (logs, pipes, tests).
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/bertlab/bertlab/core/train"
)

// Bar shows training progress: a bar (step, loss, tokens/s, ETA) on a terminal, plain
// lines every so many steps elsewhere (logs, pipes, tests).
type Bar struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	start int
	every int
}

// New returns the progress of a run from step start to total on w: a bar when w is a terminal,
// else a line every every steps (0: about 50 lines).
func New(w io.Writer, start, total, every int) *Bar {
	p := &Bar{w: w, start: start, every: every}
	if every <= 0 {
		p.every = max(1, (total-start)/50)
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total-start,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(24),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionSetDescription("starting"))
	}
	return p
}

// Step shows the step event e.
func (p *Bar) Step(e train.Event) {
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("step %d/%d loss %.4f lr %.2e %.0f tok/s", e.Step, e.TotalSteps, e.Loss, e.LR, e.TokensPerSec))
		p.bar.Add(1)
		return
	}
	if e.Step%p.every == 0 || e.Step == e.TotalSteps || e.Step == p.start+1 {
		eta := time.Duration(float64(e.Elapsed) / float64(e.Step-p.start) * float64(e.TotalSteps-e.Step))
		fmt.Fprintf(p.w, "%s ETA %s\n", e, eta.Round(time.Second))
	}
}

// Println prints a line above the bar.
func (p *Bar) Println(s string) {
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintln(p.w, s)
}

// Finish ends the bar.
func (p *Bar) Finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}

// Record shows a run's events on the bar and keeps its first and last step and its last
// evaluation, for the summary a command prints at the end.
type Record struct {
	Bar                   *Bar
	First, Last, LastEval *train.Event
	// EvalLine, if set, is the line an evaluation prints (default: the event's String).
	EvalLine func(train.Event) string
}

// Event is a run's callback: steps go to the bar, evaluations and checkpoints above it.
func (r *Record) Event(e train.Event) {
	switch e.Kind {
	case train.EventStep:
		if r.First == nil {
			r.First = &e
		}
		r.Last = &e
		r.Bar.Step(e)
	case train.EventEval:
		r.LastEval = &e
		if r.EvalLine != nil {
			r.Bar.Println(r.EvalLine(e))
		} else {
			r.Bar.Println(e.String())
		}
	case train.EventCheckpoint:
		r.Bar.Println("checkpoint " + e.Checkpoint)
	}
}
