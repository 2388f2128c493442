package ui

import (
	"strconv"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/train"
)

// mapStore is Storage in memory: what localStorage is to the page.
type mapStore map[string]string

func (m mapStore) Get(k string) string { return m[k] }
func (m mapStore) Set(k, v string)     { m[k] = v }

func TestLessonRoutes(t *testing.T) {
	for _, tc := range []struct {
		hash   string
		lesson int
		view   string
	}{
		{"#lessons", 1, Lessons[0].Start.View},
		{"#lessons/3", 3, ViewAttention},
		{"#lessons/8?task=sentiment", 8, ViewTrain},
		{"#lessons/99", len(Lessons), Lessons[len(Lessons)-1].Start.View},
		{"#lessons/0", 1, Lessons[0].Start.View},
		{"#lessonsx", 0, ViewMask},
		{"#mask?text=a", 0, ViewMask},
	} {
		r, _ := ParseRoute(tc.hash)
		if r.Lesson != tc.lesson || r.View != tc.view {
			t.Errorf("%s: lesson %d view %q, want lesson %d view %q", tc.hash, r.Lesson, r.View, tc.lesson, tc.view)
		}
	}
	r := Route{Lesson: 4, View: ViewAttention, Text: "a b", Layer: 1, Head: 1, Goal: "x y"}
	h := r.Hash()
	if want := "#lessons/4?text=a%20b&layer=1&head=1&goal=x%20y"; h != want {
		t.Errorf("Hash %q, want %q", h, want)
	}
	back, hasText := ParseRoute(h)
	if !hasText || back.Lesson != 4 || back.View != ViewAttention || back.Text != "a b" || back.Layer != 1 || back.Head != 1 || back.Goal != "x y" {
		t.Errorf("%s reads back as %+v", h, back)
	}
	// The goal belongs to a lesson: a view's own fragment has none.
	if h := (Route{View: ViewMask, Text: "a", Goal: "x"}).Hash(); strings.Contains(h, "goal") {
		t.Errorf("a view's fragment carries a goal: %s", h)
	}
}

func TestLanding(t *testing.T) {
	if h := Landing(nil); h != "#lessons/1" {
		t.Errorf("no storage: %q", h)
	}
	if h := Landing(mapStore{}); h != "#lessons/1" {
		t.Errorf("first visit: %q", h)
	}
	if h := Landing(mapStore{StoreLast: "#attention?text=a&layer=1&head=0"}); h != "#attention?text=a&layer=1&head=0" {
		t.Errorf("returning visit: %q", h)
	}
	if h := Landing(mapStore{StoreLast: "garbage"}); h != "#lessons/1" {
		t.Errorf("a stored value that is no fragment: %q", h)
	}
}

func TestOpenLesson(t *testing.T) {
	st := mapStore{}
	var hashes []string
	a := &App{Store: st, OnRoute: func(h string) { hashes = append(hashes, h) }}
	for n := range Lessons {
		l := Lessons[n]
		if l.check == nil || l.Task == "" || len(l.Highlight) == 0 || len(l.Text) == 0 {
			t.Errorf("lesson %d (%s) lacks a task, a check, a highlight or text", n+1, l.Title)
		}
		a.OpenLesson(n+1, "")
		if a.Lesson != n+1 || a.View != l.Start.View || a.Text != l.Start.Text {
			t.Errorf("lesson %d opens lesson %d, view %q, text %q", n+1, a.Lesson, a.View, a.Text)
		}
		want := "#lessons/" + strconv.Itoa(n+1) + "?"
		if len(hashes) == 0 || !strings.HasPrefix(hashes[len(hashes)-1], want) || st[StoreLast] != hashes[len(hashes)-1] {
			t.Errorf("lesson %d: fragment %v, stored %q", n+1, hashes[len(hashes)-1:], st[StoreLast])
		}
	}
	// The keys move between lessons, stopping at either end; other keys are not theirs.
	a.OpenLesson(1, "")
	for _, k := range []struct {
		key  string
		want int
	}{{"[", 1}, {"]", 2}, {"PageDown", 3}, {"PageUp", 2}, {"ArrowRight", 2}} {
		a.Key(k.key)
		if a.Lesson != k.want {
			t.Errorf("key %s: lesson %d, want %d", k.key, a.Lesson, k.want)
		}
	}
	// A view's tab leaves the lessons.
	a.SetView(ViewMask)
	if a.Lesson != 0 || a.View != ViewMask || strings.HasPrefix(hashes[len(hashes)-1], "#lessons") {
		t.Errorf("after the Mask tab: lesson %d, view %q, fragment %q", a.Lesson, a.View, hashes[len(hashes)-1])
	}
}

