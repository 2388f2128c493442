package ui

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/train"
)

// The training lab's engine functions, natively, as wasm/engine answers them.

func (e *nativeEngine) TrainStart(req engine.FinetuneRequest) (*engine.FinetuneInfo, error) {
	return e.e.TrainStart(req)
}

func (e *nativeEngine) TrainStep() (*TrainEvents, error) {
	return e.e.TrainStep(context.Background())
}

func (e *nativeEngine) TrainStop() (*TrainEvents, error) { return e.e.TrainStop() }

func (e *nativeEngine) TrainPredict(text string) (*engine.TaskPrediction, error) {
	return e.e.TrainPredict(text)
}

func (e *nativeEngine) TrainExport() (string, []byte, error) { return e.e.TrainExport() }

func TestTrainRouteRoundTrip(t *testing.T) {
	r := Route{View: ViewTrain, Text: "a b", Task: engine.TaskPOS, Epochs: 4, LR: 3e-5, Batch: 8}
	got, ok := ParseRoute(r.Hash())
	if !ok || got.View != ViewTrain || got.Task != r.Task || got.Epochs != 4 || got.LR != 3e-5 || got.Batch != 8 || got.Text != "a b" {
		t.Errorf("%+v -> %q -> %+v", r, r.Hash(), got)
	}
	if got, _ := ParseRoute("#train?lr=7&epochs=-2&bs=x"); got.LR != 0 || got.Epochs != 0 || got.Batch != 0 {
		t.Errorf("bad settings kept: %+v", got)
	}
	// Batches grouped by length are the default; "&group=0" turns it off and round-trips.
	r.Ungrouped = true
	if got, _ := ParseRoute(r.Hash()); !got.Ungrouped || !strings.Contains(r.Hash(), "&group=0") {
		t.Errorf("%+v -> %q -> %+v", r, r.Hash(), got)
	}
	if got, _ := ParseRoute("#train?text=a&task=pos&group=1"); got.Ungrouped {
		t.Errorf("group=1 read as ungrouped: %+v", got)
	}
}

