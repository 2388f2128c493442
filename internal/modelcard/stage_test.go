package modelcard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/train"
)

func TestRecipeFlags(t *testing.T) {
	recipe := "go run ./cmd/corpus-build -data x -out build/corpus\n" +
		"bin/bertlab pretrain --out build/run/mlm --steps 120000 --lr 7e-4 --warmup 3000 --no-nsp --data a.txt --data b.txt --whole-word --mask-prob 0.2 --seed=1\n" +
		"bin/bertlab pretrain --model build/run/mlm --out build/run/final --steps 1500 --lr 1e-4\n"
	for _, tc := range []struct {
		dir  string
		want map[string]string // nil: no line
	}{
		{"build/run/mlm", map[string]string{"lr": "7e-4", "warmup": "3000", "no-nsp": "true", "data": "b.txt", "whole-word": "true", "mask-prob": "0.2", "seed": "1", "steps": "120000"}},
		{"build/run/final/", map[string]string{"lr": "1e-4", "model": "build/run/mlm", "whole-word": ""}},
		{"build/other", nil},
	} {
		got := recipeFlags(recipe, tc.dir)
		if tc.want == nil {
			if got != nil {
				t.Errorf("%s: flags %v, want none", tc.dir, got)
			}
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: --%s = %q, want %q", tc.dir, k, got[k], v)
			}
		}
	}
}

func TestObjective(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   stage
		want []string
	}{
		{"defaults", stage{Meta: map[string]string{"dynamic_masking": "true"}}, []string{"masked LM (15% of the tokens", "new masks every epoch"}},
		{"from the metadata", stage{Meta: map[string]string{"mask_prob": "0.2", "whole_word": "true", "sentence_task": "none"}, Flags: map[string]string{"mask-prob": "0.4"}},
			[]string{"whole-word masking (20% of the tokens", "no next-sentence prediction"}},
		{"from the recipe", stage{Meta: map[string]string{"sentence_task": "next-sentence"}, Flags: map[string]string{"mask-prob": "0.3", "whole-word": "true"}},
			[]string{"whole-word masking (30% of the tokens", "next-sentence prediction"}},
	} {
		got := objective(tc.st)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
	}
}

// TestStageTableLateHistory checks a stage carried on from saved weights at step 1,000 of
// 3,000: the tokens are estimated over all 3,000 steps from those of the steps it holds, and
// the learning rate comes from the settings, not from the history's peak (which is the re-warm's).
func TestStageTableLateHistory(t *testing.T) {
	var h []train.Event
	for s := 1001; s <= 3000; s++ {
		h = append(h, train.Event{Kind: train.EventStep, Step: s, Tokens: int64(s-1000) * 500, TokensPerSec: 1000, LR: 1e-6 * float64(s)})
	}
	st := stage{State: train.TrainerState{GlobalStep: 3000, MaxSteps: 3000, Epoch: 1.5, BatchSize: 8, LogHistory: h},
		Meta: map[string]string{"peak_lr": "0.0007", "warmup_steps": "300"}}
	var b strings.Builder
	tokens, secs := stageTable(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, st)
	if tokens != 1_500_000 || secs != 1500 {
		t.Errorf("tokens %d, seconds %g; want 1,500,000 (500 a step x 3,000) and 1,500", tokens, secs)
	}
	for _, w := range []string{"about 1,500,000", "500 a step over steps 1,001-3,000", "peak learning rate 0.0007 after 300 warm-up steps"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
	// The whole history: tokens and the peak as before.
	st.State.LogHistory = []train.Event{{Kind: train.EventStep, Step: 1, Tokens: 500, LR: 1e-4}, {Kind: train.EventStep, Step: 2, Tokens: 1000, LR: 2e-4}}
	st.State.GlobalStep = 2
	b.Reset()
	if tokens, _ := stageTable(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, st); tokens != 1000 || !strings.Contains(b.String(), "peak learning rate 0.0002 reached at step 2") {
		t.Errorf("whole history: tokens %d, table:\n%s", tokens, b.String())
	}
}