// att builds a one-layer attention result over tokens from maps per head.
func att(tokens []string, heads ...[][]float32) pipeline.AttentionResult {
	return pipeline.AttentionResult{NumHeads: len(heads), Tokens: tokens, Attentions: heads}
}

// uniform is a map whose rows spread evenly over n tokens.
func uniform(n int) [][]float32 {
	p := make([][]float32, n)
	for i := range p {
		p[i] = make([]float32, n)
		for j := range p[i] {
			p[i][j] = 1 / float32(n)
		}
	}
	return p
}

func TestHeadChecks(t *testing.T) {
	tokens := []string{"[CLS]", "sat", "cat", "on", "[SEP]"}
	S := len(tokens)
	prev, sep, cell := uniform(S), uniform(S), uniform(S)
	for i := 1; i < S; i++ { // each token gives 0.8 to the one before
		for j := range prev[i] {
			prev[i][j] = 0.05
		}
		prev[i][i-1] = 0.8
	}
	for i := range sep { // every row gives 0.6 to [SEP]
		for j := range sep[i] {
			sep[i][j] = 0.1
		}
		sep[i][S-1] = 0.6
	}
	cell[1][2] = 0.9 // "sat" looks at "cat"
	a := &App{Loaded: true, MaskedText: "sat cat on", Lesson: 3}
	a.Att, a.AttText = []pipeline.AttentionResult{att(tokens, uniform(S), cell), att(tokens, prev, sep)}, a.InputKey()
	for _, tc := range []struct {
		lesson, layer, head int
		done                bool
	}{
		{3, 0, 1, true}, {3, 1, 0, false}, {3, 0, 0, false},
		{4, 1, 0, true}, {4, 1, 1, false}, {4, 0, 1, false},
	} {
		a.Lesson, a.Layer, a.Head = tc.lesson, tc.layer, tc.head
		c := a.LessonCheck()
		if c.Done != tc.done {
			t.Errorf("lesson %d, layer %d head %d: done %v (%s), want %v", tc.lesson, tc.layer, tc.head, c.Done, c.Msg, tc.done)
		}
	}
	// The head a lesson opens on does not count until the user has looked at another one.
	b := &App{Loaded: true, MaskedText: "sat cat on", Lesson: 4}
	b.Att, b.AttText = []pipeline.AttentionResult{att(tokens, prev, uniform(S))}, b.InputKey()
	for i, sel := range []struct {
		head int
		done bool
	}{{0, false}, {1, false}, {0, true}} {
		b.Head = sel.head
		if c := b.LessonCheck(); c.Done != sel.done {
			t.Errorf("start head first, choice %d (head %d): done %v (%s), want %v", i, sel.head, c.Done, c.Msg, sel.done)
		}
	}
	// An answer for another input is not judged.
	a.Lesson, a.Layer, a.Head, a.AttText = 4, 1, 0, "old text"
	if c := a.LessonCheck(); c.Done || c.Msg != pending.Msg {
		t.Errorf("attention of an older input: %+v", c)
	}
}

