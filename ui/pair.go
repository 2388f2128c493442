package ui

import (
	"slices"
	"strings"
	"time"

	"github.com/vugu/vugu"
)

// Sentence B: BERT reads two segments, [CLS] A [SEP] B [SEP], the second with token type 1.
// The mask and attention views take an optional sentence B; its words are masked by click as
// A's are, and the mask view shows the next-sentence prediction of the pair.

// PairWordBase is added to the word ids of sentence B, so that the words of both sentences
// share one id space (masks, predictions and cards are keyed by word id): word w of B is
// PairWordBase+w. Sentence A never has this many words within a model's positions.
const PairWordBase = 100000

// Segment filters of the attention view with a pair: which token types the rows (the tokens
// that attend) and the columns (the tokens attended to) keep. A is token type 0 ([CLS],
// sentence A, [SEP]), B token type 1 (sentence B, [SEP]).
const (
	SegAll = ""
	SegAA  = "aa"
	SegAB  = "ab"
	SegBA  = "ba"
	SegBB  = "bb"
)

// Segs lists the filters in the order the view offers them.
var Segs = []string{SegAll, SegAA, SegAB, SegBA, SegBB}

// segTypes returns the token types a filter keeps in the rows and the columns; -1 keeps all.
func segTypes(seg string) (row, col int) {
	if len(seg) != 2 {
		return -1, -1
	}
	t := func(c byte) int {
		if c == 'b' {
			return 1
		}
		return 0
	}
	return t(seg[0]), t(seg[1])
}

// segLabel is how a filter reads on its button: "A→B".
func segLabel(seg string) string {
	if seg == SegAll {
		return "All"
	}
	return strings.ToUpper(seg[:1]) + "→" + strings.ToUpper(seg[1:])
}

// SegWords returns the words of one segment (0: sentence A, 1: sentence B), specials included.
func SegWords(words []Word, seg int) []Word {
	var out []Word
	for _, w := range words {
		if w.Seg == seg {
			out = append(out, w)
		}
	}
	return out
}

// splitMasks splits the page's masks into sentence A's word ids and sentence B's, the latter
// counted within B (as the URL carries them).
func splitMasks(masks []int) (a, b []int) {
	for _, m := range masks {
		if m >= PairWordBase {
			b = append(b, m-PairWordBase)
		} else {
			a = append(a, m)
		}
	}
	return a, b
}

// joinMasks is the inverse of splitMasks.
func joinMasks(a, b []int) []int {
	out := slices.Clone(a)
	for _, m := range b {
		out = append(out, m+PairWordBase)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// inputKey names what the engine read: the masked sentence A, and B when there is one.
func inputKey(maskedA, maskedB string) string {
	if maskedB == "" {
		return maskedA
	}
	return maskedA + "\x00" + maskedB
}

// Pair is sentence B as the engine reads it: "" when the box is empty (or only spaces).
func (a *App) Pair() string {
	if strings.TrimSpace(a.TextB) == "" {
		return ""
	}
	return a.TextB
}

// InputKey names the text the views currently show (the masked pair).
func (a *App) InputKey() string { return inputKey(a.MaskedText, a.MaskedB) }

// HasNSP reports whether the loaded model has the next-sentence head (and the pooler it reads).
func (a *App) HasNSP() bool {
	return a.Info != nil && slices.Contains(a.Info.Heads, "nsp") && slices.Contains(a.Info.Heads, "pooler")
}

// TypedB takes sentence B's box as the user types; the views follow once typing pauses.
func (a *App) TypedB(text string) {
	a.DraftB = text
	a.typingB++
	n := a.typingB
	if a.Env == nil {
		a.CommitB()
		return
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		a.Do(func() {
			if n == a.typingB {
				a.CommitB()
			}
		})
	}()
}

// CommitB makes sentence B's box the second segment. B's masks are cleared: they name words
// of the old sentence B.
func (a *App) CommitB() {
	a.typingB++
	a.DraftB = strings.TrimRight(a.DraftB, "\r\n")
	if a.DraftB == a.TextB {
		return
	}
	masksA, _ := splitMasks(a.Masks)
	a.TextB, a.Masks = a.DraftB, masksA
	a.PairNSP, a.PairNSPKey = nil, ""
	a.refresh()
}

// SetSeg restricts the attention maps to the rows and columns of one segment each (Segs).
func (a *App) SetSeg(seg string) {
	if !slices.Contains(Segs, seg) {
		return
	}
	a.Seg = seg
	a.writeRoute()
}

// SetHeadView shows the head view (lines between two columns of tokens) in place of the
// large heatmap, or the heatmap again.
func (a *App) SetHeadView(on bool) {
	a.HeadView = on
	a.writeRoute()
	a.fetchNeuron()
}

// SetAllHeads overlays every head of the layer in the head view, or shows the selected one.
func (a *App) SetAllHeads(all bool) {
	a.AllHeads = all
	a.writeRoute()
	a.fetchNeuron()
}

// keydownB commits sentence B's box on Enter (Shift+Enter still starts a new line).
func (c *Root) keydownB(e vugu.DOMEvent) {
	if e.PropString("key") == "Enter" && !e.PropBool("shiftKey") {
		e.PreventDefault()
		c.App.CommitB()
	}
}

// showsPair reports whether the view reads sentence B.
func (c *Root) showsPair() bool {
	return c.App.View == ViewMask || c.App.View == ViewAttention
}

// setPairRoute takes sentence B, its masks and the attention view's pair settings from r.
func (a *App) setPairRoute(r Route) {
	a.TextB, a.DraftB = r.Pair, r.Pair
	a.Masks = joinMasks(r.Masks, r.PairMasks)
	a.Seg, a.HeadView, a.AllHeads = r.Seg, r.HeadView, r.AllHeads
	a.NeuronQuery = r.NeuronQuery
}

// pairRoute writes sentence B, its masks and the attention view's pair settings into r.
func (a *App) pairRoute(r *Route) {
	r.Masks, r.PairMasks = splitMasks(a.Masks)
	r.Pair, r.Seg, r.HeadView, r.AllHeads = a.Pair(), a.Seg, a.HeadView, a.AllHeads
	if a.HeadView && !a.AllHeads {
		r.NeuronQuery = a.NeuronQuery
	}
}
