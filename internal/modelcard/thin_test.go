package modelcard

import (
	"testing"

	"github.com/bertlab/bertlab/core/train"
)

func TestThinEvals(t *testing.T) {
	evals := func(perStage ...int) []stageEvent {
		var out []stageEvent
		step := 0
		for s, n := range perStage {
			for range n {
				step += 500
				out = append(out, stageEvent{Event: train.Event{Kind: train.EventEval}, Stage: s, Step: step})
			}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		perStage []int
		n        int
		want     int // rows kept
	}{
		{"few: all", []int{10}, 40, 10},
		{"exactly n: all", []int{40}, 40, 40},
		{"80 + 3 (the shipped card)", []int{80, 3}, 40, 30}, // k = 3: indices 0, 3, … 81 (28) + 79 and 82, the stages' last
		{"160 + 80 + 3", []int{160, 80, 3}, 40, 38},         // k = 7: indices 0, 7, … 238 (35) + 159, 239, 242
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := evals(tc.perStage...)
			got := thinEvals(all, tc.n)
			if len(got) != tc.want {
				t.Errorf("%d rows, want %d", len(got), tc.want)
			}
			// In order, from the first, and each stage's last evaluation kept.
			if got[0].Step != all[0].Step {
				t.Errorf("first row at step %d, want the first evaluation's %d", got[0].Step, all[0].Step)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Step <= got[i-1].Step {
					t.Fatalf("row %d: step %d after %d", i, got[i].Step, got[i-1].Step)
				}
			}
			for i, e := range all {
				if i == len(all)-1 || all[i+1].Stage != e.Stage {
					found := false
					for _, g := range got {
						found = found || g.Step == e.Step
					}
					if !found {
						t.Errorf("stage %d's last evaluation (step %d) left out", e.Stage+1, e.Step)
					}
				}
			}
		})
	}
}
