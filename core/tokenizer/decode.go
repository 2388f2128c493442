package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// VocabSize returns the number of tokens of the vocabulary.
func (t *Tokenizer) VocabSize() int { return t.vocab.Len() }

// Token returns the vocabulary entry of id, or "" when id is out of range.
func (t *Tokenizer) Token(id int) string { return t.vocab.Token(id) }

// TokenID returns the id of a vocabulary entry.
func (t *Tokenizer) TokenID(token string) (int, bool) { return t.vocab.ID(token) }

// Kind returns KindWordPiece.
func (t *Tokenizer) Kind() string { return KindWordPiece }

// Word returns id's entry without the "##" of a word's continuation.
func (t *Tokenizer) Word(id int) string {
	return strings.TrimPrefix(t.vocab.Token(id), wordPiecePrefix)
}

// wordPiecePrefix marks a piece that continues a word.
const wordPiecePrefix = "##"

// Decode turns ids back into text as HuggingFace's WordPiece decoder does
// (with cleanup, transformers' default): entries joined by spaces, a "##"
// piece glued to the one before, and the spaces before punctuation and
// English contractions taken out of each entry. Ids outside the vocabulary
// are skipped; so are the special tokens when skipSpecial.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) string {
	var b strings.Builder
	n := 0
	for _, id := range ids {
		tok := t.vocab.Token(id)
		if tok == "" || skipSpecial && contains(t.specials, tok) {
			continue
		}
		if n > 0 {
			if rest, ok := strings.CutPrefix(tok, wordPiecePrefix); ok {
				tok = rest
			} else {
				tok = " " + tok
			}
		}
		n++
		b.WriteString(cleanupTokenization(tok))
	}
	return b.String()
}

// cleanupTokenization is HuggingFace's cleanup of a decoded entry (the
// spaces before punctuation and contractions), applied entry by entry and
// one replacement after the other, as its WordPiece decoder does.
func cleanupTokenization(s string) string {
	if !strings.Contains(s, " ") {
		return s
	}
	for _, r := range cleanups {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

var cleanups = [][2]string{
	{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
	{" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
}

// Kind returns KindBPE.
func (t *BPE) Kind() string { return KindBPE }

// Word returns id's entry as text: an added token as it is, a vocabulary
// entry's byte characters read back ("Ġcat" is "cat") without the spaces
// around it; bytes that are not UTF-8 on their own (a piece of a character)
// as <0xNN>, as SentencePiece writes byte pieces; the entry itself when that
// leaves nothing (a lone "Ġ").
func (t *BPE) Word(id int) string {
	tok := t.Token(id)
	if _, added := t.addedByID[id]; added || tok == "" {
		return tok
	}
	b := make([]byte, 0, len(tok))
	for _, r := range tok {
		c, ok := charBytes[r]
		if !ok {
			return tok // not a byte-level entry
		}
		b = append(b, c)
	}
	if !utf8.Valid(b) {
		var sb strings.Builder
		for _, c := range b {
			fmt.Fprintf(&sb, "<0x%02X>", c)
		}
		return sb.String()
	}
	if w := strings.TrimSpace(string(b)); w != "" {
		return w
	}
	return tok
}
