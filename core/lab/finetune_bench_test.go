package lab

import (
	"context"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
)

// builtin is the built-in model's folder, as `make run` serves it.
const builtin = "../../assets/models/bertlab-mini"

// BenchmarkFinetuneStep times one step of the page's Training lab as the browser test runs it:
// part of speech on the web sample, the built-in model, batch 16 grouped by length (in the wasm builds too: what
// the page's worker does for each step).
func BenchmarkFinetuneStep(b *testing.B) {
	f, err := hf.LoadFolder(builtin)
	if err != nil {
		b.Fatal(err)
	}
	ft, err := NewFinetune(f.Model, f.Tokenizer, engine.FinetuneRequest{Task: engine.TaskPOS, Epochs: 50, LR: 1e-3, BatchSize: 16, Seed: 1, GroupByLength: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tokens := 0
	for b.Loop() {
		if ft.Tuner.NeedsEval() {
			b.StopTimer()
			if _, err := ft.Tuner.Evaluate(ctx); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		ev, err := ft.Tuner.Step(ctx)
		if err != nil {
			b.Fatal(err)
		}
		tokens = int(ev.Tokens)
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}
