package lab

import (
	"context"
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
)

// TestFamilyRace races two variants to the end of a small budget: the steps interleave (no
// variant gets ahead of another by more than one step's share of the budget), every variant
// ends on the budget as its plan counts it, its loss falls, and its held-out figures are those
// of a model that learned something.
func TestFamilyRace(t *testing.T) {
	for _, tc := range []struct {
		variants []string
		budget   string
		amount   float64
	}{
		{[]string{"bert", "roberta"}, engine.BudgetTokens, 3072},
		{[]string{"albert", "electra"}, engine.BudgetFLOPs, 0},
	} {
		t.Run(tc.variants[0]+"-"+tc.variants[1], func(t *testing.T) {
			r, err := NewFamilyRace(engine.FamilyRequest{Variants: tc.variants, Budget: tc.budget, Amount: tc.amount, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			info := r.Info()
			if tc.amount == 0 && tc.budget == engine.BudgetFLOPs {
				// A small FLOP budget keeps the test short; the default is the page's.
				info.Amount = FamilyDefaultFLOPs(info.VocabSize) / 5
				r2, err := NewFamilyRace(engine.FamilyRequest{Variants: tc.variants, Budget: tc.budget, Amount: info.Amount, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				r, info = r2, r2.Info()
			}
			losses := make([][]float64, len(tc.variants))
			evals := make([][]engine.FamilyEvent, len(tc.variants))
			for n := 0; !r.Done(); n++ {
				if n > 10000 {
					t.Fatal("the race does not end")
				}
				evs, err := r.Advance(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					if ev.Kind == "step" {
						losses[ev.Variant] = append(losses[ev.Variant], ev.Loss)
					} else {
						evals[ev.Variant] = append(evals[ev.Variant], ev)
					}
				}
				// Interleaved: the spent shares differ by at most one step's share of any variant.
				lo, hi, widest := math.Inf(1), math.Inf(-1), 0.0
				for i, run := range r.Runs {
					s := r.spent(i)
					lo, hi = min(lo, s), max(hi, s)
					st := run.Pre.State.Step
					if st < run.Steps() {
						widest = max(widest, r.share(run, st+1)-r.share(run, st))
					}
					widest = max(widest, r.share(run, max(st, 1))-r.share(run, max(st, 1)-1))
				}
				if hi-lo > widest+1e-9 {
					t.Fatalf("after %d pieces of work the variants spent %.3f to %.3f of their budget (a step is %.3f)", n, lo, hi, widest)
				}
			}
			for i, run := range r.Runs {
				vi := info.Variants[i]
				steps := run.Steps()
				spent, before := float64(run.Tokens[steps]), float64(run.Tokens[steps-1])
				if info.Budget == engine.BudgetFLOPs {
					spent, before = run.FLOPs[steps], run.FLOPs[steps-1]
				}
				if !(spent >= info.Amount && before < info.Amount) {
					t.Errorf("%s: %d steps spend %g, one fewer %g: not the fewest that reach %g", vi.Family, steps, spent, before, info.Amount)
				}
				if len(losses[i]) != steps || run.Pre.State.Tokens != vi.Tokens {
					t.Errorf("%s: %d steps logged of %d, %d tokens of %d", vi.Family, len(losses[i]), steps, run.Pre.State.Tokens, vi.Tokens)
				}
				if want := 2 + (steps-1)/vi.EvalEvery; len(evals[i]) < want-1 || len(evals[i]) > want {
					t.Errorf("%s: %d evaluations in %d steps every %d", vi.Family, len(evals[i]), steps, vi.EvalEvery)
				}
				k := min(3, steps/2)
				first, last := mean(losses[i][:k]), mean(losses[i][len(losses[i])-k:])
				lnV := math.Log(float64(info.VocabSize))
				t.Logf("%s: %d params, %.1f ms forward, %d steps, loss %.3f -> %.3f (ln V %.3f), held-out %+v", vi.Family, vi.Params, vi.ForwardMs, steps, first, last, lnV, evals[i][len(evals[i])-1])
				if !(last < first) || !(last < lnV) {
					t.Errorf("%s: the loss did not fall: %.3f -> %.3f", vi.Family, first, last)
				}
				if e := evals[i][len(evals[i])-1]; !(e.Perplexity > 1 && e.Perplexity < float64(info.VocabSize)) || e.Step != steps {
					t.Errorf("%s: last evaluation %+v", vi.Family, e)
				}
				if vi.Params <= 0 || vi.Bytes != 4*(vi.Params+vi.GeneratorParams) || !(vi.ForwardMs > 0) {
					t.Errorf("%s: %+v", vi.Family, vi)
				}
			}
		})
	}
}

// share is run's spent share of the budget after step.
func (r *FamilyRace) share(run *FamilyRun, step int) float64 {
	if r.info.Budget == engine.BudgetFLOPs {
		return run.FLOPs[step] / r.info.Amount
	}
	return float64(run.Tokens[step]) / r.info.Amount
}

func TestFamilyRaceBadRequests(t *testing.T) {
	for name, req := range map[string]engine.FamilyRequest{
		"one variant":  {Variants: []string{"bert"}},
		"twice":        {Variants: []string{"bert", "BERT"}},
		"unknown":      {Variants: []string{"bert", "gpt"}},
		"distilbert":   {Variants: []string{"bert", "distilbert"}},
		"budget kind":  {Variants: []string{"bert", "roberta"}, Budget: "steps"},
		"tiny budget":  {Variants: []string{"bert", "roberta"}, Amount: 1},
		"huge budget":  {Variants: []string{"bert", "roberta"}, Amount: 1e12},
		"scale":        {Variants: []string{"bert", "roberta"}, Scale: -1},
		"flops budget": {Variants: []string{"bert", "roberta"}, Budget: engine.BudgetFLOPs, Amount: math.Inf(1)},
	} {
		if _, err := NewFamilyRace(req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
