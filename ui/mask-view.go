package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/pipeline"
)

// MaskView is "Mask a word": the sentence as tokens, click to mask, top-k predictions per mask.
type MaskView struct {
	App *App
}

func (c *MaskView) wordClass(w Word) string {
	cls := "word"
	switch {
	case w.Literal:
		cls = "word masked literal"
	case w.Masked(c.App.Masks):
		cls = "word masked"
	}
	return cls + segClass(w)
}

// hint is the view's first line: how to mask, and what the grey pieces are for the model's kind
// of tokenizer.
func (c *MaskView) hint() string {
	const how = "Click a word to mask it, click it again to bring it back; mask several at once. "
	switch c.tokenizer() {
	case "bpe":
		return how + "The grey pieces are byte-level BPE tokens (RoBERTa's): Ġ is the space before a piece, and a word the vocabulary lacks is split into pieces, down to single bytes. The model's mask token is <mask>."
	case "unigram":
		return how + "The grey pieces are SentencePiece tokens: ▁ starts a word (it stands for the space before it), and a word the vocabulary lacks is split into the pieces the model finds likeliest."
	}
	return how + "The grey pieces are WordPiece tokens: a word the vocabulary lacks is split into pieces that start with ##."
}

// tokenizer is the loaded model's kind of tokenizer ("wordpiece" when not known).
func (c *MaskView) tokenizer() string {
	if c.App.Info == nil || c.App.Info.Tokenizer == "" {
		return "wordpiece"
	}
	return c.App.Info.Tokenizer
}

// maskLabel is a masked word as the model reads it: [MASK], or the model's own mask token
// (RoBERTa's <mask>), which the page's [MASK] stands for.
func (c *MaskView) maskLabel() string {
	if c.App.Info == nil || c.App.Info.MaskToken == "" {
		return MaskToken
	}
	return c.App.Info.MaskToken
}

// truncatedNote says how much of a text longer than the model's positions the model sees.
func (c *MaskView) truncatedNote() string {
	t := c.App.Tok
	if t.Length > len(t.IDs) {
		return fmt.Sprintf("The text makes %d tokens and the model has %d positions: the %d tokens not shown are not seen by the model.",
			t.Length, len(t.IDs), t.Length-len(t.IDs))
	}
	return "The text is longer than the model's positions: the tokens not shown are not seen by the model."
}

// blank reports that the text has no word: the model reads only [CLS] [SEP].
func (c *MaskView) blank() bool {
	return c.App.Loaded && c.App.Tok != nil && strings.TrimSpace(c.App.Text) == "" && c.App.Pair() == ""
}

func (c *MaskView) specialClass(w Word) string { return "word special" + segClass(w) }

// segClass colours the words of sentence B.
func segClass(w Word) string {
	if w.Seg == 1 {
		return " seg-b"
	}
	return ""
}

// nspAttr is the IsNext probability for tests, "" until it is computed for the text shown.
func (c *MaskView) nspAttr() string {
	if c.App.PairNSP == nil || c.App.PairNSPKey != c.App.InputKey() {
		return ""
	}
	return scoreAttr(c.App.PairNSP.IsNext)
}

func (c *MaskView) nspClass() string {
	if c.App.PairNSPKey != c.App.InputKey() {
		return "nsp-result stale"
	}
	return "nsp-result"
}

func (c *MaskView) wordTitle(w Word) string {
	switch {
	case w.Literal:
		return "[MASK] written in the text"
	case w.Masked(c.App.Masks):
		return "click to bring back “" + w.Text + "”"
	}
	return "click to mask"
}

func (c *MaskView) pieceClass(j int) string {
	if j > 0 {
		return "piece cont"
	}
	return "piece"
}

func (c *MaskView) maskNumber(id int) string {
	return strconv.Itoa(slices.Index(c.App.Order, id) + 1)
}

func (c *MaskView) cardClass(id int) string {
	if c.App.PredsText != c.App.InputKey() || c.App.Preds[id] == nil {
		return "card stale"
	}
	return "card"
}

func (c *MaskView) wasText(id int) string {
	w, ok := WordByID(c.App.Words, id)
	if !ok {
		return ""
	}
	if w.Literal {
		return "written as [MASK]"
	}
	return "was “" + w.Text + "”"
}

func (c *MaskView) fillTitle(token string) string {
	return "put “" + token + "”" + codePoints(token) + " into the sentence"
}

// codePoints names the characters of a token that has any outside ASCII, " (U+0F0B)": a
// character the page's fonts lack shows as an empty box, and its code point says what it is.
func codePoints(token string) string {
	var b strings.Builder
	for _, r := range strings.TrimPrefix(token, "##") {
		if r < 0x80 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(" (")
		} else {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%U", r)
	}
	if b.Len() > 0 {
		b.WriteByte(')')
	}
	return b.String()
}

// predText is a prediction as the card shows it and puts into the sentence: the readable word
// of a byte-level BPE or SentencePiece token ("Ġcat" and "▁cat" are "cat"), a WordPiece entry as
// it is ("##ing" keeps its "##", which Fill reads as joining the word before).
func predText(p pipeline.Prediction) string {
	if p.Word == "" || strings.HasPrefix(p.Token, "##") {
		return p.Token
	}
	return p.Word
}

func scoreAttr(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }

func percent(p float64) string {
	switch {
	case p < 0.00001:
		return "<0.001%"
	case p < 0.001:
		return fmt.Sprintf("%.3f%%", 100*p)
	}
	return fmt.Sprintf("%.1f%%", 100*p)
}

func barStyle(p float64) string {
	return fmt.Sprintf("width: %.2f%%", 100*p)
}
