package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vugu/vugu"
)

// FamilyReplaced is "Replaced?": ELECTRA's discriminator on the sentence, each token's
// probability of having been replaced as a bar, and swapping a word to see the bars move.
type FamilyReplaced struct {
	App *App
}

// probs are the discriminator's probabilities for the tokens of the words shown (nil while
// they are computed).
func (c *FamilyReplaced) probs() []float32 {
	a := c.App
	f := a.fam()
	if f.Rep == nil || f.RepKey != inputKey(a.Text, a.TextB) || len(f.Rep.Replaced) != len(a.tokensShown()) {
		return nil
	}
	return f.Rep.Replaced
}

func (c *FamilyReplaced) ready() bool { return c.probs() != nil }

func (c *FamilyReplaced) setDraft(e vugu.DOMEvent) { c.App.Fam.Draft = e.PropString("target", "value") }

// tokensShown are the tokens of the words the view draws.
func (a *App) tokensShown() []string {
	if a.Tok == nil {
		return nil
	}
	return a.Tok.Tokens
}

func (c *FamilyReplaced) headsNote() string {
	if len(c.App.Info.Heads) == 0 {
		return " (it has no heads at all)"
	}
	return " (its heads: " + strings.Join(c.App.Info.Heads, ", ") + ")"
}

// exampleNext reports whether the paper's sentence is shown and not yet swapped.
func (c *FamilyReplaced) exampleNext() bool {
	return c.App.Text == ReplacedExample.Text && c.App.Fam.Before == nil
}

func probAt(p []float32, i int) (float64, bool) {
	if i < 0 || i >= len(p) {
		return 0, false
	}
	return float64(p[i]), true
}

func (c *FamilyReplaced) prob(i int) string {
	if p, ok := probAt(c.probs(), i); ok {
		return fmt.Sprintf("%.2f", p)
	}
	return ""
}

func (c *FamilyReplaced) probAttr(i int) string {
	if p, ok := probAt(c.probs(), i); ok {
		return fmt.Sprintf("%.6f", p)
	}
	return ""
}

// rtdBar is a bar's style: its height and colour the probability p (white to red).
func rtdBar(p float64) string {
	p = math.Min(math.Max(p, 0), 1)
	lerp := func(a, b float64) int { return int(a + (b-a)*p + 0.5) }
	return fmt.Sprintf("height: %.1f%%; background: rgb(%d, %d, %d)", 100*p, lerp(254, 165), lerp(224, 15), lerp(210, 21))
}

func (c *FamilyReplaced) barStyle(i int) string {
	p, _ := probAt(c.probs(), i)
	return rtdBar(p)
}

func (c *FamilyReplaced) tokClass(w Word) string {
	cls := "rtdcell"
	switch {
	case w.ID < 0:
		cls += " special"
	case slices.Contains(c.App.Fam.Swapped, w.ID):
		cls += " swapped"
	}
	if w.ID >= 0 && c.App.Fam.Pick == w.ID+1 {
		cls += " picked"
	}
	if w.Seg == 1 {
		cls += " segb"
	}
	return cls
}

func (c *FamilyReplaced) tokTitle(w Word, j int) string {
	p, _ := probAt(c.probs(), w.First+j)
	s := fmt.Sprintf("%s: replaced with probability %.4f", w.Pieces[j], p)
	if w.ID >= 0 {
		s += " · click to swap the word"
	}
	return s
}

func (c *FamilyReplaced) pickedText() string {
	w, ok := c.App.PickedWord()
	if !ok {
		return ""
	}
	return w.Text
}

// suggestions are replacements offered for the picked word: the paper's for its example, a
// few that rarely fit, and the sentence's other words.
func (c *FamilyReplaced) suggestions() []string {
	w, ok := c.App.PickedWord()
	if !ok {
		return nil
	}
	var out []string
	add := func(s string) {
		if s != "" && !strings.EqualFold(s, w.Text) && !slices.Contains(out, s) && len(out) < 10 {
			out = append(out, s)
		}
	}
	if strings.EqualFold(w.Text, ReplacedExample.Word) {
		add(ReplacedExample.With)
	}
	for _, s := range []string{"ate", "car", "blue", "quickly", "the", "sang"} {
		add(s)
	}
	for _, o := range c.App.Words {
		if o.ID >= 0 && o.ID != w.ID {
			add(strings.ToLower(o.Text))
		}
	}
	return out
}

func (c *FamilyReplaced) keydown(e vugu.DOMEvent) {
	switch e.PropString("key") {
	case "Enter":
		e.PreventDefault()
		c.App.Swap(c.App.Fam.Draft)
	case "Escape":
		c.App.PickSwap(-1)
	}
}

func (c *FamilyReplaced) beforeProbs() []float32 {
	if b := c.App.Fam.Before; b != nil {
		return b.Replaced
	}
	return nil
}

func (c *FamilyReplaced) beforeProb(i int) string {
	if p, ok := probAt(c.beforeProbs(), i); ok {
		return fmt.Sprintf("%.2f", p)
	}
	return ""
}

func (c *FamilyReplaced) beforeAttr(i int) string {
	if p, ok := probAt(c.beforeProbs(), i); ok {
		return fmt.Sprintf("%.6f", p)
	}
	return ""
}

func (c *FamilyReplaced) beforeBar(i int) string {
	p, _ := probAt(c.beforeProbs(), i)
	return rtdBar(p)
}

func (c *FamilyReplaced) beforeClass(w Word) string {
	cls := "rtdcell"
	switch {
	case w.ID < 0:
		cls += " special"
	case slices.Contains(c.App.Fam.Swapped, w.ID):
		cls += " swapped"
	}
	return cls
}
