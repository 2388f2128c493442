//go:build !js

package browsertest

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/ui"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The lesson panel's verdict on its task, and whether the page counts the task done.
const (
	verdictJS    = `(document.querySelector('[data-role="lesson-check"]') || {textContent: ''}).textContent`
	lessonDoneJS = `document.querySelector('[data-role="lesson-task"]').dataset.done === '1'`
)

// lessonShown is true once lesson n is shown, the engine idle and the verdict computed.
func lessonShown(n int) string {
	return fmt.Sprintf(`!!document.querySelector('.lessonsview[data-lesson="%d"]') && `, n) + settled +
		` && !['', 'Computing…', 'Waiting for the model…'].includes(` + verdictJS + `)`
}

// goHash shows another state of the same page, as a link within the page does.
func goHash(t *testing.T, ctx context.Context, hash string) {
	t.Helper()
	do(t, ctx, 10*time.Second, "going to "+hash, chromedp.Evaluate[chromedp.Void](`location.hash = `+jsString(hash)))
}

// attempt waits for lesson n's verdict to say what (the state the attempt made) and checks
// that the page counts the task done or not, as want says.
func attempt(t *testing.T, ctx context.Context, n int, what string, want bool) string {
	t.Helper()
	wait(t, ctx, 60*time.Second, fmt.Sprintf("lesson %d's verdict %q", n, what), lessonShown(n)+` && `+verdictJS+`.includes(`+jsString(what)+`)`)
	verdict := eval[string](t, ctx, verdictJS)
	if got := eval[bool](t, ctx, lessonDoneJS); got != want {
		t.Errorf("lesson %d, %q: the page counts the task done = %v, want %v (verdict %q)", n, what, got, want, verdict)
	}
	return verdict
}

// checkHighlights checks that every part lesson n outlines exists, marked and outlined.
func checkHighlights(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for k, sel := range ui.Lessons[n-1].Highlight {
		js := fmt.Sprintf(`(() => { const el = document.querySelector('[data-lesson-highlight="%d"]'); return !!el && getComputedStyle(el).outlineStyle === 'solid' && el.getBoundingClientRect().width > 0; })()`, k+1)
		if !eval[bool](t, ctx, js) {
			t.Errorf("lesson %d: its highlighted part %d (%s) is not on the page, or not outlined", n, k+1, sel)
		}
	}
}

