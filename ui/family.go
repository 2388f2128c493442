package ui

import (
	"fmt"
	"strings"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
)

// ViewReplaced is "Replaced?": ELECTRA's discriminator on the sentence, a bar per token.
const ViewReplaced = "replaced"

// FamilyEngine is what the page asks of the engine for the family views: ELECTRA's
// replaced-token detection and DeBERTa's split attention (core/engine's methods of those names).
type FamilyEngine interface {
	// Replaced is each token's probability of having been replaced (pipeline.ReplacedTokens).
	Replaced(text, pair string) (*pipeline.ReplacedResult, error)
	// AttentionParts is one layer's attention scores split into c2c, c2p and p2c
	// (pipeline.AttentionParts).
	AttentionParts(text, pair string, layer int) (*pipeline.AttentionPartsResult, error)
}

// FamilyCard is the engine's description of the loaded model's family (engine.DescribeFamily).
type FamilyCard = engine.FamilyCard

// FamilyLab is the state of the family views: the "Replaced?" view's answers and swaps, and the
// attention view's split of DeBERTa's scores.
type FamilyLab struct {
	// Rep is the discriminator's answer for RepKey (the text and pair it read).
	Rep    *pipeline.ReplacedResult
	RepKey string
	RepErr string
	repReq int
	// Before is the answer for the sentence as it was before the user's first swap, with its
	// words; nil before any swap. Swapped are the word ids swapped since, SwapText the text they
	// made (typing another sentence starts over).
	Before      *pipeline.ReplacedResult
	BeforeWords []Word
	Swapped     []int
	SwapText    string
	// Pick is the word id being swapped plus one (0: none); Draft the replacement typed.
	Pick  int
	Draft string

	// Parts is the attention view's split of the selected layer's scores for PartsKey.
	Parts    *pipeline.AttentionPartsResult
	PartsKey string
	PartsErr string
	partsReq int
	partsGen int // bumped with every new Parts: the canvases redraw when it changes

	info *ModelInfo // the model the answers are of
}

// fam is the family views' state for the loaded model: answers of another model are dropped.
func (a *App) fam() *FamilyLab {
	if a.Fam.info != a.Info {
		a.Fam = FamilyLab{info: a.Info, partsGen: a.Fam.partsGen + 1}
	}
	return &a.Fam
}

// famEngine is the engine's family questions; nil when the engine lacks them.
func (a *App) famEngine() FamilyEngine {
	fe, _ := a.Eng.(FamilyEngine)
	return fe
}

// Card is the loaded model's family card (nil before a load, or from an engine without one).
func (a *App) Card() *FamilyCard {
	if a.Info == nil {
		return nil
	}
	return a.Info.Family
}

// HasRTD reports whether the loaded model has ELECTRA's replaced-token head.
func (a *App) HasRTD() bool {
	return a.Info != nil && strings.Contains(" "+strings.Join(a.Info.Heads, " ")+" ", " rtd ")
}

// SplitTerms are the terms of the attention scores that the attention view can show apart
// (DeBERTa: c2c, c2p, p2c); nil for a model whose scores are one term.
func (a *App) SplitTerms() []string {
	if c := a.Card(); c != nil && len(c.ScoreTerms) > 1 {
		return c.ScoreTerms
	}
	return nil
}

// SharedLayerNote says, for a model whose blocks share their weights (ALBERT), which weights
// block l runs; "" for every other model.
func (a *App) SharedLayerNote(l int) string {
	c := a.Card()
	if c == nil || c.DistinctLayers >= c.Blocks || l < 0 || l >= len(c.LayerOf) {
		return ""
	}
	g := c.LayerOf[l]
	var same []string
	for b, x := range c.LayerOf {
		if x == g && b != l {
			same = append(same, fmt.Sprint(b))
		}
	}
	if c.DistinctLayers == 1 {
		return fmt.Sprintf("Every layer of this %s is the same weights: its %d layers all run layer group 0, one set of attention and feed-forward weights applied %d times. Layer %d differs from the others only in its input, the output of the layer before.",
			c.Name, c.Blocks, c.Blocks, l)
	}
	also := "which no other layer runs"
	switch len(same) {
	case 0:
	case 1:
		also = "shared with layer " + same[0]
	default:
		also = "shared with layers " + strings.Join(same, ", ")
	}
	return fmt.Sprintf("This %s shares weights across depth: its %d layers run %d layer groups, and layer %d runs group %d, %s. Layers of one group differ only in their input.",
		c.Name, c.Blocks, c.DistinctLayers, l, g, also)
}

// repInput is the text and pair the "Replaced?" view reads: the sentence as written (masks
// belong to the mask view).
func (a *App) repInput() (text, pair, key string) {
	return a.Text, a.TextB, inputKey(a.Text, a.TextB)
}

