package ui

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/pipeline"
)

// ViewLessons is "Lessons": #lessons/N?text=...&goal=... shows lesson N over the real view it
// drives (Lesson.Start.View), with that view's own state in the rest of the fragment.
const ViewLessons = "lessons"

// Lesson is one screen of "Learn BERT": a few paragraphs about the view it opens, the parts of
// that view it outlines, and a task the page checks from the engine's answers.
type Lesson struct {
	Title string
	// Start is the state the lesson opens the page in (its view, sentence, layer, head, …).
	Start Route
	// Text is the lesson's paragraphs, as HTML written here (never user input). {vocab},
	// {hidden}, {layers}, {heads}, {headdim} and {inter} stand for the loaded model's sizes.
	Text []string
	// Highlight are CSS selectors of the real elements the lesson speaks of: the page outlines
	// them and marks them with data-lesson-highlight.
	Highlight []string
	// Task is the task as HTML; {goal} stands for the goal (escaped).
	Task string
	// Goal is the task's default goal; "&goal=" in the URL replaces it.
	Goal string
	// Coming says what the lesson will do once a feature bertlab lacks lands ("" if none).
	Coming string
	check  func(a *App, goal string) Check
}

// Check is the page's verdict on a lesson's task, computed from what the engine answered for
// the state shown.
type Check struct {
	Done bool
	Msg  string
}

// The example sentences of the lessons.
const (
	lessonCat   = "The cat sat on the mat."
	lessonFox   = "The quick brown fox jumps over the lazy dog."
	lessonStore = "The man went to the store to buy a gallon of milk."
)

