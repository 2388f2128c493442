package modelcard

import (
	"math"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/train"
)

func TestReadEarlierEvals(t *testing.T) {
	good := "# the run's evaluations\nstep\tmlm_accuracy\tmlm_loss\tcloze_facts_top5\n2000\t0.1943\t5.585\t0.05\n4000\t0.2559\t\t0.05\n"
	evals, err := ReadEarlierEvals(strings.NewReader(good), "e.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(evals) != 2 || evals[0].Step != 2000 || evals[0].Kind != train.EventEval || evals[0].Metrics["mlm_accuracy"] != 0.1943 ||
		math.Abs(evals[0].Metrics["perplexity"]-math.Exp(5.585)) > 1e-9 {
		t.Fatalf("got %+v", evals)
	}
	if _, ok := evals[1].Metrics["mlm_loss"]; ok {
		t.Error("an empty cell became a figure")
	}
	for _, tc := range []struct{ in, want string }{
		{"", "no header"},
		{"epoch\tx\n", "the header must be step"},
		{"step\tmlm_accuracy\n1\t0.1\t0.2\n", "e.tsv:2: 3 columns"},
		{"step\tmlm_accuracy\nten\t0.1\n", "e.tsv:2: step \"ten\""},
		{"step\tmlm_accuracy\n5\t0.1\n5\t0.2\n", "e.tsv:3: step 5 does not come after step 5"},
		{"step\tmlm_accuracy\n5\t45\n", "not a fraction"},
		{"step\tmlm_loss\n5\tNaN\n", "not a fraction"},
		{"step\t\n", "an empty metric name"},
	} {
		_, err := ReadEarlierEvals(strings.NewReader(tc.in), "e.tsv")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one with %q", tc.in, err, tc.want)
		}
	}
}

func TestPrependEarlier(t *testing.T) {
	s := stage{State: train.TrainerState{LogHistory: []train.Event{{Kind: train.EventStep, Step: 101}, {Kind: train.EventEval, Step: 102}}}}
	n := prependEarlier(&s, []train.Event{{Kind: train.EventEval, Step: 50}, {Kind: train.EventEval, Step: 100}, {Kind: train.EventEval, Step: 102}})
	if n != 2 || len(s.State.LogHistory) != 4 || s.State.LogHistory[0].Step != 50 || s.State.LogHistory[2].Step != 101 {
		t.Errorf("kept %d: %+v", n, s.State.LogHistory)
	}
}

// FuzzReadEarlierEvals: any input gives evaluations or an error, never a panic, and what it
// accepts has increasing steps and finite figures.
func FuzzReadEarlierEvals(f *testing.F) {
	f.Add("step\tmlm_accuracy\tmlm_loss\n2000\t0.19\t5.5\n4000\t\t4.9\n")
	f.Add("# c\nstep\tcloze_everyday_top5\n1\t1\n")
	f.Add("step\n")
	f.Fuzz(func(t *testing.T, in string) {
		evals, err := ReadEarlierEvals(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		for i, e := range evals {
			if i > 0 && e.Step <= evals[i-1].Step {
				t.Fatalf("steps out of order: %d after %d", e.Step, evals[i-1].Step)
			}
			for k, v := range e.Metrics {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s = %g", k, v)
				}
			}
		}
	})
}
