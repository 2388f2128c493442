package ui

import (
	"slices"
	"strings"
	"unicode"
)

// MaskToken is what a masked word becomes in the text the engine reads.
const MaskToken = "[MASK]"

// Word is one word of the sentence as the tokenizer split it: its WordPiece pieces and where it
// sits in the text. [CLS] and [SEP] are words of their own with ID -1.
type Word struct {
	ID     int      // the tokenizer's word index (word_ids), -1 for an added special token
	Pieces []string // WordPiece tokens, continuation pieces with their "##"
	First  int      // token index of the first piece ([CLS] is 0)
	Start  int      // code point span of the word in the text
	End    int
	Text   string // the word as written in the text
	// Literal marks a [MASK] written in the text itself: always masked, nothing to restore.
	Literal bool
	// Seg is the word's segment (token type): 0 for sentence A, 1 for sentence B. The spans of
	// B's words are in sentence B.
	Seg int
}

// Words groups the tokens of text into words: consecutive tokens with the same word id.
func Words(t *Tokens, text string) []Word { return PairWords(t, text, "") }

// PairWords is Words for the pair (text, pair) that t encodes: the words of sentence B (token
// type 1) have Seg 1 and ids PairWordBase+w, and their spans are in pair.
//
// A word is the tokenizer's (word_ids), except that punctuation a SentencePiece tokenizer keeps in
// the word before it ("mat." is one Metaspace word) becomes a word of its own, as BERT's
// pre-tokenizer makes it, and a word's text leaves out the space its first piece carries ("▁mat").
func PairWords(t *Tokens, text, pair string) []Word {
	var words []Word
	var shift [2]int // words split off so far in each sentence: later ids move up by as many
	for i, tok := range t.Tokens {
		id := -1
		if i < len(t.WordIDs) {
			id = t.WordIDs[i]
		}
		special := i < len(t.Special) && t.Special[i]
		seg := 0
		if i < len(t.TypeIDs) && t.TypeIDs[i] == 1 {
			seg = 1
		}
		if id >= 0 && !special {
			id += shift[seg]
			if seg == 1 {
				id += PairWordBase
			}
		}
		var off [2]int
		if i < len(t.Offsets) {
			off = t.Offsets[i]
		}
		if n := len(words); n > 0 && !special && id >= 0 && words[n-1].ID == id {
			w := &words[n-1]
			if k := piecesKind(w.Pieces); k == kindSpace || k == piecesKind([]string{tok}) {
				w.Pieces = append(w.Pieces, tok)
				w.End = max(w.End, off[1])
				continue
			}
			shift[seg]++
			id++ // the pieces from here on are a word of their own
		}
		if special {
			id = -1
		}
		words = append(words, Word{ID: id, Pieces: []string{tok}, First: i, Start: off[0], End: off[1],
			Literal: !special && tok == MaskToken, Seg: seg})
	}
	texts := [2][]rune{[]rune(text), []rune(pair)}
	for i := range words {
		w := &words[i]
		if r := texts[w.Seg]; w.ID >= 0 && 0 <= w.Start && w.Start <= w.End && w.End <= len(r) {
			for w.Start < w.End && unicode.IsSpace(r[w.Start]) {
				w.Start++
			}
			w.Text = string(r[w.Start:w.End])
		}
	}
	return words
}

// isPunct reports whether a token is punctuation alone (after SentencePiece's "▁").
func isPunct(tok string) bool {
	tok = strings.TrimPrefix(tok, "▁")
	if tok == "" {
		return false
	}
	for _, r := range tok {
		if !unicode.IsPunct(r) {
			return false
		}
	}
	return true
}

// Kinds of a run of pieces, for splitting punctuation off a SentencePiece word.
const (
	kindSpace = iota // only lone "▁" pieces
	kindPunct        // punctuation (and lone "▁")
	kindWord         // anything else
)

// piecesKind is the kind of a word's pieces so far: a word of letters and one of punctuation
// ("...") each go on alike; a lone "▁" joins whatever follows it.
func piecesKind(pieces []string) int {
	k := kindSpace
	for _, p := range pieces {
		switch {
		case p == "▁":
		case isPunct(p):
			k = max(k, kindPunct)
		default:
			return kindWord
		}
	}
	return k
}

// Masked reports whether the word is shown as [MASK]: written so, or chosen in masks.
func (w Word) Masked(masks []int) bool {
	return w.Literal || (w.ID >= 0 && slices.Contains(masks, w.ID))
}

// MaskText returns text with every word of masks replaced by [MASK], and the ids of the masked
// words (chosen or written as [MASK]) in text order: the i-th [MASK] the engine finds is order[i].
func MaskText(text string, words []Word, masks []int) (masked string, order []int) {
	r := []rune(text)
	var b strings.Builder
	at := 0
	for _, w := range words {
		if w.ID < 0 || !w.Masked(masks) {
			continue
		}
		order = append(order, w.ID)
		if w.Literal || w.Start < at || w.End > len(r) {
			continue
		}
		b.WriteString(string(r[at:w.Start]))
		b.WriteString(MaskToken)
		at = w.End
	}
	b.WriteString(string(r[at:]))
	return b.String(), order
}

// ReplaceWord returns text with word w replaced by a predicted token (a "##" continuation
// piece joins the word before it).
func ReplaceWord(text string, w Word, token string) string {
	r := []rune(text)
	if w.Start < 0 || w.End > len(r) || w.Start > w.End {
		return text
	}
	start := w.Start
	if rest, ok := strings.CutPrefix(token, "##"); ok {
		token = rest
		for start > 0 && r[start-1] == ' ' {
			start--
		}
	}
	return string(r[:start]) + token + string(r[w.End:])
}

// WordByID returns the word with id, if any.
func WordByID(words []Word, id int) (Word, bool) {
	for _, w := range words {
		if w.ID == id {
			return w, true
		}
	}
	return Word{}, false
}
