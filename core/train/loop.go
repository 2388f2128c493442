package train

import (
	"context"

	"github.com/bertlab/bertlab/core/hf"
)

// Run trains until Config.Steps, calling onEvent (which may be nil) after every step,
// evaluation and checkpoint. It evaluates on p.Eval every Config.EvalEvery steps and at the end,
// and with Config.OutDir set writes a checkpoint every Config.SaveEvery steps and at the end,
// then the final model into OutDir itself (HF layout, what transformers and bertlab load).
//
// A cancelled ctx stops it between steps (or between the micro-batches of one, which is then
// dropped) with ctx's error; the state is that of the last complete step, so a caller can save
// it (SaveCheckpoint) and a later run resume from there. Any other error, ErrNonFinite among
// them, also stops it; the last checkpoint on disk is untouched.
func (p *Pretrainer) Run(ctx context.Context, onEvent func(Event)) error {
	emit := func(e Event) {
		if onEvent != nil {
			onEvent(e)
		}
	}
	c := p.Config
	saved := -1
	for p.State.Step < c.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := p.Step(ctx)
		if err != nil {
			return err
		}
		emit(ev)
		step := p.State.Step
		if p.Eval != nil && c.EvalEvery > 0 && step%c.EvalEvery == 0 && step < c.Steps {
			ev, err := p.Evaluate()
			if err != nil {
				return err
			}
			emit(ev)
		}
		if c.OutDir != "" && c.SaveEvery > 0 && step%c.SaveEvery == 0 {
			dir, err := p.SaveCheckpoint()
			if err != nil {
				return err
			}
			saved = step
			ev := p.event(EventCheckpoint)
			ev.Checkpoint = dir
			emit(ev)
		}
	}
	if p.Eval != nil {
		ev, err := p.Evaluate()
		if err != nil {
			return err
		}
		emit(ev)
	}
	done := p.event(EventDone)
	if c.OutDir != "" {
		if saved != p.State.Step {
			dir, err := p.SaveCheckpoint()
			if err != nil {
				return err
			}
			ev := p.event(EventCheckpoint)
			ev.Checkpoint = dir
			emit(ev)
		}
		if err := hf.SaveFolder(c.OutDir, p.Model, p.Tokenizer, hf.SaveOptions{}); err != nil {
			return err
		}
		if err := p.saveGenerator(c.OutDir); err != nil {
			return err
		}
		if err := p.writeTrainerState(c.OutDir); err != nil {
			return err
		}
		done.Checkpoint = c.OutDir
	}
	emit(done)
	return nil
}