// TestTrainLab runs the training lab without a browser: the route carries the settings, a
// run goes to its end (inline: no event loop here), then "try it" and the download.
func TestTrainLab(t *testing.T) {
	eng := newNativeEngine(t)
	var hash string
	a := &App{Eng: eng, OnRoute: func(h string) { hash = h }}
	a.Start(ParseRoute("#train?text=x&task=pos&epochs=1&lr=0.001&bs=128"))
	if a.View != ViewTrain || a.Training.Task != engine.TaskPOS || a.Training.Epochs != 1 || a.Training.LR != 1e-3 || a.Training.Batch != 128 {
		t.Fatalf("route: view %q, %+v", a.View, a.Training)
	}
	if !strings.Contains(hash, "task=pos&epochs=1&lr=0.001&bs=128") {
		t.Errorf("hash %q", hash)
	}
	a.SetTrainTask(engine.TaskSentiment)
	a.SetBatch("100")
	if !strings.HasSuffix(hash, "#train?text=x&task=sentiment&epochs=1&lr=0.001&bs=100") {
		t.Errorf("hash after the form: %q", hash)
	}
	a.SetGrouped(false)
	if !strings.HasSuffix(hash, "&bs=100&group=0") || !a.Training.Ungrouped {
		t.Errorf("hash after unticking group by length: %q", hash)
	}
	a.SetGrouped(true)
	a.TrainStart()
	l := &a.Training
	if l.Err != "" || l.State != TrainDone || l.Info == nil {
		t.Fatalf("run: state %s, err %q", l.State, l.Err)
	}
	if len(l.Steps) != l.Info.TotalSteps || l.Info.TotalSteps != 3 || len(l.Evals) != 1 || l.Final == nil {
		t.Fatalf("%d steps of %d, %d evaluations, final %v", len(l.Steps), l.Info.TotalSteps, len(l.Evals), l.Final)
	}
	for _, ev := range l.Steps {
		if math.IsNaN(ev.Loss) || ev.Loss <= 0 {
			t.Errorf("step %d loss %v", ev.Step, ev.Loss)
		}
	}
	// Grouped by length (the default): the progress line names the padding's share.
	if last := l.Steps[len(l.Steps)-1]; last.Positions <= 0 || last.Positions < last.Tokens || !strings.Contains(l.Progress(), " · padding ") {
		t.Errorf("last step: %d positions for %d tokens; progress %q, want its padding share", last.Positions, last.Tokens, l.Progress())
	}
	a.TryTyped("a wonderful film")
	a.Try()
	if l.Pred == nil || len(l.Pred.Probs) != 2 {
		t.Fatalf("try it: %+v (err %q)", l.Pred, l.Err)
	}
	var got []byte
	a.OnDownload = func(name string, b []byte) { got = b }
	a.Download()
	if len(got) == 0 || l.Downloaded != 1 {
		t.Fatalf("download: %d bytes", len(got))
	}

	var buf bytes.Buffer
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, want := range []string{`data-view="train"`, `data-state="done"`, `data-role="loss-curve"`, `data-label="positive"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("static render lacks %s", want)
		}
	}
}

// TestPretrainLabNative pre-trains a tiny MLM from the route's settings without a browser:
// the route carries steps, size and vocabulary, the run ends, "try it" fills the mask and the
// download is the BertForMaskedLM folder.
func TestPretrainLabNative(t *testing.T) {
	r := Route{View: ViewTrain, Text: "x", Task: engine.TaskMLM, LR: 5e-3, Batch: 8, Steps: 12, Hidden: 128, MLMVocab: engine.VocabModel}
	if got, _ := ParseRoute(r.Hash()); got.Steps != 12 || got.Hidden != 128 || got.MLMVocab != engine.VocabModel || got.Task != engine.TaskMLM {
		t.Errorf("%q -> %+v", r.Hash(), got)
	}

	eng := newNativeEngine(t)
	var hash string
	a := &App{Eng: eng, OnRoute: func(h string) { hash = h }}
	a.Start(ParseRoute("#train?text=x&task=sentiment"))
	l := &a.Training
	if l.LR != SmallModelLR {
		t.Fatalf("fine-tuning's learning rate %v for the Tiny model, want %v", l.LR, SmallModelLR)
	}
	a.SetTrainTask(engine.TaskMLM)
	if l.LR != DefaultMLMLR || l.MLMSteps != DefaultMLMSteps || l.Hidden != DefaultMLMHidden || l.Vocab != engine.VocabCorpus {
		t.Errorf("pre-training defaults: %+v", l)
	}
	a.SetMLMSteps("12")
	a.SetBatch("8")
	a.SetMLMHidden("128")
	if !strings.HasSuffix(hash, "task=mlm&epochs=3&lr=0.002&bs=8&steps=12&hidden=128") {
		t.Errorf("hash %q", hash)
	}
	a.SetUseText(true)
	a.TrainStart()
	if l.State != TrainIdle || !strings.Contains(l.Err, "paste some text") {
		t.Errorf("no text to train on: state %s, error %q", l.State, l.Err)
	}
	a.SetUseText(false)
	a.TrainStart()
	if l.Err != "" || l.State != TrainDone || l.Info == nil || l.Info.MLM == nil {
		t.Fatalf("run: state %s, err %q", l.State, l.Err)
	}
	if len(l.Steps) != 12 || len(l.Evals) != 13 || l.Final == nil || l.Info.MLM.Hidden != 128 || l.Info.MLM.VocabSize != len(l.Info.MLM.Tokens) || l.Info.MLM.VocabSize > lab.MLMDefaultVocab {
		t.Fatalf("%d steps, %d evaluations, final %v, info %+v", len(l.Steps), len(l.Evals), l.Final, l.Info.MLM)
	}
	if l.TryText != DefaultMLMTry {
		t.Errorf("try text %q", l.TryText)
	}
	a.Try()
	if l.Pred == nil || l.Pred.Fill == nil || len(l.Pred.Fill.Masks) != 1 || len(l.Pred.Fill.Masks[0].Predictions) != 5 {
		t.Fatalf("try it: %+v (err %q)", l.Pred, l.Err)
	}
	var name string
	a.OnDownload = func(n string, b []byte) { name = n }
	a.Download()
	if name != "bertlab-mlm.zip" {
		t.Errorf("download %q", name)
	}

	var buf bytes.Buffer
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, want := range []string{`data-role="steps"`, `data-role="mlm-info"`, `data-role="mlm-vocabulary"`, `data-role="fill"`, `<th>step</th>`, `hidden 128`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("static render lacks %s", want)
		}
	}
	if strings.Contains(buf.String(), `data-role="epochs"`) {
		t.Error("pre-training shows the epochs field")
	}
}

func TestTickStep(t *testing.T) {
	for _, tc := range []struct {
		max  float64
		n    int
		want float64
	}{
		{1, 5, 1},
		{3, 5, 1},
		{5, 5, 1},
		{6, 5, 2},
		{10, 5, 2},
		{11, 5, 5},
		{57, 5, 20},
		{60, 5, 20},
		{100, 5, 20},
		{101, 5, 50},
		{9600, 5, 2000},
		{0, 5, 1},
		{57, 6, 10}, // the loss axis of a 57-step run: 0, 10, ..., 50
		{3, 6, 1},   // three epochs: 0, 1, 2, 3
	} {
		if got := tickStep(tc.max, tc.n); got != tc.want {
			t.Errorf("tickStep(%g, %d) = %g, want %g", tc.max, tc.n, got, tc.want)
		}
	}
}

// TestFineTuneLRFollowsModel: the fine-tuning learning rate's default follows the loaded model's
// width (small models learn at a larger one); a rate the user chose, or pre-training's, stays.
func TestFineTuneLRFollowsModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		task   string
		lr     float64 // the route's; 0: the default
		hidden int
		want   float64
	}{
		{"before a model loads", engine.TaskSentiment, 0, 0, DefaultLR},
		{"bertlab-mini", engine.TaskSentiment, 0, 256, SmallModelLR},
		{"tiny", engine.TaskPOS, 0, 128, SmallModelLR},
		{"BERT-Base", engine.TaskSentiment, 0, 768, DefaultLR},
		{"the user's rate", engine.TaskSentiment, 3e-4, 256, 3e-4},
		{"pre-training", engine.TaskMLM, 0, 256, DefaultMLMLR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l TrainLab
			l.setSettings(Route{View: ViewTrain, Task: tc.task, LR: tc.lr})
			l.setModel(tc.hidden)
			if l.LR != tc.want {
				t.Errorf("learning rate %v, want %v", l.LR, tc.want)
			}
		})
	}
	// A second model of another width: the default follows it.
	var l TrainLab
	l.setSettings(Route{View: ViewTrain, Task: engine.TaskSentiment})
	l.setModel(256)
	l.setModel(768)
	if l.LR != DefaultLR {
		t.Errorf("after loading a wide model: %v, want %v", l.LR, DefaultLR)
	}
}

// TestShownMetrics: the lab's table leaves out the count and, for part of speech, entity F1
// (every word its own "entity": a copy of the token accuracy), but keeps it for chunk tags.
func TestShownMetrics(t *testing.T) {
	tag := []train.Event{{Metrics: train.Metrics{"token_accuracy": 0.5, "entity_f1": 0.5, "n": 40}}}
	cls := []train.Event{{Metrics: train.Metrics{"accuracy": 0.7, "macro_f1": 0.6, "n": 400}}}
	for _, c := range []struct {
		name  string
		evals []train.Event
		main  string
		want  []string
	}{
		{"part of speech", tag, "token_accuracy", []string{"token_accuracy"}},
		{"named entities", tag, "entity_f1", []string{"entity_f1", "token_accuracy"}},
		{"sentiment", cls, "accuracy", []string{"accuracy", "macro_f1"}},
		{"no evaluation yet", nil, "accuracy", nil},
	} {
		if got := shownMetrics(c.evals, c.main); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