func TestTaskChecks(t *testing.T) {
	nspApp := func(goal string, isNext float64) *App {
		a := &App{Loaded: true, Lesson: 7, Goal: goal, TextB: "b", MaskedText: "a", MaskedB: "b", Info: &ModelInfo{Heads: []string{"mlm", "nsp", "pooler"}}}
		a.PairNSP, a.PairNSPKey = &pipeline.NSPResult{IsNext: isNext, NotNext: 1 - isNext}, a.InputKey()
		return a
	}
	trainApp := func(goal string, acc ...float64) *App {
		a := &App{Loaded: true, Lesson: 8, Goal: goal}
		a.Training.Task = engine.TaskSentiment
		for i, x := range acc {
			a.Training.Evals = append(a.Training.Evals, train.Event{Epoch: float64(i + 1), Metrics: map[string]float64{"accuracy": x}})
		}
		return a
	}
	for _, tc := range []struct {
		name string
		a    *App
		done bool
	}{
		{"NotNext by default", nspApp("", 0.3), true},
		{"IsNext above 0.5", nspApp("", 0.7), false},
		{"NotNext above a threshold", nspApp("NotNext@0.52", 0.49), false},
		{"NotNext above a lower threshold", nspApp("NotNext@0.505", 0.49), true},
		{"IsNext asked", nspApp("IsNext", 0.7), true},
		{"no run", trainApp(""), false},
		{"last epoch counts", trainApp("", 0.9, 0.55), false},
		{"reached 60%", trainApp("", 0.5, 0.65), true},
		{"own goal", trainApp("0.55", 0.5, 0.56), true},
	} {
		if c := tc.a.LessonCheck(); c.Done != tc.done {
			t.Errorf("%s: done %v (%s), want %v", tc.name, c.Done, c.Msg, tc.done)
		}
	}
	// Pieces, from the words the tokenizer made.
	a := &App{Loaded: true, Lesson: 1, Tok: &Tokens{}, Words: []Word{{ID: 0, Text: "hippopotamus", Pieces: []string{"hip", "##pop", "##ota", "##mus"}}}}
	if c := a.LessonCheck(); !c.Done {
		t.Errorf("a word of 4 pieces: %+v", c)
	}
	a.Words[0].Pieces = a.Words[0].Pieces[:2]
	if c := a.LessonCheck(); c.Done {
		t.Errorf("a word of 2 pieces: %+v", c)
	}
}

func TestLessonProgress(t *testing.T) {
	st := mapStore{}
	a := &App{Store: st, Loaded: true, Lesson: 1, Tok: &Tokens{}, Words: []Word{{ID: 0, Pieces: []string{"a", "##b", "##c"}}}}
	if !a.LessonCheck().Done || st[StoreDone] != "1" {
		t.Fatalf("a done task is not stored: %q", st[StoreDone])
	}
	// Another visit reads it back; the Lessons tab opens the first lesson not done.
	b := &App{Store: st}
	if !b.LessonDone(1) || b.LessonDone(2) {
		t.Errorf("read back: 1 %v, 2 %v", b.LessonDone(1), b.LessonDone(2))
	}
	b.OpenLessons()
	if b.Lesson != 2 {
		t.Errorf("the Lessons tab opens lesson %d, want 2", b.Lesson)
	}
}

func TestLessonTextEscapesGoal(t *testing.T) {
	a := &App{Lesson: 10, Goal: `<img src=x onerror=alert(1)>`}
	if !strings.Contains(Lessons[9].Task, "{goal}") {
		t.Fatalf("lesson 10's task has no goal: %s", Lessons[9].Task)
	}
	s := a.LessonText(Lessons[9].Task)
	if strings.Contains(s, "<img") || !strings.Contains(s, "&lt;img") {
		t.Errorf("the goal is not escaped: %s", s)
	}
	a = &App{Lesson: 8, Goal: "0.65", Info: &ModelInfo{}}
	if s := a.LessonText(Lessons[7].Task); !strings.Contains(s, "65%") {
		t.Errorf("the accuracy goal reads %q", s)
	}
}