// fetchReplaced asks the discriminator about the current sentence when the "Replaced?" view
// shows and has no answer for it.
func (a *App) fetchReplaced() {
	fe := a.famEngine()
	if !a.Loaded || a.View != ViewReplaced || fe == nil || !a.HasRTD() {
		return
	}
	a.fam()
	text, pair, key := a.repInput()
	if a.Fam.SwapText != "" && key != a.Fam.SwapText {
		// A sentence of the user's own, not a swap: start over.
		a.Fam.Before, a.Fam.BeforeWords, a.Fam.Swapped, a.Fam.SwapText = nil, nil, nil, ""
	}
	if a.Fam.Rep != nil && a.Fam.RepKey == key {
		return
	}
	a.Fam.repReq++
	n := a.Fam.repReq
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		r, err := fe.Replaced(text, pair)
		a.Do(func() {
			if n != a.Fam.repReq {
				return
			}
			if err != nil {
				a.Fam.RepErr = err.Error()
				return
			}
			a.Fam.Rep, a.Fam.RepKey, a.Fam.RepErr = r, key, ""
		})
	})
}

// PickSwap opens the swap box for word id (again: closes it).
func (a *App) PickSwap(id int) {
	if id < 0 || a.Fam.Pick == id+1 {
		a.Fam.Pick = 0
		return
	}
	a.Fam.Pick, a.Fam.Draft = id+1, ""
}

// PickedWord is the word being swapped.
func (a *App) PickedWord() (Word, bool) {
	if a.Fam.Pick == 0 {
		return Word{}, false
	}
	return WordByID(a.Words, a.Fam.Pick-1)
}

// Swap replaces the picked word with the first word of with, keeping the answer for the
// sentence before the first swap, and asks the discriminator about the new sentence.
func (a *App) Swap(with string) {
	w, ok := a.PickedWord()
	fields := strings.Fields(with)
	if !ok || len(fields) == 0 {
		return
	}
	word := fields[0]
	if a.Fam.Before == nil && a.Fam.Rep != nil && a.Fam.RepKey == inputKey(a.Text, a.TextB) {
		a.Fam.Before, a.Fam.BeforeWords = a.Fam.Rep, a.Words
	}
	if w.Seg == 1 {
		a.TextB = ReplaceWord(a.TextB, w, word)
		a.DraftB = a.TextB
	} else {
		a.Text = ReplaceWord(a.Text, w, word)
		a.Draft = a.Text
	}
	if !containsInt(a.Fam.Swapped, w.ID) {
		a.Fam.Swapped = append(a.Fam.Swapped, w.ID)
	}
	a.Fam.SwapText = inputKey(a.Text, a.TextB)
	a.Fam.Pick, a.Fam.Draft = 0, ""
	a.refresh()
}

// UndoSwaps puts the sentence back as it was before the first swap.
func (a *App) UndoSwaps() {
	if a.Fam.Before == nil {
		return
	}
	// The words of the answer before the swaps spell that sentence back.
	text, pair := wordsText(a.Fam.BeforeWords)
	a.Fam.Before, a.Fam.BeforeWords, a.Fam.Swapped, a.Fam.SwapText = nil, nil, nil, ""
	if text != "" {
		a.Text, a.Draft = text, text
		a.TextB, a.DraftB = pair, pair
	}
	a.refresh()
}

// wordsText is the text (and pair) that words were split from, from the words themselves.
func wordsText(words []Word) (text, pair string) {
	var segs [2][]string
	for _, w := range words {
		if w.ID >= 0 {
			segs[w.Seg] = append(segs[w.Seg], w.Text)
		}
	}
	return strings.Join(segs[0], " "), strings.Join(segs[1], " ")
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ReplacedExample is the example of the ELECTRA paper (Clark et al., 2020, figure 1): the
// generator replaced "cooked" with "ate".
var ReplacedExample = struct{ Text, Word, With string }{"the chef cooked the meal", "cooked", "ate"}

// UseReplacedExample types the paper's sentence and opens the swap box on its word, with the
// paper's replacement typed in.
func (a *App) UseReplacedExample() {
	ex := ReplacedExample
	a.Text, a.Draft, a.TextB, a.DraftB, a.Masks = ex.Text, ex.Text, "", "", nil
	a.Fam.Before, a.Fam.BeforeWords, a.Fam.Swapped, a.Fam.SwapText = nil, nil, nil, ""
	a.Fam.Pick, a.Fam.Draft = 0, ""
	a.refresh()
}

// partsKey names what the split panel shows: the selected layer of the attention maps' input.
func (a *App) partsKey(layer int) string { return fmt.Sprintf("%d|%s", layer, a.InputKey()) }

// fetchParts asks for the selected layer's split scores when the attention view shows a model
// with several score terms.
func (a *App) fetchParts() {
	fe := a.famEngine()
	if !a.Loaded || a.View != ViewAttention || fe == nil || a.SplitTerms() == nil || len(a.Att) == 0 {
		return
	}
	a.fam()
	layer, text, pair := a.Layer, a.MaskedText, a.MaskedB
	key := a.partsKey(layer)
	if a.Fam.Parts != nil && a.Fam.PartsKey == key {
		return
	}
	a.Fam.partsReq++
	n := a.Fam.partsReq
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		r, err := fe.AttentionParts(text, pair, layer)
		a.Do(func() {
			if n != a.Fam.partsReq {
				return
			}
			if err != nil {
				a.Fam.PartsErr = err.Error()
				return
			}
			a.Fam.Parts, a.Fam.PartsKey, a.Fam.PartsErr = r, key, ""
			a.Fam.partsGen++
		})
	})
}
