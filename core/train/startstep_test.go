package train

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestStartStep carries a run on from its weights at step 10 of a 40-step schedule: the first
// step taken is step 11, the data position is where 10 steps of 4 examples leave it, and the
// learning rate ramps up over Rewarm steps to meet the schedule exactly.
func TestStartStep(t *testing.T) {
	c := DefaultPretrain(40)
	c.BatchSize, c.LR, c.Warmup, c.Seed = 4, 1e-3, 4, 1
	c.StartStep, c.Rewarm = 10, 3
	p := toyPretrainer(t, DefaultData(32, 1), c)
	n := p.Data.Len()
	want := Position{Epoch: 40 / n, Index: 40 % n}
	if p.State.Step != 10 || p.State.Position != want {
		t.Fatalf("state %+v, want step 10 at %+v", p.State, want)
	}
	sched := func(step int) float64 { return c.LR * LinearSchedule(step, c.Warmup, c.Steps) }
	for i, frac := range []float64{1.0 / 4, 2.0 / 4, 3.0 / 4, 1, 1} {
		step := 10 + i
		if got, want := p.LR(), sched(step)*frac; math.Abs(got-want) > 1e-15 {
			t.Errorf("step %d: learning rate %g, want %g", step, got, want)
		}
		ev, err := p.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Step != step+1 {
			t.Fatalf("event of step %d, want %d", ev.Step, step+1)
		}
	}
	for _, bad := range []PretrainConfig{{Steps: 10, BatchSize: 1, StartStep: 10}, {Steps: 10, BatchSize: 1, StartStep: -1}, {Steps: 10, BatchSize: 1, Rewarm: -1}} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestExtraEval: an evaluation carries ExtraEval's figures beside the masked-LM ones, and its
// error stops the evaluation with the step named.
func TestExtraEval(t *testing.T) {
	c := DefaultPretrain(10)
	c.BatchSize = 4
	p := toyPretrainer(t, DefaultData(32, 1), c)
	p.Eval = p.Data.Fixed()[:4]
	p.ExtraEval = func() (map[string]float64, error) { return map[string]float64{"cloze_x_top5": 0.25}, nil }
	ev, err := p.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	if ev.Metrics["cloze_x_top5"] != 0.25 || ev.Metrics["mlm_accuracy"] < 0 || len(ev.Metrics) < 3 {
		t.Errorf("metrics %v", ev.Metrics)
	}
	p.ExtraEval = func() (map[string]float64, error) { return nil, errors.New("boom") }
	if _, err := p.Evaluate(); err == nil || !strings.Contains(err.Error(), "step 0: boom") {
		t.Errorf("error %v", err)
	}
}
