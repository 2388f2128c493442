package ui

import (
	"math"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
)

// The explanation functions, natively, as wasm/engine answers them.

func (e *nativeEngine) Attributions(r explain.Request) (*explain.Report, error) {
	return e.e.Attributions(r)
}

func (e *nativeEngine) Lens(r explain.Request) (*explain.Report, error) { return e.e.Lens(r) }

func (e *nativeEngine) Ablation(r explain.Request) (*explain.Report, error) {
	return e.e.Ablation(r)
}

func (e *nativeEngine) Importance(r explain.Request) (*explain.Report, error) {
	return e.e.Importance(r)
}

func (e *nativeEngine) Neuron(r engine.NeuronRequest) (*explain.Neuron, error) {
	return e.e.Neuron(r)
}

func TestWhyRouteRoundTrip(t *testing.T) {
	for _, r := range []Route{
		{View: ViewWhy, Text: "the [MASK] sat", Masks: []int{1}, Target: "cat", Method: explain.MethodIG, IGSteps: 16, Baseline: "pad",
			Off: []explain.Head{{Layer: 1, Head: 3}, {Layer: 0, Head: 2}}},
		{View: ViewWhy, Text: "a b", Target: "isnext"},
	} {
		got, ok := ParseRoute(r.Hash())
		if !ok || got.View != ViewWhy || got.Target != r.Target || got.Method != r.Method || got.IGSteps != r.IGSteps ||
			got.Baseline != r.Baseline || !slices.Equal(got.Off, r.Off) {
			t.Errorf("%+v -> %q -> %+v", r, r.Hash(), got)
		}
	}
	// What the URL gets wrong is dropped, not kept.
	got, _ := ParseRoute("#why?text=x&method=lime&igsteps=9999&baseline=zero&off=0.1,x,1.-2,0.1,3")
	if got.Method != "" || got.IGSteps != explain.MaxSteps || got.Baseline != "" || !slices.Equal(got.Off, []explain.Head{{Layer: 0, Head: 1}}) {
		t.Errorf("lenient parse: %+v", got)
	}
}

func TestNiceCeil(t *testing.T) {
	for _, tc := range []struct{ v, want float64 }{
		{0.00008, 0.0001}, {0.0001, 0.0001}, {0.00011, 0.0002}, {0.003, 0.005}, {0.06, 0.1}, {0.3, 0.5}, {0.7, 1}, {0, 1},
	} {
		if got := niceCeil(tc.v); math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("niceCeil(%g) = %g, want %g", tc.v, got, tc.want)
		}
	}
}

// whyApp is a page on the "Why?" view of "she bought [MASK] milk ." with answers shown for it.
func whyApp(lesson int, goal string, off []explain.Head, method string, abl *explain.AblatedPosition, scores []float64) *App {
	a := &App{Loaded: true, Lesson: lesson, Goal: goal, View: ViewWhy, MaskedText: "she bought [MASK] milk .", Order: []int{2}}
	a.Why.Off, a.Why.Method, a.Why.Word = off, method, "the"
	a.Why.Attr = &explain.Report{Tokens: []string{"[CLS]", "she", "bought", "[MASK]", "milk", ".", "[SEP]"},
		Target:      &explain.TargetInfo{Target: explain.Target{Kind: explain.MaskedToken, Position: 3}},
		Attribution: &explain.Attribution{Method: method, Scores: scores}}
	if abl != nil {
		a.Why.Abl = &explain.Report{Ablation: &explain.Ablation{Off: off, Positions: []explain.AblatedPosition{*abl}}}
	}
	a.Why.shown = a.whyKey()
	return a
}

// ranked gives a the heads' importance for its input: head 1.0 ranks first.
func ranked(a *App) *App {
	a.Why.Imp = &explain.Importance{Raw: [][]float64{{0.1, 0.3}, {0.5, 0.2}}}
	a.Why.impKey = a.InputKey() + "|" + a.Why.Word
	return a
}

