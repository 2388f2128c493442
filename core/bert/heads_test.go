package bert

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/tensor"
)

// headRef computes a task head and its loss in float64 on the outputs of the float64 reference
// encoder of grad_check_test.go, with the head's dropout mask given (nil: none).
func headRef(r *ref, task Task, b Batch, labels []int, keep []uint8, p float64) float64 {
	o := r.forward(b, nil, nil)
	h := task.HeadName()
	W, bias := r.p[h+".weight"], r.p[h+".bias"]
	L := len(bias)
	H := r.c.HiddenSize
	x, rows := append([]float64(nil), o.hidden...), b.B*b.S
	if task == SequenceClassification {
		x, rows = append([]float64(nil), o.pooled...), b.B
	}
	drop64(x, keep, p)
	logits := linear64(x, W, bias, rows, H, L)
	if task != QuestionAnswering {
		return crossEntropy64(logits, L, labels)
	}
	var loss float64
	for k := range 2 {
		lg := make([]float64, b.B*b.S)
		for i := range lg {
			lg[i] = logits[2*i+k]
		}
		pos := []int{labels[k], labels[2+k]}
		for i := range pos {
			if pos[i] >= b.S {
				pos[i] = IgnoreIndex
			}
		}
		loss += crossEntropy64(lg, b.S, pos) / 2
	}
	return loss
}

func TestTaskHeadGradientsMatchFiniteDifferences(t *testing.T) {
	tokenLabels := []int{-100, 2, 0, -100, 1, -100, 1, 2, -100, -100}
	tests := []struct {
		name    string
		task    Task
		labels  []int
		dropout bool
	}{
		{"sequence classification", SequenceClassification, []int{2, 0}, false},
		{"sequence classification dropout", SequenceClassification, []int{1, 2}, true},
		{"token classification", TokenClassification, tokenLabels, false},
		{"token classification dropout", TokenClassification, tokenLabels, true},
		{"question answering", QuestionAnswering, []int{1, 3, 2, 2}, false},
		{"question answering dropout, one end ignored", QuestionAnswering, []int{0, 4, 3, 5}, true},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := gradCheckModel(t, "gelu", true, AllHeads)
			var labels []string
			if tc.task != QuestionAnswering {
				labels = []string{"a", "b", "c"}
			}
			tm, err := NewTaskModel(body, tc.task, labels, 7)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(11, uint64(ti)))
			for i := range tm.Head.B.Data {
				tm.Head.B.Data[i] = float32(0.3 * rng.NormFloat64())
			}
			if tc.task == SequenceClassification {
				// classifier_dropout takes precedence over hidden_dropout_prob.
				tm.Bert.Config.SetExtra("classifier_dropout", 0.25)
			}
			b, _, _ := gradCheckBatch()
			opt := TrainOptions{Dropout: tc.dropout, Seed: uint64(40 + ti)}
			g := tm.NewGrads()
			got, logits, err := tm.ForwardBackward(b, tc.labels, opt, g)
			if err != nil {
				t.Fatal(err)
			}
			if tc.task != SequenceClassification && !slices.Equal(logits.Shape, []int{2, 5, tm.NumLabels()}) {
				t.Errorf("logits shape %v", logits.Shape)
			}

			// The reference, with the encoder's and the head's dropout masks of this pass.
			a, err := tm.Bert.ForwardTrain(b, opt)
			if err != nil {
				t.Fatal(err)
			}
			r := newRef(tm.Bert)
			for _, p := range tm.Params()[len(tm.Bert.Params()):] {
				r.p[p.Name] = f64(p.T)
			}
			var keep []uint8
			p := 0.0
			if tc.dropout {
				r.useMasks(a)
				p = tm.ClassifierDropout()
				want := tm.Bert.Config.HiddenDropoutProb
				if tc.task == SequenceClassification {
					want = 0.25
				}
				if tc.task == QuestionAnswering {
					want = 0
				}
				if p != want {
					t.Fatalf("classifier dropout %g, want %g", p, want)
				}
				n := a.Hidden.Len()
				if tc.task == SequenceClassification {
					n = a.Pooled.Len()
				}
				keep = make([]uint8, n)
				ones := make([]float32, n)
				for s := 0; s < b.B; s++ {
					k := n / b.B
					Dropout(ones[s*k:(s+1)*k], keep[s*k:(s+1)*k], p, opt.Seed, HeadDropoutStream+uint64(s))
				}
				if p > 0 && !slices.Contains(keep, 0) {
					t.Fatal("classifier dropout dropped nothing")
				}
			}
			loss := func() float64 { return headRef(r, tc.task, b, tc.labels, keep, p) }
			if want := loss(); math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("loss %.9g, float64 reference %.9g", got, want)
			}

			grads := map[string]*tensor.Tensor{}
			gp := g.Params()
			for i, p := range tm.Params() {
				if gp[i].Name != p.Name {
					t.Fatalf("gradient %d is %s, parameter %s", i, gp[i].Name, p.Name)
				}
				grads[p.Name] = gp[i].T
			}
			const h = 1e-5
			var worst float64
			checked := 0
			for _, p := range tm.Params() {
				vals := r.p[p.Name]
				coords := fdCoords(p.Name, p.T.Shape, b, tm.Bert.Config.PadTokenID, rng)
				if p.Name == tm.Task.HeadName()+".weight" || p.Name == tm.Task.HeadName()+".bias" {
					coords = make([]int, p.T.Len()) // every coordinate of the head
					for i := range coords {
						coords[i] = i
					}
				}
				w, n := checkFD(t, p.Name, vals, coords, h, grads[p.Name].Data, loss)
				worst, checked = math.Max(worst, w), checked+n
			}
			t.Logf("%d coordinates; worst |grad - fd| / (1e-3 + |fd|) = %.3g", checked, worst)
		})
	}
}