// typeText replaces the text of the box sel and commits it with Enter, as a user does.
func typeText(t *testing.T, ctx context.Context, sel, text string) {
	t.Helper()
	do(t, ctx, 30*time.Second, "typing into "+sel,
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).select()`),
		chromedp.SendKeys(chromedp.CSS(sel), text),
		chromedp.KeyEvent(kb.Enter))
}

func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	do(t, ctx, 10*time.Second, "clicking "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// headStat is one head's statistic, computed here from the native attention [S, S] and tokens.
type headStat func(p [][]float32, tokens []string) float64

// bestTwoHeads returns, natively, the head with the highest statistic and one without it,
// with the margin between the best and the runner-up.
func bestTwoHeads(t *testing.T, f *folder, text string, stat headStat) (best, other [2]int, margin float64) {
	t.Helper()
	type hs struct {
		l, h int
		s    float64
	}
	var all []hs
	for l := range f.Model.Config.NumHiddenLayers {
		r, err := pipeline.Attention(f.Model, f.Tok, text, nil, l)
		if err != nil {
			t.Fatal(err)
		}
		for h, p := range r.Attentions {
			all = append(all, hs{l, h, stat(p, r.Tokens)})
		}
	}
	slices.SortFunc(all, func(a, b hs) int { return -cmpFloat(a.s, b.s) })
	return [2]int{all[0].l, all[0].h}, [2]int{all[len(all)-1].l, all[len(all)-1].h}, all[0].s - all[1].s
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestLessons opens every lesson from its URL, checks that the parts it outlines exist and
// makes one failing and one solving attempt at its task, as a user would (typing, clicking).
// The page loads the random Tiny fixture model (seed 4), standing in for the built-in
// pre-trained model until it lands, so every solving input is found natively here from that
// model, never written in: the head with the highest statistic (lessons 3, 4, 9) from
// pipeline.Attention with the statistic computed in this file; the second "the" and the
// pieces of a word from the tokenizer; a seed with and one without a random replacement from
// lab.MaskLab; a next-sentence threshold between two sentences B from
// pipeline.NextSentence (a random model's NSP head moves by hundredths of a percent, so the
// goal "NotNext@p" sets p between them); a token that enters the top 3 for one sentence and is
// not in the top 3 of the lesson's own from pipeline.FillMask; and a fine-tuning run's test
// accuracy from the same run done natively (lab.NewFinetune), with the goal just above it
// (fails) and just below it (solved). It also checks the landing of a first visit (lesson 1),
// the keys that move between lessons, the progress kept in localStorage and the landing of a
// returning user (where they were).
func TestLessons(t *testing.T) {
	c, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	chrome(t)
	model := randomModel(t, c, 4)
	dir := site(t, map[string]*folder{"tiny-random": model})
	base := serve(t, dir)
	ctx := browser(t)
	lesson := func(n int) ui.Lesson { return ui.Lessons[n-1] }

	// A first visit lands on lesson 1.
	do(t, ctx, 30*time.Second, "opening the page", chromedp.Navigate(base))
	wait(t, ctx, 60*time.Second, "lesson 1", `document.querySelector('.app[data-loaded]') && `+lessonShown(1))
	if h := eval[string](t, ctx, `location.hash`); !strings.HasPrefix(h, "#lessons/1?") {
		t.Errorf("a first visit should land on lesson 1, the URL says %q", h)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.lessondot').length`); n != len(ui.Lessons) {
		t.Errorf("the lesson panel lists %d lessons, want %d", n, len(ui.Lessons))
	}

	// A new user's walk from lesson 1 to the last with the ] key (and PageDown), a screenshot of
	// each as it opens; [ and PageUp go back. The arrow keys do not move between lessons (they
	// belong to the views).
	do(t, ctx, 10*time.Second, "leaving the text box", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	for n := 1; n <= len(ui.Lessons); n++ {
		wait(t, ctx, 60*time.Second, fmt.Sprintf("lesson %d on the walk", n), lessonShown(n)+fmt.Sprintf(` && location.hash.startsWith('#lessons/%d?')`, n))
		checkHighlights(t, ctx, n)
		screenshot(t, ctx, fmt.Sprintf("walk-%02d", n))
		key := "]"
		if n%2 == 0 {
			key = kb.PageDown
		}
		do(t, ctx, 10*time.Second, "the next lesson's key", chromedp.KeyEvent(key))
	}
	wait(t, ctx, 30*time.Second, "the last lesson still", lessonShown(len(ui.Lessons)))
	do(t, ctx, 10*time.Second, "pressing an arrow, [ and PageUp", chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent("["), chromedp.KeyEvent(kb.PageUp))
	wait(t, ctx, 30*time.Second, "two lessons back", lessonShown(len(ui.Lessons)-2)+fmt.Sprintf(` && location.hash.startsWith('#lessons/%d?')`, len(ui.Lessons)-2))

	// 1. Words to tokens: a sentence without, then with, a word of 3 or more pieces.
	pieces := func(text string) int { // the most tokens of one word, from the tokenizer
		enc, err := model.Tok.Encode(text, 0)
		if err != nil {
			t.Fatal(err)
		}
		most, run := 0, 0
		for _, tk := range enc.Tokens {
			if strings.HasPrefix(tk, "##") {
				run++
			} else {
				run = 1
			}
			most = max(most, run)
		}
		return most
	}
	fail1, solve1 := "The cat sat on the mat.", "The hippopotamus yawned."
	if pieces(fail1) >= 3 || pieces(solve1) < 3 {
		t.Fatalf("the tokenizer cuts %q into words of up to %d pieces and %q up to %d: pick other sentences", fail1, pieces(fail1), solve1, pieces(solve1))
	}
	goHash(t, ctx, "#lessons/1")
	wait(t, ctx, 30*time.Second, "lesson 1 from its URL", lessonShown(1))
	checkHighlights(t, ctx, 1)
	typeText(t, ctx, "#text", fail1)
	attempt(t, ctx, 1, fmt.Sprintf(", %d (", pieces(fail1)), false)
	typeText(t, ctx, "#text", solve1)
	attempt(t, ctx, 1, fmt.Sprintf(", %d (", pieces(solve1)), true)
	screenshot(t, ctx, "lesson-1")

	// 2. Embeddings: the second "the", found in the tokens.
	enc, err := model.Tok.Encode(lesson(2).Start.Text, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := slices.Index(enc.Tokens, lesson(2).Goal)
	second := first + 1 + slices.Index(enc.Tokens[first+1:], lesson(2).Goal)
	if first < 0 || second <= first {
		t.Fatalf("%q has no second %q: %v", lesson(2).Start.Text, lesson(2).Goal, enc.Tokens)
	}
	other := first + 1
	goHash(t, ctx, "#lessons/2")
	wait(t, ctx, 30*time.Second, "lesson 2 from its URL", lessonShown(2)+` && document.querySelector('.stepcard')`)
	checkHighlights(t, ctx, 2)
	click(t, ctx, fmt.Sprintf(`.steptokens button[data-token="%d"]`, other))
	attempt(t, ctx, 2, fmt.Sprintf("“%s” at position %d", enc.Tokens[other], other), false)
	click(t, ctx, fmt.Sprintf(`.steptokens button[data-token="%d"]`, second))
	attempt(t, ctx, 2, fmt.Sprintf("Position %d is the second", second), true)
	screenshot(t, ctx, "lesson-2")

	// 3 and 4: the head with the highest statistic, computed here.
	q, k, _ := strings.Cut(lesson(3).Goal, " ")
	heads := []struct {
		n    int
		stat headStat
	}{
		{3, func(p [][]float32, tokens []string) float64 {
			i, j := slices.Index(tokens, q), slices.Index(tokens, k)
			return float64(p[i][j])
		}},
		{4, func(p [][]float32, _ []string) float64 { // mean weight on the previous token, [CLS] and the last [SEP] rows left out
			s := 0.0
			for i := 1; i < len(p)-1; i++ {
				s += float64(p[i][i-1])
			}
			return s / float64(len(p)-2)
		}},
	}
	for _, hd := range heads {
		best, worst, margin := bestTwoHeads(t, model, lesson(hd.n).Start.Text, hd.stat)
		t.Logf("lesson %d: natively the best head is layer %d head %d, by %.2g over the next", hd.n, best[0], best[1], margin)
		if margin < 1e-5 {
			t.Fatalf("lesson %d: the best two heads differ by %.2g only: the browser's rounding could swap them", hd.n, margin)
		}
		goHash(t, ctx, fmt.Sprintf("#lessons/%d", hd.n))
		wait(t, ctx, 30*time.Second, fmt.Sprintf("lesson %d from its URL", hd.n), lessonShown(hd.n)+` && document.querySelectorAll('.thumb canvas').length > 0`)
		checkHighlights(t, ctx, hd.n)
		click(t, ctx, fmt.Sprintf(`.thumb[data-layer="%d"][data-head="%d"]`, worst[0], worst[1]))
		attempt(t, ctx, hd.n, fmt.Sprintf("Layer %d, head %d:", worst[0], worst[1]), false)
		click(t, ctx, fmt.Sprintf(`.thumb[data-layer="%d"][data-head="%d"]`, best[0], best[1]))
		attempt(t, ctx, hd.n, fmt.Sprintf("Found it: layer %d, head %d,", best[0], best[1]), true)
		screenshot(t, ctx, fmt.Sprintf("lesson-%d", hd.n))
	}

	// 5. Inside a layer: [CLS] at layer 0 is not the end; the last layer's last step is.
	goHash(t, ctx, "#lessons/5")
	wait(t, ctx, 30*time.Second, "lesson 5 from its URL", lessonShown(5)+` && document.querySelector('.stepcard')`)
	checkHighlights(t, ctx, 5)
	click(t, ctx, `.steptokens button[data-token="0"]`)
	attempt(t, ctx, 5, "“[CLS]”, layer 0", false)
	for range c.NumHiddenLayers - 1 {
		click(t, ctx, `[data-step="layer-next"]`)
	}
	click(t, ctx, fmt.Sprintf(`[data-stepi="%d"]`, ui.NumSteps-1))
	attempt(t, ctx, 5, "This is [CLS] as the last layer", true)
	screenshot(t, ctx, "lesson-5")

	// 6. Masked-LM pre-training: a seed without and one with a random replacement.
	seedWith, seedWithout := -1, -1
	for s := 0; s < 500 && (seedWith < 0 || seedWithout < 0); s++ {
		r, err := lab.MaskLab(model.Tok, lesson(6).Start.Text, c.MaxPositionEmbeddings, uint64(s), false)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(r.Kinds, engine.KindRandom) {
			seedWith = max(seedWith, s)
		} else {
			seedWithout = max(seedWithout, s)
		}
	}
	if seedWith < 0 || seedWithout < 0 {
		t.Fatalf("no seed with (%d) or without (%d) a random replacement in 500", seedWith, seedWithout)
	}
	setSeed := func(s int) {
		do(t, ctx, 10*time.Second, "setting the seed", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const el = document.querySelector('#seed'); el.value = '%d'; el.dispatchEvent(new Event('change', {bubbles: true})); })()`, s)))
	}
	goHash(t, ctx, "#lessons/6")
	wait(t, ctx, 30*time.Second, "lesson 6 from its URL", lessonShown(6))
	checkHighlights(t, ctx, 6)
	setSeed(seedWithout)
	attempt(t, ctx, 6, fmt.Sprintf("Seed %d:", seedWithout), false)
	setSeed(seedWith)
	attempt(t, ctx, 6, fmt.Sprintf("Seed %d:", seedWith), true)
	screenshot(t, ctx, "lesson-6")

	// 7. Next-sentence prediction: a threshold between two sentences B, found natively.
	a7 := lesson(7).Start.Text
	var lo, hi string
	loP, hiP := 2.0, -1.0
	for _, b := range []string{"He bought a gallon of milk.", "Penguins are flightless birds.", "It rained all day.", "The store was closed.",
		"Paris is the capital of France.", "She sang a song.", "Dogs bark at night.", "The price of milk went up."} {
		r, err := pipeline.NextSentence(model.Model, model.Tok, a7, b)
		if err != nil {
			t.Fatal(err)
		}
		if r.NotNext < loP {
			lo, loP = b, r.NotNext
		}
		if r.NotNext > hiP {
			hi, hiP = b, r.NotNext
		}
	}
	t.Logf("lesson 7: natively NotNext %.6f for %q, %.6f for %q", loP, lo, hiP, hi)
	if hiP-loP < 4e-5 {
		t.Fatalf("lesson 7: NotNext spans %.2g only over the sentences tried", hiP-loP)
	}
	goHash(t, ctx, fmt.Sprintf("#lessons/7?goal=NotNext@%.8f", (loP+hiP)/2))
	wait(t, ctx, 30*time.Second, "lesson 7 from its URL", lessonShown(7))
	checkHighlights(t, ctx, 7)
	typeText(t, ctx, "#textb", lo)
	wait(t, ctx, 30*time.Second, "sentence B in the URL", `decodeURIComponent(location.hash).includes(`+jsString("b="+lo)+`)`)
	attempt(t, ctx, 7, "IsNext", false)
	typeText(t, ctx, "#textb", hi)
	wait(t, ctx, 30*time.Second, "sentence B in the URL", `decodeURIComponent(location.hash).includes(`+jsString("b="+hi)+`)`)
	attempt(t, ctx, 7, "IsNext", true)
	screenshot(t, ctx, "lesson-7")

	// 9 and 10 ask the engine's explanations, natively, of the lessons' masked sentences.
	eng, err := engine.New("tiny-random", model.Model, model.Tok)
	if err != nil {
		t.Fatal(err)
	}
	maskedText := func(l ui.Lesson) string {
		words := strings.Fields(strings.TrimSuffix(l.Start.Text, "."))
		words[l.Start.Masks[0]] = "[MASK]"
		return strings.Join(words, " ") + "."
	}

	// 9. What the heads do: the head the guess's loss leans on most, and another, found natively.
	text9 := maskedText(lesson(9))
	imp, err := eng.Importance(explain.Request{Text: text9})
	if err != nil {
		t.Fatal(err)
	}
	var ranks []explain.Head
	for l, row := range imp.Importance.Raw {
		for h := range row {
			ranks = append(ranks, explain.Head{Layer: l, Head: h})
		}
	}
	score := func(h explain.Head) float64 { return imp.Importance.Raw[h.Layer][h.Head] }
	slices.SortFunc(ranks, func(x, y explain.Head) int { return cmpFloat(score(y), score(x)) })
	best9, other9 := ranks[0], ranks[len(ranks)-1]
	t.Logf("lesson 9: natively head %v ranks first (%.4g), %v last (%.4g), the runner-up %.4g", best9, score(best9), other9, score(other9), score(ranks[1]))
	if score(best9)-score(ranks[1]) < 1e-3*score(best9) {
		t.Fatal("lesson 9: the first two heads' importance is too close: the browser's rounding could swap them")
	}
	headSel := func(h explain.Head) string {
		return fmt.Sprintf(`button.hcell[data-layer="%d"][data-head="%d"]`, h.Layer, h.Head)
	}
	goHash(t, ctx, "#lessons/9")
	wait(t, ctx, 60*time.Second, "lesson 9 from its URL", lessonShown(9)+` && document.querySelectorAll('button.hcell').length > 0`)
	checkHighlights(t, ctx, 9)
	click(t, ctx, `button[data-role="rank-heads"]`)
	wait(t, ctx, 30*time.Second, "the heads ranked", settled+` && document.querySelector('button.hcell').dataset.importance`)
	click(t, ctx, headSel(other9))
	attempt(t, ctx, 9, "Another head ranks higher", false)
	click(t, ctx, headSel(other9)) // back on
	click(t, ctx, headSel(best9))
	attempt(t, ctx, 9, fmt.Sprintf("Head %s off:", best9), true)
	screenshot(t, ctx, "lesson-9")

	// 10. Why this prediction: a word that integrated gradients credit most for one guess and not
	// for another, found natively.
	text10 := maskedText(lesson(10))
	lens, err := eng.Lens(explain.Request{Text: text10})
	if err != nil {
		t.Fatal(err)
	}
	lastLayer := lens.Lens.Positions[0].Layers[len(lens.Lens.Positions[0].Layers)-1].Top
	topWord := func(guess string) (string, float64) {
		rep, err := eng.Attributions(explain.Request{Text: text10, Target: guess, Method: explain.MethodIG, Steps: lesson(10).Start.IGSteps})
		if err != nil {
			t.Fatal(err)
		}
		best, second := -1, -1
		for i, tk := range rep.Tokens {
			if strings.HasPrefix(tk, "[") {
				continue
			}
			sc := rep.Attribution.Scores
			switch {
			case best < 0 || sc[i] > sc[best]:
				best, second = i, best
			case second < 0 || sc[i] > sc[second]:
				second = i
			}
		}
		sc := rep.Attribution.Scores
		return rep.Tokens[best], (sc[best] - sc[second]) / (math.Abs(sc[best]) + 1e-9)
	}
	tops := map[string]string{}
	for _, p := range lastLayer {
		w, margin := topWord(p.Token)
		if margin > 1e-2 { // the browser's rounding cannot swap the first two words
			tops[p.Token] = w
		}
	}
	var goal10, solve10, fail10 string
	for g1, w1 := range tops {
		for g2, w2 := range tops {
			if w1 != w2 && goal10 == "" {
				goal10, solve10, fail10 = w1, g1, g2
			}
		}
	}
	t.Logf("lesson 10: natively the word credited most per guess %v; goal %q, solved by %q, not by %q", tops, goal10, solve10, fail10)
	if goal10 == "" {
		t.Fatal("lesson 10: every guess credits the same word most: pick another sentence")
	}
	goHash(t, ctx, "#lessons/10?goal="+url.QueryEscape(goal10))
	wait(t, ctx, 60*time.Second, "lesson 10 from its URL", lessonShown(10)+` && document.querySelectorAll('.attr').length > 0`)
	checkHighlights(t, ctx, 10)
	click(t, ctx, `button[data-target="`+fail10+`"]`)
	attempt(t, ctx, 10, "For “"+fail10+"”, the word that raised it most is “"+tops[fail10]+"”", false)
	click(t, ctx, `button[data-target="`+solve10+`"]`)
	attempt(t, ctx, 10, "For “"+solve10+"”, the word that raised it most is “"+goal10+"”", true)
	screenshot(t, ctx, "lesson-10")

	// 8. Fine-tuning: the test accuracy of the run, computed natively from the same run.
	req := engine.FinetuneRequest{Task: engine.TaskSentiment, Epochs: 1, LR: 0.001, BatchSize: 64, Seed: 1}
	ft, err := lab.NewFinetune(model.Model, model.Tok, req)
	if err != nil {
		t.Fatal(err)
	}
	acc := math.NaN()
	for !ft.Done() {
		evs, err := ft.Advance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if a, ok := ev.Metrics["accuracy"]; ok {
				acc = a
			}
		}
	}
	if math.IsNaN(acc) {
		t.Fatal("the native run reported no test accuracy")
	}
	t.Logf("lesson 8: natively the run reaches test accuracy %.4f", acc)
	trainHash := func(goal float64) string {
		return fmt.Sprintf("#lessons/8?text=x&task=sentiment&epochs=1&lr=0.001&bs=64&goal=%.4f", goal)
	}
	goHash(t, ctx, trainHash(acc+0.005))
	wait(t, ctx, 30*time.Second, "lesson 8 from its URL", lessonShown(8)+` && document.querySelector('[data-role="train"]') && !document.querySelector('[data-role="train"]').disabled`)
	checkHighlights(t, ctx, 8)
	attempt(t, ctx, 8, "Press Train", false)
	click(t, ctx, `[data-role="train"]`)
	wait(t, ctx, 240*time.Second, "the end of the run", `document.querySelector('.trainview').dataset.state === 'done'`)
	attempt(t, ctx, 8, fmt.Sprintf("(goal %.1f%%)", 100*(acc+0.005)), false)
	goHash(t, ctx, trainHash(acc-0.005))
	attempt(t, ctx, 8, fmt.Sprintf("(goal %.1f%%)", 100*(acc-0.005)), true)
	screenshot(t, ctx, "lesson-8")

	// A view's tab leaves the lessons, and their outlines: the tab of the view the last lesson
	// drives, so that the outlined elements stay on the page.
	goHash(t, ctx, "#lessons/10")
	wait(t, ctx, 30*time.Second, "lesson 10 again", lessonShown(10)+` && document.querySelectorAll('[data-lesson-highlight]').length === 2`)
	click(t, ctx, `button[data-tab="why"]`)
	wait(t, ctx, 10*time.Second, "the Why? view without a lesson", `!document.querySelector('.lessonsview') && location.hash.startsWith('#why?') && document.querySelector('[data-role="why-targets"]') && document.querySelector('[data-role="attrs"]')`)
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-lesson-highlight]').length`); n != 0 {
		t.Errorf("after leaving the lessons %d parts of the view are still outlined", n)
	}
	click(t, ctx, `button[data-tab="lessons"]`)
	wait(t, ctx, 30*time.Second, "the Lessons tab: the last lesson, all being done", lessonShown(len(ui.Lessons)))

	// Progress stays; a returning user lands where they were.
	all := make([]string, len(ui.Lessons))
	for i := range all {
		all[i] = fmt.Sprint(i + 1)
	}
	if d := eval[string](t, ctx, `document.querySelector('.lessonsview').dataset.done`); d != strings.Join(all, ",") {
		t.Errorf("lessons done: %q, want all", d)
	}
	last := eval[string](t, ctx, `location.hash`)
	do(t, ctx, 30*time.Second, "coming back", chromedp.Navigate("about:blank"), chromedp.Navigate(base))
	wait(t, ctx, 60*time.Second, "the page again", `document.querySelector('.app[data-loaded]') && `+lessonShown(len(ui.Lessons)))
	if h := eval[string](t, ctx, `location.hash`); h != last {
		t.Errorf("a returning user should land where they were, %q; the page shows %q", last, h)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.lessondot.done').length`); n != len(ui.Lessons) {
		t.Errorf("after a reload %d lessons show as done, want %d", n, len(ui.Lessons))
	}
}

