package familylab

import (
	"math"
	"reflect"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/train"
)

// TestPageLabAccounting checks that the page's family lab (core/lab's FamilyRace) counts a
// budget as this runner does: each variant's data settings are runVariant's, and its plan of
// tokens and FLOPs per step is plan's on the same data.
func TestPageLabAccounting(t *testing.T) {
	for _, budget := range []string{ByTokens, ByFLOPs} {
		amount := 4096.0
		if budget == ByFLOPs {
			amount = 1.5e10
		}
		r, err := lab.NewFamilyRace(engine.FamilyRequest{Variants: []string{"bert", "roberta", "albert", "electra"}, Budget: budget, Amount: amount, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		c := Config{SeqLen: lab.FamilySeqLen, Batch: lab.FamilyBatch, MaskProb: lab.FamilyMaskProb, Budget: budget, Amount: amount, Seed: 3}
		for _, run := range r.Runs {
			// runVariant's data settings.
			want := train.DefaultData(c.SeqLen, c.Seed)
			want.Masking.Prob = c.MaskProb
			want.Masking.MaxPredictions = max(1, int(math.Ceil(c.MaskProb*float64(c.SeqLen))))
			if err := train.ApplyRecipe(run.Family, &want); err != nil {
				t.Fatal(err)
			}
			if got, err := lab.FamilyDataConfig(run.Family, c.Seed); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the page's data settings %+v (%v), the runner's %+v", run.Family, got, err, want)
			}
			steps, tokens, flops, err := plan(c, run.Config, nil, run.Data) // the page races no DistilBERT: no teacher
			if err != nil {
				t.Fatal(err)
			}
			if steps != run.Steps() || !reflect.DeepEqual(tokens, run.Tokens) || !reflect.DeepEqual(flops, run.FLOPs) {
				t.Errorf("%s, %s budget: the page plans %d steps (%v tokens, %v FLOPs), the runner %d (%v, %v)",
					run.Family, budget, run.Steps(), run.Tokens, run.FLOPs, steps, tokens, flops)
			}
		}
	}
}