func TestWhyLessonChecks(t *testing.T) {
	same := &explain.AblatedPosition{Before: []explain.Shift{{ID: 1, Token: "the", Before: 0.5, After: 0.4}}, After: []explain.Shift{{ID: 1, Token: "the", Before: 0.5, After: 0.4}}}
	moved := &explain.AblatedPosition{Before: []explain.Shift{{ID: 1, Token: "the", Before: 0.5, After: 0.1}}, After: []explain.Shift{{ID: 2, Token: "a", Before: 0.2, After: 0.3}}}
	h := func(n int) []explain.Head {
		var out []explain.Head
		for i := range n {
			out = append(out, explain.Head{Layer: 0, Head: i})
		}
		return out
	}
	scores := []float64{0.9, 0.1, 0.5, 2, 0.3, -0.2, 0.8} // [CLS], [MASK] and [SEP] do not count: "bought" leads
	for _, tc := range []struct {
		name string
		a    *App
		done bool
	}{
		{"9: not ranked", whyApp(9, "", h(1), "", same, scores), false},
		{"9: no head off", ranked(whyApp(9, "", nil, "", same, scores)), false},
		{"9: the most important head", ranked(whyApp(9, "", []explain.Head{{Layer: 1, Head: 0}}, "", same, scores)), true},
		{"9: another head", ranked(whyApp(9, "", []explain.Head{{Layer: 0, Head: 1}}, "", same, scores)), false},
		{"9: the most important and another", ranked(whyApp(9, "", []explain.Head{{Layer: 1, Head: 0}, {Layer: 0, Head: 1}}, "", moved, scores)), false},
		{"10: bought leads", whyApp(10, "", nil, "ig", nil, scores), true},
		{"10: another word asked", whyApp(10, "milk", nil, "ig", nil, scores), false},
		{"10: gradient x input", whyApp(10, "", nil, "gxi", nil, scores), false},
		{"10: milk leads", whyApp(10, "milk", nil, "ig", nil, []float64{0, 0.1, 0.5, 2, 0.7, -0.2, 0}), true},
	} {
		if c := tc.a.LessonCheck(); c.Done != tc.done {
			t.Errorf("%s: done %v (%s), want %v", tc.name, c.Done, c.Msg, tc.done)
		}
	}
	// Answers for another state are not judged.
	a := ranked(whyApp(9, "", []explain.Head{{Layer: 1, Head: 0}}, "", moved, scores))
	a.Why.Off = h(1)
	if c := a.LessonCheck(); c.Done || c.Msg != pending.Msg {
		t.Errorf("answers for other heads: %+v", c)
	}
}

// TestAppWhy drives the "Why?" view and its lessons natively: the answers are the engine's for
// the masked text, and the lessons' checks judge them.
func TestAppWhy(t *testing.T) {
	eng := newNativeEngine(t)
	a := &App{Eng: eng}
	a.Start(ParseRoute("#why?text=The%20cat%20sat%20on%20the%20mat.&masks=1&method=ig&igsteps=8"))
	if a.Err != "" || a.Why.Err != "" || a.Why.Attr == nil || a.Why.Lens == nil || a.Why.Abl == nil {
		t.Fatalf("why: err %q / %q, answers %v %v %v", a.Err, a.Why.Err, a.Why.Attr != nil, a.Why.Lens != nil, a.Why.Abl != nil)
	}
	want, err := eng.e.Attributions(explain.Request{Text: "The [MASK] sat on the mat.", Method: "ig", Steps: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Why.Attr.Attribution.Scores, want.Attribution.Scores) || a.Why.Attr.Attribution.Steps != 8 {
		t.Errorf("attributions %v, want %v", a.Why.Attr.Attribution.Scores, want.Attribution.Scores)
	}
	a.ToggleHead(1, 0)
	if !slices.Equal(a.Why.Abl.Ablation.Off, []explain.Head{{Layer: 1, Head: 0}}) {
		t.Errorf("ablation after a click: %+v", a.Why.Abl.Ablation.Off)
	}
	a.RankHeads()
	if a.Why.Imp == nil || len(a.Why.Imp.Raw) != 2 {
		t.Errorf("importance: %+v", a.Why.Imp)
	}
	for _, n := range []int{9, 10} {
		a.OpenLesson(n, "")
		if c := a.LessonCheck(); c.Msg == "" || c.Msg == pending.Msg {
			t.Errorf("lesson %d: no verdict (%+v); why err %q, page err %q", n, c, a.Why.Err, a.Err)
		}
	}
}