// Lessons is "Learn BERT", in order. Each task is checked generically from the engine's
// numbers for whatever model is loaded (a trained model and a random one alike).
var Lessons = []Lesson{
	{
		Title: "Words to tokens",
		Start: Route{View: ViewMask, Text: "The musicians played wonderfully."},
		Text: []string{
			`BERT does not read letters or whole words: it reads <b>tokens</b>, entries of a fixed vocabulary ({vocab} of them in this model). The sentence in the box below this lesson is shown at the bottom of the page as the tokens the tokenizer made. First the text is lowercased (this model is <i>uncased</i>) and punctuation is split off; then each word is looked up.`,
			`A common word is one token. A rarer one is cut into the longest pieces the vocabulary has, <b>WordPiece</b>: every piece after the first starts with <code>##</code> and is drawn grey, as in <code>wonderful ##ly</code>. A character no piece can spell becomes <code>[UNK]</code>, "unknown".`,
			`The tokenizer also adds two <b>special tokens</b> (dashed): <code>[CLS]</code> at the start, whose final vector stands for the whole input when BERT classifies it, and <code>[SEP]</code> at the end of each sentence.`,
		},
		Highlight: []string{".maskview .tokens", "#text"},
		Task:      `Type a sentence into the box with a word that WordPiece cuts into at least {goal} pieces (a long or rare word), then press Enter.`,
		Goal:      "3",
		check:     checkPieces,
	},
	{
		Title: "Embeddings",
		Start: Route{View: ViewSteps, Text: lessonCat, Layer: 0, Token: 1, Step: 0},
		Text: []string{
			`Each token becomes a vector of {hidden} numbers before any layer runs. It is the sum of three rows of learned tables, the strips of the card below (blue negative, white 0, red positive):`,
			`<span class="formula-inline">e = E<sub>word</sub>[token] + E<sub>position</sub>[i] + E<sub>segment</sub>[A or B]</span>`,
			`The <b>word</b> row is the same wherever the token stands; the <b>position</b> row depends only on where it stands (attention itself does not see order, so this row is how BERT knows it); the <b>segment</b> row says sentence A or B. Step 2 (▶) then applies <b>LayerNorm</b>: it shifts and scales the sum to mean 0 and variance 1 over its {hidden} numbers, then applies a learned scale γ and shift β: <span class="formula-inline">γ · (e − mean) / √(variance + ε) + β</span>.`,
		},
		Highlight: []string{".steptokens", ".stepcard"},
		Task:      `The card shows the first “{goal}”. Click the second “{goal}” in the row of tokens and compare: the word row stays the same, the position row changes.`,
		Goal:      "the",
		check:     checkRepeat,
	},
	{
		Title: "One attention head",
		Start: Route{View: ViewAttention, Text: lessonCat, Layer: 0, Head: 0},
		Text: []string{
			`Attention lets every token gather information from the others. A head maps each token's vector x to three vectors: a <b>query</b> q = xW<sub>Q</sub> (what it looks for), a <b>key</b> k = xW<sub>K</sub> (what it offers) and a <b>value</b> v = xW<sub>V</sub> (what it passes on), {headdim} numbers each.`,
			`Token i scores token j by how well its query matches j's key, <span class="formula-inline">s<sub>ij</sub> = q<sub>i</sub> · k<sub>j</sub> / √{headdim}</span>, and a <b>softmax</b> turns the row of scores into weights that are positive and sum to 1: <span class="formula-inline">p<sub>ij</sub> = e<sup>s<sub>ij</sub></sup> / Σ<sub>k</sub> e<sup>s<sub>ik</sub></sup></span>. The output of token i is the weighted average Σ<sub>j</sub> p<sub>ij</sub> v<sub>j</sub>.`,
			`The large map is one head: row i is token i's softmax row, darker is more weight. Point at a cell to read it; the buttons above it step through the heads.`,
		},
		Highlight: []string{".attview .heatmap", ".attview .controls"},
		Task:      `Find the head in which “{q}” gives the largest share of its attention to “{k}”: compare row “{q}”, column “{k}” across heads.`,
		Goal:      "sat cat",
		check:     checkCell,
	},
	{
		Title: "Many heads and layers",
		Start: Route{View: ViewAttention, Text: lessonFox, Layer: 0, Head: 0},
		Text: []string{
			`BERT runs several heads side by side, {heads} in each layer of this model, and stacks {layers} layers; each layer's output is the next one's input. The grid has one small map per head: a row of the grid is a layer, a column a head. Click a map (or use the arrow keys) to see it large.`,
			`Each head has its own W<sub>Q</sub>, W<sub>K</sub> and W<sub>V</sub>, so each can look for something different; their outputs are put side by side and mixed by one more matrix. In a trained BERT many heads have plain jobs: one looks at the previous token, one at the next, some at <code>[SEP]</code> or at the sentence's punctuation, a few link a verb to its object (Clark et al., 2019). A previous-token head draws a line just left of the diagonal.`,
		},
		Highlight: []string{".attview .grid"},
		Task:      `Find the head that looks most at the previous token: averaged over the tokens of the sentence, it gives the largest weight to the token just before.`,
		check:     checkPrevHead,
	},
	{
		Title: "Inside a layer",
		Start: Route{View: ViewSteps, Text: lessonCat, Layer: 0, Token: 2, Step: 7},
		Text: []string{
			`A layer is two blocks, each wrapped the same way: its result is <b>added</b> to its input (the <b>residual</b> connection, so a token keeps what it was) and the sum goes through <b>LayerNorm</b>:`,
			`<span class="formula-inline">a = LayerNorm(x + Attention(x))</span><br><span class="formula-inline">y = LayerNorm(a + W<sub>2</sub> · GELU(W<sub>1</sub>a + b<sub>1</sub>) + b<sub>2</sub>)</span>`,
			`The second block is the <b>feed-forward</b>: each token on its own goes through {inter} units and back to {hidden}; GELU, a smooth ReLU, makes it non-linear. The ten steps below the tokens are the whole layer for one token, with the numbers the model computed: the card shows step 8, the attention's residual and LayerNorm.`,
		},
		Highlight: []string{".stepnav", ".stepcard"},
		Task:      `Follow <code>[CLS]</code> to the very end: pick the token [CLS], the last layer and the last step, the output BERT's classifiers read.`,
		check:     checkCLSEnd,
	},
	{
		Title: "Masked-LM pre-training",
		Start: Route{View: ViewMasking, Text: lessonStore, Seed: 1},
		Text: []string{
			`BERT learns from plain text by filling in blanks it makes itself. Of every sequence's tokens, <b>15%</b> are chosen for the model to predict. Of the chosen ones <b>80%</b> become <code>[MASK]</code>, <b>10%</b> a random token and <b>10%</b> stay as they were, so the model cannot tell which tokens it will be asked about and must keep a good vector for every token.`,
			`The row “what the model reads” is the same masking code that pre-trains bertlab's models, drawn from the seed: change the seed (or press re-roll) to draw again. With <b>whole words</b> on, the pieces of one word (<code>un ##bel ##ie…</code>) are chosen together, which makes the task harder than guessing a piece from its neighbours.`,
			`The model's loss is the cross-entropy of its guesses at the chosen positions only. Below the masking, the lab shows next-sentence pairs, the other pre-training task (next lesson).`,
		},
		Highlight: []string{".labcontrols", `[data-role="masked"]`},
		Task:      `Find a seed where one of the chosen tokens is replaced by a <b>random</b> token (the 10% case, pink) rather than by [MASK].`,
		Goal:      engine.KindRandom,
		check:     checkMaskKind,
	},
	{
		Title: "Next-sentence prediction",
		Start: Route{View: ViewMask, Text: "The man went to the store.", Pair: "He bought a gallon of milk."},
		Text: []string{
			`BERT's second pre-training task reads two segments, <code>[CLS] A [SEP] B [SEP]</code>, and says whether B really came after A in the text (<b>IsNext</b>) or was taken from another document (<b>NotNext</b>); half the training pairs are each. Sentence B's tokens get the second segment row (tinted green).`,
			`The answer comes from the final vector of <code>[CLS]</code>: a small layer (the pooler, tanh) and a two-way softmax, the bars below. Later work (RoBERTa) found this task helps little; it is here because the original BERT was trained with it.`,
		},
		Highlight: []string{"#textb", ".nsppanel"},
		Task:      `Change sentence B so that the next-sentence head says <b>{goal}</b> with more than {at}.`,
		Goal:      "NotNext",
		check:     checkNSP,
	},
	{
		Title: "Fine-tuning",
		Start: Route{View: ViewTrain, Task: engine.TaskSentiment},
		Text: []string{
			`Pre-training gives general vectors; <b>fine-tuning</b> adapts the whole model to one task with a few labelled examples. For sentiment, a new layer reads the final <code>[CLS]</code> vector and gives two scores, positive and negative; every weight of the model is then trained on labelled sentences with a small learning rate.`,
			`Press Train: the engine trains in the background, one step at a time. The first curve is the training loss (it should fall); after every epoch (one pass over the training sentences) the second curve shows the accuracy on test sentences the model never trains on. Change the epochs or the learning rate and train again.`,
		},
		Highlight: []string{`[data-role="train"]`, ".curves"},
		Task:      `Train the sentiment classifier until its accuracy on the test sentences is at least {goal}.`,
		Goal:      "0.6", // bertlab-mini (the 8-layer everyday model) at the lab's defaults (bertlab finetune, seeds 1, 2): 60/62/65%, 66/68/69% after epochs 1-3
		check:     checkAccuracy,
	},
	{
		Title: "What the heads do",
		Start: Route{View: ViewWhy, Text: lessonStore, Masks: []int{5}},
		Text: []string{
			`Studies of trained BERTs found that many heads put most of their weight on <code>[SEP]</code> or <code>[CLS]</code>, especially in the middle layers: a head's way of doing nothing when it finds nothing to look for (Clark et al., 2019). Do the predictions need every head, then?`,
			`Find out by switching heads off. Each square of the grid is one head (layer, then head); a click zeroes its output and the model predicts the masked word again without it. Michel et al. (2019) found that most heads can go with little loss, and a few cannot. “Rank heads” colours the grid by how much the loss of the first guess moves when a head is scaled down (its gradient): the darker, the more the answer leans on it. In a trained model, switching off the darkest head moves the guess most; in a random one, hardly anything moves, whichever heads go.`,
		},
		Highlight: []string{`[data-role="head-grid"]`, `[data-role="abl-after"]`},
		Task:      `Rank the heads for the model's first guess, then switch off the one that matters most to it (and only that one).`,
		check:     checkImportantHead,
	},
	{
		Title: "Why this prediction",
		Start: Route{View: ViewWhy, Text: "She bought the milk.", Masks: []int{2}, Method: "ig", IGSteps: 16},
		Text: []string{
			`The model's top guesses for the masked word come from the softmax over the whole vocabulary at that position; every token of the sentence can move them, through attention, layer by layer. Which ones did?`,
			`The sentence is coloured by integrated gradients (Sundararajan et al., 2017): the gradient of the guess's logit, averaged along a straight path from a sentence of [MASK]s to this one, times how far each token's embedding moved. Red tokens raised the guess, blue ones lowered it, and the scores add up to the change of the logit (the completeness gap says how nearly). Click a guess above the sentence to explain that one instead.`,
		},
		Highlight: []string{`[data-role="why-targets"]`, `[data-role="attrs"]`},
		Task:      `Find a guess that the word “{goal}” raises more than any other word of the sentence does (integrated gradients).`,
		Goal:      "bought",
		check:     checkTopAttribution,
	},
}

