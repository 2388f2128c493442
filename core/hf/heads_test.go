package hf_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// taskFixtureDir is a BertForPreTraining checkpoint with a vocabulary.
const taskFixtureDir = "../bert/testdata/bert-tiny-random"

// tinyTaskModel is a small random task model whose head biases are not zero.
func tinyTaskModel(t *testing.T, task bert.Task, labels []string) *bert.TaskModel {
	t.Helper()
	c := bert.DefaultConfig()
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 30, 8, 1, 2, 16
	c.MaxPositionEmbeddings = 16
	body, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bert.NewTaskModel(body, task, labels, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range m.Head.B.Data {
		m.Head.B.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

func TestTaskFolderRoundTrip(t *testing.T) {
	tests := []struct {
		task   bert.Task
		labels []string
		dtype  hf.DType
	}{
		{bert.SequenceClassification, []string{"negative", "positive"}, hf.F32},
		{bert.TokenClassification, []string{"O", "B-PER", "I-PER", "NN"}, hf.F32},
		{bert.QuestionAnswering, nil, hf.F32},
		{bert.SequenceClassification, []string{"a", "b", "c"}, hf.F16},
	}
	for _, tc := range tests {
		t.Run(string(tc.task)+"/"+string(tc.dtype), func(t *testing.T) {
			m := tinyTaskModel(t, tc.task, tc.labels)
			dir := t.TempDir()
			if err := hf.SaveTaskFolder(dir, m, nil, hf.SaveOptions{DType: tc.dtype}); err != nil {
				t.Fatal(err)
			}
			cj, err := os.ReadFile(filepath.Join(dir, hf.ConfigFile))
			if err != nil {
				t.Fatal(err)
			}
			var cfg map[string]any
			if err := json.Unmarshal(cj, &cfg); err != nil {
				t.Fatal(err)
			}
			if a, _ := cfg["architectures"].([]any); len(a) != 1 || a[0] != string(tc.task) {
				t.Errorf("architectures %v", cfg["architectures"])
			}
			_, hasLabels := cfg["id2label"]
			if hasLabels != (tc.labels != nil) {
				t.Errorf("id2label in config: %v, labels %q", hasLabels, tc.labels)
			}
			wf, err := hf.Open(filepath.Join(dir, hf.WeightsFile))
			if err != nil {
				t.Fatal(err)
			}
			names := wf.Names()
			wf.Close()
			for _, n := range names {
				if !strings.HasPrefix(n, "bert.") && !strings.HasPrefix(n, tc.task.HeadName()+".") {
					t.Errorf("tensor %s: neither body nor head", n)
				}
			}
			if hasPooler := slices.Contains(names, "bert.pooler.dense.weight"); hasPooler != (tc.task == bert.SequenceClassification) {
				t.Errorf("pooler saved: %v", hasPooler)
			}

			f, err := hf.LoadTaskFolder(dir, tc.task, hf.TaskLoadOptions{RequireHead: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Report.Ignored) != 0 || len(f.Report.Absent) != 0 {
				t.Errorf("report: ignored %v, absent %v, notes %v", f.Report.Ignored, f.Report.Absent, f.Report.Notes)
			}
			if !slices.Equal(f.Model.Labels, m.Labels) {
				t.Errorf("labels %q, saved %q", f.Model.Labels, m.Labels)
			}
			got, want := f.Model.Params(), m.Params()
			if len(got) != len(want) {
				t.Fatalf("%d params loaded, %d saved", len(got), len(want))
			}
			for i := range want {
				if got[i].Name != want[i].Name {
					t.Fatalf("param %d: %s, saved %s", i, got[i].Name, want[i].Name)
				}
				for j, v := range want[i].T.Data {
					if tc.dtype == hf.F16 {
						v = hf.F16ToF32(hf.F32ToF16(v))
					}
					if got[i].T.Data[j] != v {
						t.Fatalf("%s[%d] = %g, saved %g", want[i].Name, j, got[i].T.Data[j], v)
					}
				}
			}
			// Saved again unchanged, the config is the same (labels in id order, keys sorted).
			dir2 := t.TempDir()
			if err := hf.SaveTaskFolder(dir2, f.Model, nil, hf.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			cj2, _ := os.ReadFile(filepath.Join(dir2, hf.ConfigFile))
			if string(cj2) != string(cj) {
				t.Errorf("config changed on a second save:\n%s\n%s", cj, cj2)
			}
		})
	}
}

func TestLoadPretrainingCheckpointAsTask(t *testing.T) {
	tests := []struct {
		task        bert.Task
		labels      []string
		wantIgnored []string
	}{
		{bert.SequenceClassification, []string{"neg", "pos"}, []string{"cls.predictions.bias", "cls.seq_relationship.weight"}},
		{bert.TokenClassification, []string{"O", "X"}, []string{"bert.pooler.dense.weight", "cls.predictions.transform.dense.weight"}},
		{bert.QuestionAnswering, nil, []string{"bert.pooler.dense.bias", "cls.seq_relationship.bias"}},
	}
	for _, tc := range tests {
		f, err := hf.LoadTaskFolder(taskFixtureDir, tc.task, hf.TaskLoadOptions{Labels: tc.labels, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tc.wantIgnored {
			if !slices.Contains(f.Report.Ignored, n) {
				t.Errorf("%s: %s not in Ignored %v", tc.task, n, f.Report.Ignored)
			}
		}
		if slices.ContainsFunc(f.Report.Ignored, func(n string) bool { return strings.HasPrefix(n, "bert.encoder") }) {
			t.Errorf("%s: body tensors ignored: %v", tc.task, f.Report.Ignored)
		}
		head := tc.task.HeadName()
		if !slices.Contains(f.Report.Absent, head) || !slices.ContainsFunc(f.Report.Notes, func(n string) bool { return strings.Contains(n, head+" initialised") }) {
			t.Errorf("%s: the report does not say the head was initialised: absent %v, notes %v", tc.task, f.Report.Absent, f.Report.Notes)
		}
		if f.Tokenizer == nil || f.Model.Check() != nil {
			t.Errorf("%s: tokenizer %v, check %v", tc.task, f.Tokenizer != nil, f.Model.Check())
		}
		// The body is the checkpoint's.
		ref, err := hf.LoadFolder(taskFixtureDir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ref.Model.Layers[1].Out.W.Data, f.Model.Bert.Layers[1].Out.W.Data) {
			t.Errorf("%s: body weights differ from the checkpoint's", tc.task)
		}
		if _, err := hf.LoadTaskFolder(taskFixtureDir, tc.task, hf.TaskLoadOptions{Labels: tc.labels, RequireHead: true}); err == nil {
			t.Errorf("%s: RequireHead accepted a checkpoint without the head", tc.task)
		}
	}
	if _, err := hf.LoadTaskFolder(taskFixtureDir, bert.SequenceClassification, hf.TaskLoadOptions{}); err == nil {
		t.Error("a new classifier without labels accepted")
	}
}

func TestLoadTaskHeadLabelsAndArchitecture(t *testing.T) {
	m := tinyTaskModel(t, bert.SequenceClassification, []string{"neg", "neu", "pos"})
	dir := t.TempDir()
	if err := hf.SaveTaskFolder(dir, m, nil, hf.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	// The same labels in another order: the trained head is kept, in the file's order.
	f, err := hf.LoadTaskFolder(dir, bert.SequenceClassification, hf.TaskLoadOptions{Labels: []string{"pos", "neg", "neu"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Model.Labels, m.Labels) || !slices.Equal(f.Model.Head.W.Data, m.Head.W.Data) {
		t.Errorf("same label set: labels %q, head kept %v", f.Model.Labels, slices.Equal(f.Model.Head.W.Data, m.Head.W.Data))
	}
	// Other labels: a new head, said so.
	f, err = hf.LoadTaskFolder(dir, bert.SequenceClassification, hf.TaskLoadOptions{Labels: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.NumLabels() != 2 || !slices.Contains(f.Report.Ignored, "classifier.weight") || len(f.Report.Notes) == 0 {
		t.Errorf("other labels: %d outputs, ignored %v, notes %v", f.Model.NumLabels(), f.Report.Ignored, f.Report.Notes)
	}
	// A sequence classifier's "classifier" is not a token classifier's.
	f, err = hf.LoadTaskFolder(dir, bert.TokenClassification, hf.TaskLoadOptions{Labels: []string{"neg", "neu", "pos"}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(f.Model.Head.W.Data, m.Head.W.Data) || !slices.Contains(f.Report.Ignored, "classifier.weight") {
		t.Errorf("token classification took the sequence classifier's head; ignored %v", f.Report.Ignored)
	}
	if _, err := hf.LoadTaskFolder(dir, bert.TokenClassification, hf.TaskLoadOptions{RequireHead: true}); err == nil {
		t.Error("RequireHead accepted another task's head")
	}
}