// TestLessonsPhone opens every view and every lesson on a 390 x 844 px screen (a phone) and
// checks that none scrolls sideways: the document is no wider than the screen. It takes a
// screenshot of each (phone-*.png) and, on failure, names the elements that stick out.
func TestLessonsPhone(t *testing.T) {
	_, _, dir := tinySite(t, 1)
	base := serve(t, dir)
	ctx := browser(t)
	const phoneWidth, phoneHeight = 390, 844
	do(t, ctx, 10*time.Second, "a phone's screen", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile))
	text := "The%20man%20went%20to%20the%20store%20to%20buy%20a%20gallon%20of%20milk."
	pages := []struct{ name, hash, ready string }{
		{"mask", "#mask?text=" + text + "&masks=4&b=He%20paid%20with%20cash.", `document.querySelectorAll('.card:not(.stale) .pred').length > 0`},
		{"attention", "#attention?text=" + text + "&layer=0&head=0", `document.querySelector('.heatmap canvas')`},
		{"attention-lines", "#attention?text=" + text + "&layer=0&head=0&show=lines", `document.querySelector('.headview canvas')`},
		{"steps", "#steps?text=" + text + "&layer=0&token=2&step=5", `document.querySelector('.stepcard')`},
		{"masking", "#masking?text=" + text + "&seed=1", `document.querySelector('.lab')`},
		{"embeddings", "#embeddings", `document.querySelector('.embmap canvas')`},
		{"why", "#why?text=" + text + "&masks=4&method=ig&igsteps=8&off=0.1", `document.querySelector('.lenschart canvas') && document.querySelectorAll('.attr').length > 0`},
		{"compare", "#compare?text=" + text + "&masks=4&c=The%20woman%20went%20to%20the%20[MASK]%20to%20buy%20a%20bag%20of%20rice%20today.&layer=1&head=1", `document.querySelector('.cmpmap canvas') && document.querySelectorAll('tr.cmprow').length > 0`},
		{"neuron", "#attention?text=" + text + "&layer=0&head=0&show=lines&query=2", `document.querySelector('.neuronview canvas')`},
		{"train", "#train?text=x&task=sentiment", `document.querySelector('[data-role="train"]')`},
		{"models", "#models", `document.querySelector('.modelcard')`},
	}
	for i := range ui.Lessons {
		pages = append(pages, struct{ name, hash, ready string }{fmt.Sprintf("lesson-%d", i+1), fmt.Sprintf("#lessons/%d", i+1), lessonShown(i + 1)})
	}
	for i, p := range pages {
		if i == 0 {
			do(t, ctx, 30*time.Second, "opening "+p.name, chromedp.Navigate(base+p.hash))
		} else {
			goHash(t, ctx, p.hash)
		}
		wait(t, ctx, 60*time.Second, p.name, `document.querySelector('.app[data-loaded]') && `+settled+` && `+p.ready)
		time.Sleep(200 * time.Millisecond) // the canvases size themselves after the render
		// A phone's browser widens its layout to content wider than the screen (then zooms out,
		// or scrolls): the document must stay within the 390 px.
		w := eval[float64](t, ctx, `Math.max(document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth)`)
		if w > phoneWidth {
			wide := eval[[]string](t, ctx, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > `+itoa(phoneWidth)+` + 0.5).slice(0, 12).map(e => e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`)
			t.Errorf("%s scrolls sideways on a %d px screen: the page is %.0f px wide; sticking out: %v", p.name, phoneWidth, w, wide)
		}
		screenshot(t, ctx, "phone-"+p.name)
	}
}