// parseLesson reads the view part of a fragment: "lessons" is lesson 1, "lessons/N" lesson N
// (clamped to the lessons there are).
func parseLesson(view string) (int, bool) {
	rest, ok := strings.CutPrefix(view, ViewLessons)
	if !ok || (rest != "" && rest[0] != '/') {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(rest, "/"))
	if err != nil {
		n = 1
	}
	return min(max(n, 1), len(Lessons)), true
}

// Storage keeps a few strings across visits (in the browser, localStorage).
type Storage interface {
	Get(key string) string
	Set(key, value string)
}

// Keys of the Storage.
const (
	StoreLast = "bertlab.last"         // the URL fragment of the last state shown
	StoreDone = "bertlab.lessons.done" // the lessons whose task was done, "1,3,4"
)

// Landing is the fragment a visit without one opens: where the user was last, else (a first
// visit) the first lesson.
func Landing(st Storage) string {
	if st != nil {
		if h := st.Get(StoreLast); strings.HasPrefix(h, "#") {
			return h
		}
	}
	return "#" + ViewLessons + "/1"
}

func (a *App) remember(hash string) {
	if a.Store != nil {
		a.Store.Set(StoreLast, hash)
	}
}

// LessonDone reports whether lesson n's task was done, in this visit or an earlier one.
func (a *App) LessonDone(n int) bool {
	if a.done == nil {
		a.done = map[int]bool{}
		if a.Store != nil {
			for _, id := range parseIDs(a.Store.Get(StoreDone)) {
				a.done[id] = true
			}
		}
	}
	return a.done[n]
}

