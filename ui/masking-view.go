package ui

import (
	"fmt"
	"strconv"

	"github.com/bertlab/bertlab/core/engine"
)

// MaskingView is the "Masking lab": a text masked the BERT way with a seed, and next-sentence
// pairs from the sample corpus.
type MaskingView struct {
	App *App
}

func (c *MaskingView) srcClass(sample bool) string {
	if (c.App.Sample > 0) == sample {
		return "src active"
	}
	return "src"
}

func (c *MaskingView) sampleLabel() string {
	if len(c.App.Samples) == 0 {
		return fmt.Sprintf("sample %d", c.App.Sample)
	}
	return fmt.Sprintf("sample %d of %d", c.App.Sample, len(c.App.Samples))
}

func (c *MaskingView) seedText() string { return strconv.Itoa(c.App.Seed) }

func (c *MaskingView) kind(i int) string {
	if l := c.App.Lab; l != nil && i < len(l.Kinds) {
		return l.Kinds[i]
	}
	return ""
}

// tokClass colours a token by what masking did to it; the original row marks the chosen ones.
func (c *MaskingView) tokClass(i int, shown bool) string {
	switch k := c.kind(i); {
	case k == engine.KindSpecial:
		return "ltok special"
	case k == engine.KindKept:
		return "ltok"
	case shown:
		return "ltok k-" + k
	default:
		return "ltok chosen"
	}
}

func (c *MaskingView) kindTitle(i int) string {
	l := c.App.Lab
	switch c.kind(i) {
	case engine.KindMask:
		return "chosen: “" + l.Tokens[i] + "” became [MASK]; the model must predict it"
	case engine.KindRandom:
		return "chosen: “" + l.Tokens[i] + "” became a random token; the model must predict the original"
	case engine.KindSame:
		return "chosen, left unchanged: the model must still predict it"
	case engine.KindSpecial:
		return "special token: never chosen"
	}
	return "not chosen: no prediction here"
}

func (c *MaskingView) stats() string {
	l := c.App.Lab
	n := map[string]int{}
	for _, i := range l.Chosen {
		n[l.Kinds[i]]++
	}
	return fmt.Sprintf("%d maskable tokens → 15%% rounds to %d chosen (positions %v): %d [MASK], %d random, %d unchanged. Seed %d%s.",
		l.Maskable, l.NumToPredict, l.Chosen, n[engine.KindMask], n[engine.KindRandom], n[engine.KindSame], l.Seed, wholeNote(l.WholeWord))
}

func wholeNote(ww bool) string {
	if ww {
		return ", whole words: a word's ## pieces are chosen together"
	}
	return ", single pieces"
}

func (c *MaskingView) pairClass(next bool) string {
	if next {
		return "nsp isnext"
	}
	return "nsp notnext"
}

func (c *MaskingView) badgeClass(next bool) string {
	if next {
		return "nspbadge isnext"
	}
	return "nspbadge notnext"
}

func (c *MaskingView) pairLabel(next bool) string {
	if next {
		return "IsNext"
	}
	return "NotNext"
}

func (c *MaskingView) segClass(seg int, tok string) string {
	cls := "ltok seg" + strconv.Itoa(seg)
	if tok == "[CLS]" || tok == "[SEP]" {
		cls += " special"
	}
	return cls
}
