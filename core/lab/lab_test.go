package lab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
)

// fixture is the random-weight Tiny BERT of the reference fixtures (32 positions, 2 layers,
// 4 heads, hidden 64, 2,000 tokens).
const fixture = "../bert/testdata/bert-tiny-random"

func loadFixture(t *testing.T) *hf.Folder {
	t.Helper()
	f, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStart: Labs.Start makes one type per kind of run, and the engine's lab questions go
// through it.
func TestStart(t *testing.T) {
	f := loadFixture(t)
	for _, tc := range []struct {
		req  engine.FinetuneRequest
		want string
	}{
		{engine.FinetuneRequest{Task: engine.TaskMLM, Steps: 2, LR: 1e-3, BatchSize: 4, Seed: 1}, "*lab.Pretrain"},
		{engine.FinetuneRequest{Task: engine.TaskSentiment, Epochs: 1, LR: 1e-3, BatchSize: 4, Seed: 1, MaxTrain: 8}, "*lab.Finetune"},
		{engine.FinetuneRequest{Task: engine.TaskPOS, Epochs: 1, LR: 1e-3, BatchSize: 4, Seed: 1, MaxTrain: 8}, "*lab.Finetune"},
	} {
		run, err := Labs{}.Start(f.Model, f.Tokenizer, tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.req.Task, err)
		}
		if got := fmt.Sprintf("%T", run); got != tc.want || run.Info().Task != tc.req.Task {
			t.Errorf("%s: a %s for task %q, want a %s", tc.req.Task, got, run.Info().Task, tc.want)
		}
	}
	if _, err := (Labs{}).Start(f.Model, f.Tokenizer, engine.FinetuneRequest{Task: "ner", Epochs: 1, LR: 1e-3, BatchSize: 4}); err == nil || !strings.Contains(err.Error(), "unknown task") {
		t.Errorf("an unknown task: %v", err)
	}
	e, err := engine.New("tiny", f.Model, f.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.TrainStart(engine.FinetuneRequest{Task: engine.TaskMLM, Steps: 1, LR: 1e-3, BatchSize: 4}); err != engine.ErrNoLabs {
		t.Errorf("TrainStart without labs: %v", err)
	}
	e.Labs = Labs{}
	info, err := e.TrainStart(engine.FinetuneRequest{Task: engine.TaskMLM, Steps: 1, LR: 1e-3, BatchSize: 4})
	if err != nil || info.TotalSteps != 1 {
		t.Fatalf("TrainStart with labs: %+v, %v", info, err)
	}
	for i := 0; i < 10; i++ {
		evs, err := e.TrainStep(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if evs.Done {
			return
		}
	}
	t.Error("a one-step run did not end in 10 advances")
}