func (a *App) markDone(n int) {
	if a.LessonDone(n) {
		return
	}
	a.done[n] = true
	if a.Store != nil {
		var ids []int
		for id := range a.done {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		a.Store.Set(StoreDone, joinIDs(ids))
	}
}

// CurrentLesson is the lesson shown, or nil.
func (a *App) CurrentLesson() *Lesson {
	if a.Lesson < 1 || a.Lesson > len(Lessons) {
		return nil
	}
	return &Lessons[a.Lesson-1]
}

// LessonGoal is the goal of the lesson's task: the URL's, else the lesson's own.
func (a *App) LessonGoal() string {
	if a.Goal != "" {
		return a.Goal
	}
	if l := a.CurrentLesson(); l != nil {
		return l.Goal
	}
	return ""
}

// LessonCheck checks the lesson's task against the state shown; a task done is remembered.
func (a *App) LessonCheck() Check {
	l := a.CurrentLesson()
	if l == nil {
		return Check{}
	}
	if !a.Loaded {
		return Check{Msg: "Waiting for the model…"}
	}
	c := l.check(a, a.LessonGoal())
	if c.Done {
		a.markDone(a.Lesson)
	}
	return c
}

// OpenLesson shows lesson n (clamped) in its starting state; goal replaces its task's goal
// ("" for the default).
func (a *App) OpenLesson(n int, goal string) {
	a.Lesson, a.Goal = min(max(n, 1), len(Lessons)), goal
	a.setupLesson()
	a.refresh()
}

// LessonBy moves d lessons on (stopping at either end).
func (a *App) LessonBy(d int) {
	n := min(max(a.Lesson+d, 1), len(Lessons))
	if n != a.Lesson {
		a.OpenLesson(n, "")
	}
}

// setupLesson puts the page into the current lesson's starting state.
func (a *App) setupLesson() {
	r := Lessons[a.Lesson-1].Start
	r.Lesson, r.Goal = a.Lesson, a.Goal
	a.setRoute(r)
	a.moved, a.startAt = false, [2]int{r.Layer, r.Head}
	a.typingB++ // a pending edit of an old sentence B must not come back
	a.PairNSP, a.PairNSPKey = nil, ""
}

// lessonKey moves between lessons: ] or PageDown to the next, [ or PageUp to the previous
// (the arrow keys belong to the views).
func (a *App) lessonKey(key string) bool {
	if a.Lesson == 0 {
		return false
	}
	switch key {
	case "]", "PageDown":
		a.LessonBy(1)
	case "[", "PageUp":
		a.LessonBy(-1)
	default:
		return false
	}
	return true
}

// LessonText replaces the placeholders of lesson text with the loaded model's sizes and the
// goal (escaped: it comes from the URL).
func (a *App) LessonText(s string) string {
	v := func(n int) string {
		if a.Info == nil {
			return "…"
		}
		return strconv.Itoa(n)
	}
	var c struct{ vocab, hidden, layers, heads, headdim, inter int }
	if a.Info != nil {
		ic := a.Info.Config
		c.vocab, c.hidden, c.layers, c.heads, c.inter = ic.VocabSize, ic.HiddenSize, ic.NumHiddenLayers, ic.NumAttentionHeads, ic.IntermediateSize
		if c.heads > 0 {
			c.headdim = c.hidden / c.heads
		}
	}
	goal, at := a.LessonGoal(), ""
	q, k, _ := strings.Cut(goal, " ")
	if l := a.CurrentLesson(); l != nil {
		switch l.Start.View {
		case ViewMask:
			if l.Start.Pair != "" {
				label, p := nspGoal(goal)
				goal, at = label, fmt.Sprintf("%.4g%%", 100*p)
			}
		}
	}
	return strings.NewReplacer("{vocab}", fmtCount(a.Info, c.vocab), "{hidden}", v(c.hidden), "{layers}", v(c.layers),
		"{heads}", v(c.heads), "{headdim}", v(c.headdim), "{inter}", v(c.inter),
		"{goal}", html.EscapeString(goalText(goal)), "{q}", html.EscapeString(q), "{k}", html.EscapeString(k), "{at}", html.EscapeString(at)).Replace(s)
}

// goalText is how a goal reads in a task: a fraction as a percentage.
func goalText(goal string) string {
	if f, err := strconv.ParseFloat(goal, 64); err == nil && f > 0 && f < 1 {
		return fmt.Sprintf("%.4g%%", 100*f)
	}
	return goal
}

func fmtCount(info *ModelInfo, n int) string {
	if info == nil {
		return "…"
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// The checkers. Each reads only what the engine answered for the state shown, and says so
// when that answer is still to come.

var pending = Check{Msg: "Computing…"}

// checkPieces: some word of the sentence is cut into at least goal pieces.
func checkPieces(a *App, goal string) Check {
	n, err := strconv.Atoi(goal)
	if err != nil || n < 1 {
		n = 3
	}
	if a.Tok == nil {
		return pending
	}
	var best Word
	for _, w := range a.Words {
		if w.ID >= 0 && len(w.Pieces) > len(best.Pieces) {
			best = w
		}
	}
	if len(best.Pieces) == 0 {
		return Check{Msg: "The sentence has no words yet."}
	}
	msg := fmt.Sprintf("The word cut into the most pieces: “%s”, %d (%s).", best.Text, len(best.Pieces), strings.Join(best.Pieces, " "))
	return Check{Done: len(best.Pieces) >= n, Msg: msg}
}

// checkRepeat: the step view shows layer 0's embedding steps for a second occurrence of the
// goal token.
func checkRepeat(a *App, goal string) Check {
	s := a.Steps
	if s == nil || a.stepsKey != fmt.Sprintf("%d|%d|%s", a.Layer, a.Token, a.MaskedText) {
		return pending
	}
	if s.Token < 0 || s.Token >= len(s.Tokens) {
		return pending
	}
	t := s.Tokens[s.Token]
	first := slices.Index(s.Tokens, strings.ToLower(goal))
	switch {
	case first < 0:
		return Check{Msg: fmt.Sprintf("The sentence has no token “%s”.", goal)}
	case t != strings.ToLower(goal):
		return Check{Msg: fmt.Sprintf("The card shows “%s” at position %d.", t, s.Token)}
	case s.Token == first:
		return Check{Msg: fmt.Sprintf("The card shows the first “%s”, at position %d.", t, s.Token)}
	case s.Layer != 0 || a.StepI > 1:
		return Check{Msg: "Go back to layer 0 and the first two steps: the embedding sum and its LayerNorm."}
	}
	return Check{Done: true, Msg: fmt.Sprintf("Position %d is the second “%s”: the same word row as position %d, another position row, so another sum.", s.Token, t, first)}
}

// currentAtt is the attention the view shows, if it is for the input shown.
func currentAtt(a *App) []pipeline.AttentionResult {
	if len(a.Att) == 0 || a.AttText != a.InputKey() {
		return nil
	}
	return a.Att
}

// headScore is a statistic of one head's attention map [S, S] with its tokens.
type headScore func(p [][]float32, tokens []string) float64

// BestHead returns the layer and head whose map scores highest, and that score.
func BestHead(att []pipeline.AttentionResult, score headScore) (layer, head int, best float64) {
	best = math.Inf(-1)
	for l, r := range att {
		for h, p := range r.Attentions {
			if s := score(p, r.Tokens); s > best {
				layer, head, best = l, h, s
			}
		}
	}
	return layer, head, best
}

// checkHead: the selected head is the one that scores highest.
func checkHead(a *App, score headScore, what string) Check {
	att := currentAtt(a)
	if att == nil {
		return pending
	}
	if a.Layer >= len(att) || a.Head >= len(att[a.Layer].Attentions) {
		return pending
	}
	l, h, best := BestHead(att, score)
	cur := score(att[a.Layer].Attentions[a.Head], att[a.Layer].Tokens)
	if math.IsNaN(best) || math.IsInf(best, 0) {
		return Check{Msg: "This sentence has nothing to measure: try another one."}
	}
	if [2]int{a.Layer, a.Head} != a.startAt {
		a.moved = true
	}
	if !a.moved {
		return Check{Msg: fmt.Sprintf("Layer %d, head %d: %s %.1f%%. Compare it with the other heads: click their maps.", a.Layer, a.Head, what, 100*cur)}
	}
	if l == a.Layer && h == a.Head {
		return Check{Done: true, Msg: fmt.Sprintf("Found it: layer %d, head %d, %s %.1f%%, more than any other head.", l, h, what, 100*cur)}
	}
	return Check{Msg: fmt.Sprintf("Layer %d, head %d: %s %.1f%%. Another head scores higher.", a.Layer, a.Head, what, 100*cur)}
}

// PrevTokenScore is the mean weight a token gives the token just before it, over the tokens
// after [CLS] up to the last [SEP] (exclusive).
func PrevTokenScore(p [][]float32, _ []string) float64 {
	var sum float64
	n := 0
	for i := 1; i < len(p)-1; i++ {
		sum += float64(p[i][i-1])
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func checkPrevHead(a *App, _ string) Check {
	return checkHead(a, PrevTokenScore, "weight on the previous token")
}

// checkCell: the selected head gives the most weight from the goal's first token to its second.
func checkCell(a *App, goal string) Check {
	q, k, _ := strings.Cut(strings.ToLower(goal), " ")
	att := currentAtt(a)
	if att == nil {
		return pending
	}
	i, j := slices.Index(att[0].Tokens, q), slices.Index(att[0].Tokens, k)
	if i < 0 || j < 0 {
		return Check{Msg: fmt.Sprintf("The sentence needs the tokens “%s” and “%s”.", q, k)}
	}
	cell := func(p [][]float32, _ []string) float64 { return float64(p[i][j]) }
	return checkHead(a, cell, fmt.Sprintf("“%s” gives “%s”", q, k))
}

// checkCLSEnd: the step view shows the last step of the last layer for [CLS].
func checkCLSEnd(a *App, _ string) Check {
	s := a.Steps
	if s == nil || a.stepsKey != fmt.Sprintf("%d|%d|%s", a.Layer, a.Token, a.MaskedText) {
		return pending
	}
	var todo []string
	if s.Token != 0 {
		todo = append(todo, "pick [CLS]")
	}
	if s.Layer != s.NumLayers-1 {
		todo = append(todo, fmt.Sprintf("go to layer %d", s.NumLayers-1))
	}
	if a.StepI != NumSteps-1 {
		todo = append(todo, fmt.Sprintf("go to step %d", NumSteps))
	}
	if len(todo) > 0 {
		return Check{Msg: fmt.Sprintf("Shown: “%s”, layer %d, step %d. Still to do: %s.", s.Tokens[s.Token], s.Layer, a.StepI+1, strings.Join(todo, ", "))}
	}
	return Check{Done: true, Msg: fmt.Sprintf("This is [CLS] as the last layer leaves it: %d numbers that the classifiers read.", len(s.Steps[NumSteps-1].Vectors[len(s.Steps[NumSteps-1].Vectors)-1].Values))}
}

// checkMaskKind: the masking shown has a chosen token of the goal's kind.
func checkMaskKind(a *App, goal string) Check {
	lab := a.Lab
	if lab == nil || a.labKey != fmt.Sprintf("%d|%v|%s", a.Seed, a.WholeWord, a.LabText()) {
		return pending
	}
	count := map[string]int{}
	for _, k := range lab.Kinds {
		count[k]++
	}
	msg := fmt.Sprintf("Seed %d: %d tokens chosen: %d [MASK], %d random, %d unchanged.", lab.Seed, len(lab.Chosen),
		count[engine.KindMask], count[engine.KindRandom], count[engine.KindSame])
	return Check{Done: count[goal] > 0, Msg: msg}
}

// checkNSP: the next-sentence head's answer for the pair shown is the goal, above 50%.
func checkNSP(a *App, goal string) Check {
	if a.Pair() == "" {
		return Check{Msg: "Write a sentence B."}
	}
	if !a.HasNSP() {
		return Check{Msg: "This model has no next-sentence head."}
	}
	r := a.PairNSP
	if r == nil || a.PairNSPKey != a.InputKey() {
		return pending
	}
	label, at := nspGoal(goal)
	p := r.IsNext
	if label == "NotNext" {
		p = r.NotNext
	}
	msg := fmt.Sprintf("IsNext %.2f%%, NotNext %.2f%%.", 100*r.IsNext, 100*r.NotNext)
	return Check{Done: p > at, Msg: msg}
}

// checkAccuracy: the last test evaluation of a sentiment run reached the goal.
func checkAccuracy(a *App, goal string) Check {
	g, err := strconv.ParseFloat(goal, 64)
	if err != nil || g <= 0 || g > 1 {
		g = 0.6
	}
	l := &a.Training
	if l.Task != engine.TaskSentiment {
		return Check{Msg: "Choose the sentiment task."}
	}
	if len(l.Evals) == 0 {
		if l.Busy() {
			return Check{Msg: "Training: the test accuracy comes after the first epoch."}
		}
		return Check{Msg: "Press Train."}
	}
	ev := l.Evals[len(l.Evals)-1]
	acc, ok := ev.Metrics["accuracy"]
	if !ok {
		return pending
	}
	msg := fmt.Sprintf("Test accuracy after epoch %g: %.1f%% (goal %.1f%%).", ev.Epoch, 100*acc, 100*g)
	return Check{Done: acc >= g, Msg: msg}
}

// nspGoal reads the next-sentence goal "NotNext" or "IsNext", with "@p" the probability to
// pass (0.5 without).
func nspGoal(goal string) (label string, at float64) {
	label, p, _ := strings.Cut(goal, "@")
	at, err := strconv.ParseFloat(p, 64)
	if err != nil || at <= 0 || at >= 1 {
		at = 0.5
	}
	if strings.EqualFold(label, "IsNext") {
		return "IsNext", at
	}
	return "NotNext", at
}

// whyShown is the "Why?" view's answers, when they are for the state shown.
func whyShown(a *App) *WhyLab {
	w := &a.Why
	if a.View != ViewWhy || w.Attr == nil || w.shown == "" || w.shown != a.whyKey() {
		return nil
	}
	return w
}

// checkImportantHead: the heads were ranked for the guess shown, and the one head switched off is
// the most important.
func checkImportantHead(a *App, _ string) Check {
	if len(a.Order) == 0 {
		return Check{Msg: "Mask a word: the task is about its guesses."}
	}
	w := whyShown(a)
	if w == nil || w.Abl == nil || w.Abl.Ablation == nil || len(w.Abl.Ablation.Positions) == 0 || len(w.Abl.Ablation.Positions[0].Before) == 0 {
		return pending
	}
	if w.Imp == nil || w.impKey != a.InputKey()+"|"+w.Word {
		return Check{Msg: "Press “Rank heads”."}
	}
	best := explain.Head{}
	for l, row := range w.Imp.Raw {
		for h, v := range row {
			if v > w.Imp.Raw[best.Layer][best.Head] {
				best = explain.Head{Layer: l, Head: h}
			}
		}
	}
	if len(w.Off) != 1 {
		return Check{Msg: fmt.Sprintf("%d heads are off: switch off exactly one.", len(w.Off))}
	}
	b := w.Abl.Ablation.Positions[0].Before[0]
	msg := fmt.Sprintf("Head %s off: “%s” %s, was %s.", w.Off[0], b.Token, percent(b.After), percent(b.Before))
	if w.Off[0] != best {
		return Check{Msg: msg + " Another head ranks higher."}
	}
	return Check{Done: true, Msg: msg + " That is the head the answer's loss leans on most."}
}

// checkTopAttribution: by integrated gradients, the goal word has the largest attribution of the
// sentence's words ([CLS], [SEP] and [MASK] aside) for the guess explained.
func checkTopAttribution(a *App, goal string) Check {
	goal = strings.ToLower(strings.TrimSpace(goal))
	if len(a.Order) == 0 {
		return Check{Msg: "Mask a word: the task is about its guesses."}
	}
	w := whyShown(a)
	if w == nil || w.Attr.Attribution == nil {
		return pending
	}
	at := w.Attr.Attribution
	if at.Method != "ig" {
		return Check{Msg: "Choose integrated gradients."}
	}
	best := -1
	for i, tk := range w.Attr.Tokens {
		if i >= len(at.Scores) || (strings.HasPrefix(tk, "[") && strings.HasSuffix(tk, "]")) {
			continue
		}
		if best < 0 || at.Scores[i] > at.Scores[best] {
			best = i
		}
	}
	if best < 0 {
		return Check{Msg: "The sentence has no word besides the mask."}
	}
	tk := w.Attr.Tokens[best]
	msg := fmt.Sprintf("For “%s”, the word that raised it most is “%s” (%+.4g).", w.Word, tk, at.Scores[best])
	if w.Attr.Target.Kind != "mlm" {
		return Check{Msg: "Explain a guess for the masked word, not IsNext."}
	}
	return Check{Done: tk == goal, Msg: msg}
}

// OpenLessons is the Lessons tab: the first lesson whose task is not done yet (the last one
// when all are).
func (a *App) OpenLessons() {
	n := 1
	for n < len(Lessons) && a.LessonDone(n) {
		n++
	}
	a.OpenLesson(n, "")
}
