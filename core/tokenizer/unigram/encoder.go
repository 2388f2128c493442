package unigram

import (
	"strings"

	"github.com/bertlab/bertlab/core/tokenizer"
)

var _ tokenizer.Encoder = (*Tokenizer)(nil)

// CLSID returns the id of the token the one-text template puts before the
// text ([CLS]), or -1 when it puts none.
func (t *Tokenizer) CLSID() int {
	for _, p := range t.single {
		if p.Seq != "" {
			break
		}
		return p.ID
	}
	return -1
}

// SEPID returns the id of the token the one-text template puts after the
// text ([SEP]), or -1 when it puts none.
func (t *Tokenizer) SEPID() int {
	after := false
	for _, p := range t.single {
		switch {
		case p.Seq != "":
			after = true
		case after:
			return p.ID
		}
	}
	return -1
}

// PadID returns the id of "<pad>" (ALBERT) or "[PAD]" (DeBERTa), or -1.
func (t *Tokenizer) PadID() int { return t.firstOf("<pad>", "[PAD]") }

// UnkID returns the id of the model's unknown piece, or -1 when it has none.
func (t *Tokenizer) UnkID() int { return t.model.unk }

func (t *Tokenizer) firstOf(tokens ...string) int {
	for _, s := range tokens {
		if id, ok := t.TokenID(s); ok {
			return id
		}
	}
	return -1
}

// VocabSize returns one more than the largest id of the pieces and the
// added tokens.
func (t *Tokenizer) VocabSize() int {
	n := t.model.Size()
	for _, a := range t.added {
		n = max(n, a.ID+1)
	}
	return n
}

// Token returns the added token or piece of id ("▁cat"), or "" when there
// is none.
func (t *Tokenizer) Token(id int) string { return t.token(id) }

// Kind returns tokenizer.KindUnigram.
func (t *Tokenizer) Kind() string { return tokenizer.KindUnigram }

// Word returns id's piece as text: an added token as it is, a piece with
// its "▁" read as a space and the spaces around it dropped, a byte piece
// read as UTF-8; the piece itself when that leaves nothing (a lone "▁").
func (t *Tokenizer) Word(id int) string {
	tok := t.token(id)
	if t.isAdded(id) || tok == "" {
		return tok
	}
	w := t.Decode([]int{id}, false)
	if t.meta.Replacement == 0 {
		w = strings.ReplaceAll(w, "▁", " ")
	}
	if w = strings.TrimSpace(w); w != "" {
		return w
	}
	return tok
}