func TestTaskModelEvalForwardMatchesTrainingPassWithoutDropout(t *testing.T) {
	body := gradCheckModel(t, "gelu", true, AllHeads)
	b, _, _ := gradCheckBatch()
	for _, task := range Tasks {
		var labels []string
		lab := []int{0, 1}
		switch task {
		case TokenClassification:
			labels = []string{"x", "y"}
			lab = make([]int, 10)
		case SequenceClassification:
			labels = []string{"x", "y"}
		case QuestionAnswering:
			lab = []int{0, 1, 2, 3}
		}
		tm, err := NewTaskModel(body, task, labels, 1)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := tm.Forward(b)
		if err != nil {
			t.Fatal(err)
		}
		loss, tr, err := tm.ForwardBackward(b, lab, TrainOptions{}, tm.NewGrads())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ev.Shape, tr.Shape) || !slices.Equal(ev.Data, tr.Data) {
			t.Errorf("%s: eval logits %v differ from the training pass's without dropout", task, ev.Shape)
		}
		l2, err := tm.Loss(ev, lab, b)
		if err != nil || math.Abs(l2-loss) > 1e-6 {
			t.Errorf("%s: Loss = %g, %v; ForwardBackward's %g", task, l2, err, loss)
		}
	}
}

func TestNewTaskModelPoolerAndHeads(t *testing.T) {
	body := gradCheckModel(t, "gelu", true, AllHeads)
	seq, err := NewTaskModel(body, SequenceClassification, []string{"neg", "pos"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if seq.Bert.Pooler != body.Pooler || seq.Bert.MLM != nil || seq.Bert.NSP != nil || body.MLM == nil {
		t.Error("sequence classification: wants the body's pooler, no pre-training heads, body untouched")
	}
	names := []string{}
	for _, p := range seq.Params() {
		names = append(names, p.Name)
	}
	if n := len(names); names[n-2] != "classifier.weight" || names[n-1] != "classifier.bias" || names[n-3] != "bert.pooler.dense.bias" {
		t.Errorf("params end with %v", names[n-3:])
	}
	// Head init: N(0, initializer_range²), bias 0.
	var ss float64
	for _, v := range seq.Head.W.Data {
		ss += float64(v) * float64(v)
	}
	std := math.Sqrt(ss / float64(seq.Head.W.Len()))
	if std < 0.2 || std > 0.8 || slices.ContainsFunc(seq.Head.B.Data, func(v float32) bool { return v != 0 }) {
		t.Errorf("head init std %.3g (initializer_range 0.5), bias %v", std, seq.Head.B.Data)
	}

	tok, err := NewTaskModel(body, TokenClassification, []string{"O", "B-X", "I-X"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Bert.Pooler != nil || tok.NumLabels() != 3 {
		t.Error("token classification has no pooler, 3 labels")
	}
	qa, err := NewTaskModel(body, QuestionAnswering, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if qa.Bert.Pooler != nil || qa.NumLabels() != 2 || qa.Params()[len(qa.Params())-1].Name != "qa_outputs.bias" {
		t.Error("QA: no pooler, qa_outputs [2, H]")
	}

	nopool := gradCheckModel(t, "gelu", true, Heads{MLM: true})
	s2, err := NewTaskModel(nopool, SequenceClassification, []string{"a", "b"}, 1)
	if err != nil || s2.Bert.Pooler == nil || s2.Check() != nil {
		t.Errorf("a body without pooler gets a new one for sequence classification: %v", err)
	}
	for _, bad := range [][]string{nil, {"a"}, {"a", "a"}, {"a", ""}} {
		if _, err := NewTaskModel(body, SequenceClassification, bad, 1); err == nil {
			t.Errorf("labels %q accepted", bad)
		}
	}
	if _, err := NewTaskModel(body, QuestionAnswering, []string{"a", "b"}, 1); err == nil {
		t.Error("QA with labels accepted")
	}
	if _, err := NewTaskModel(body, "BertForMultipleChoice", []string{"a", "b"}, 1); err == nil {
		t.Error("unknown task accepted")
	}
}

func TestTaskModelHFConfig(t *testing.T) {
	body := gradCheckModel(t, "gelu", true, AllHeads)
	body.Config.SetExtra("architectures", []string{"BertForPreTraining"})
	labels := []string{"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10"}
	tm, err := NewTaskModel(body, SequenceClassification, labels, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tm.HFConfig()
	if err != nil {
		t.Fatal(err)
	}
	if string(body.Config.Extra["architectures"]) != `["BertForPreTraining"]` {
		t.Errorf("HFConfig changed the body's config: %s", body.Config.Extra["architectures"])
	}
	js, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Architectures []string       `json:"architectures"`
		ID2Label      map[string]any `json:"id2label"`
		Label2ID      map[string]int `json:"label2id"`
		ProblemType   string         `json:"problem_type"`
	}
	if err := json.Unmarshal(js, &parsed); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(parsed.Architectures, []string{"BertForSequenceClassification"}) || parsed.Label2ID["l10"] != 10 ||
		parsed.ID2Label["10"] != "l10" || parsed.ProblemType != "single_label_classification" {
		t.Errorf("config: %s", js)
	}
	c2, err := ParseConfig(js)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ConfigLabels(c2)
	if err != nil || !slices.Equal(got, labels) {
		t.Errorf("ConfigLabels = %q, %v", got, err)
	}
	for _, bad := range []string{`{"0":"a","2":"b"}`, `{"x":"a"}`, `[1]`} {
		c2.Extra["id2label"] = json.RawMessage(bad)
		if _, err := ConfigLabels(c2); err == nil {
			t.Errorf("id2label %s accepted", bad)
		}
	}
}

func TestTaskModelRejectsBadLabels(t *testing.T) {
	body := gradCheckModel(t, "gelu", true, AllHeads)
	b, _, _ := gradCheckBatch()
	seq, _ := NewTaskModel(body, SequenceClassification, []string{"a", "b"}, 1)
	qa, _ := NewTaskModel(body, QuestionAnswering, nil, 1)
	tests := []struct {
		m      *TaskModel
		labels []int
	}{
		{seq, []int{0}},
		{seq, []int{0, 2}},
		{seq, []int{IgnoreIndex, IgnoreIndex}},
		{qa, []int{0, 1}},
		{qa, []int{0, -1, 0, 0}},
		{qa, []int{5, 5, 9, 9}}, // all ignored
	}
	for _, tc := range tests {
		if _, _, err := tc.m.ForwardBackward(b, tc.labels, TrainOptions{}, tc.m.NewGrads()); err == nil {
			t.Errorf("%s: labels %v accepted", tc.m.Task, tc.labels)
		}
	}
}
