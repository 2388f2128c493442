package unigram

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bertlab/bertlab/core/tokenizer"
)

// Prepend schemes of the Metaspace pre-tokenizer: when "▁" is put before a
// text that does not start with one.
const (
	PrependAlways = "always"
	PrependFirst  = "first"
	PrependNever  = "never"
)

// Metaspace is HuggingFace's Metaspace pre-tokenizer: spaces become
// Replacement, Replacement is put before the text (PrependScheme), and with
// Split the text is cut before every Replacement.
type Metaspace struct {
	Replacement   rune
	PrependScheme string
	Split         bool
}

// AddedToken is a token matched in the raw text before normalisation
// (tokenizer.json's added_tokens).
type AddedToken struct {
	ID      int
	Content string
	// SingleWord: match only where the token is not inside a word.
	SingleWord bool
	// LStrip and RStrip: the match takes the whitespace before (after) it.
	LStrip, RStrip bool
	// Special tokens are dropped by Decode with skipSpecial.
	Special bool
}

// TemplatePiece is one element of a post-processing template: a special
// token (ID >= 0) or the sequence A or B (ID -1, Seq "A" or "B").
type TemplatePiece struct {
	Seq    string
	Token  string
	ID     int
	TypeID int
}

// Tokenizer is a SentencePiece Unigram tokenizer as HuggingFace's tokenizers
// library runs it: added tokens, normaliser, Metaspace, the Unigram model and
// the template post-processor.
type Tokenizer struct {
	model      *Model
	norm       normalizer
	meta       Metaspace
	added      []AddedToken
	single     []TemplatePiece
	pair       []TemplatePiece
	decodeTrim bool // strip the space that prepending put before the text
	maskID     int
}

// Model returns the Unigram model.
func (t *Tokenizer) Model() *Model { return t.model }

// AddedTokens returns the tokens matched in the raw text before
// normalisation (the special tokens among them).
func (t *Tokenizer) AddedTokens() []AddedToken { return slices.Clone(t.added) }

// PreTokenizer returns the Metaspace settings (a zero Replacement: none).
func (t *Tokenizer) PreTokenizer() Metaspace { return t.meta }

// Template returns the post-processor's templates for one text and for a
// pair.
func (t *Tokenizer) Template() (single, pair []TemplatePiece) {
	return slices.Clone(t.single), slices.Clone(t.pair)
}

// MaskID returns the id of "[MASK]" (or "<mask>"), or -1.
func (t *Tokenizer) MaskID() int { return t.maskID }

// TokenID returns the id of a piece or added token.
func (t *Tokenizer) TokenID(s string) (int, bool) {
	for _, a := range t.added {
		if a.Content == s {
			return a.ID, true
		}
	}
	return t.model.ID(s)
}

func (t *Tokenizer) isAdded(id int) bool {
	for _, a := range t.added {
		if a.ID == id {
			return true
		}
	}
	return false
}

func (t *Tokenizer) token(id int) string {
	for _, a := range t.added {
		if a.ID == id {
			return a.Content
		}
	}
	return t.model.Piece(id)
}

func (t *Tokenizer) init() error {
	t.maskID = -1
	for _, m := range []string{"[MASK]", "<mask>"} {
		if id, ok := t.TokenID(m); ok {
			t.maskID = id
			break
		}
	}
	for _, a := range t.added {
		if a.Content == "" {
			return errors.New("added token with empty content")
		}
	}
	return nil
}

// Tokenize returns the tokens of text (no template tokens), with byte and
// code point offsets into text. Word is the index of the pre-tokenizer's
// split the token came from.
func (t *Tokenizer) Tokenize(text string) ([]tokenizer.Token, error) {
	ts, _, err := t.tokenize(text)
	return ts, err
}

// tokenize is Tokenize, also marking the added tokens matched in text.
func (t *Tokenizer) tokenize(text string) ([]tokenizer.Token, []bool, error) {
	out := make([]tokenizer.Token, 0, len(text)/4+4)
	added := make([]bool, 0, len(text)/4+4)
	word := 0
	for _, sp := range t.splitAdded(text) {
		if sp.added >= 0 {
			a := t.added[sp.added]
			out = append(out, tokenizer.Token{Text: a.Content, ID: a.ID, Start: sp.s, End: sp.e, Word: word})
			added = append(added, true)
			word++
			continue
		}
		cs := t.norm.normalize(fromText(text[sp.s:sp.e], sp.s))
		for _, w := range t.preTokenize(cs, sp.s == 0) {
			s := nstring(w)
			// Byte offsets of s to characters of w.
			ps, err := t.model.Segment(s)
			if err != nil {
				return nil, nil, err
			}
			ci := charIndex(s)
			for _, p := range ps {
				a, b := w[ci[p.s]], w[ci[p.e]-1]
				out = append(out, tokenizer.Token{Text: t.model.Piece(p.id), ID: p.id, Start: a.s, End: b.e, Word: word})
				added = append(added, false)
			}
			word++
		}
	}
	setCharOffsets(text, out)
	return out, added, nil
}

// charIndex maps each byte offset of s (and len(s)) to the index of the
// character starting there (or the one it is inside).
func charIndex(s string) []int {
	idx := make([]int, len(s)+1)
	n := 0
	for i := 0; i < len(s); {
		_, l := utf8.DecodeRuneInString(s[i:])
		for k := 0; k < l; k++ {
			idx[i+k] = n
		}
		i += l
		n++
	}
	idx[len(s)] = n
	return idx
}

func setCharOffsets(text string, ts []tokenizer.Token) {
	var c runeCounter
	for i := range ts {
		// Starts never decrease; ends may: the byte pieces of a fused
		// unknown span all share its span.
		if i > 0 && ts[i].Start == ts[i-1].Start && ts[i].End == ts[i-1].End {
			ts[i].CharStart, ts[i].CharEnd = ts[i-1].CharStart, ts[i-1].CharEnd
			continue
		}
		ts[i].CharStart = c.at(text, ts[i].Start)
		ts[i].CharEnd = ts[i].CharStart + utf8.RuneCountInString(text[ts[i].Start:ts[i].End])
	}
}

// runeCounter converts byte offsets into code point offsets, counting on
// from the previous offset when the next one is not before it.
type runeCounter struct{ byteAt, runeAt int }

func (c *runeCounter) at(text string, pos int) int {
	if pos < c.byteAt {
		c.byteAt, c.runeAt = 0, 0
	}
	c.runeAt += utf8.RuneCountInString(text[c.byteAt:pos])
	c.byteAt = pos
	return c.runeAt
}

// preTokenize is Metaspace: spaces to the replacement, the replacement
// before the text, splits before each replacement.
func (t *Tokenizer) preTokenize(cs []nchar, first bool) [][]nchar {
	if t.meta.Replacement == 0 {
		if len(cs) == 0 {
			return nil
		}
		return [][]nchar{cs}
	}
	cs = append([]nchar(nil), cs...)
	for i := range cs {
		if cs[i].r == ' ' {
			cs[i].r = t.meta.Replacement
		}
	}
	if len(cs) > 0 && cs[0].r != t.meta.Replacement {
		if t.meta.PrependScheme == PrependAlways || (t.meta.PrependScheme == PrependFirst && first) {
			cs = prependTo(cs, string(t.meta.Replacement))
		}
	}
	if !t.meta.Split {
		if len(cs) == 0 {
			return nil
		}
		return [][]nchar{cs}
	}
	var out [][]nchar
	start := 0
	for i := 1; i <= len(cs); i++ {
		if i == len(cs) || cs[i].r == t.meta.Replacement {
			if i > start {
				out = append(out, cs[start:i])
			}
			start = i
		}
	}
	return out
}

type split struct {
	s, e  int
	added int // index into t.added, or -1
}

// splitAdded cuts text at the added tokens written in it: leftmost-longest
// matches, then single_word, lstrip and rstrip as HuggingFace's
// AddedVocabulary applies them.
func (t *Tokenizer) splitAdded(text string) []split {
	var out []split
	last := 0
	for i := 0; i < len(text); {
		best := -1
		for k, a := range t.added {
			if strings.HasPrefix(text[i:], a.Content) && (best < 0 || len(a.Content) > len(t.added[best].Content)) {
				best = k
			}
		}
		if best < 0 {
			_, l := utf8.DecodeRuneInString(text[i:])
			i += l
			continue
		}
		a := t.added[best]
		s, e := i, i+len(a.Content)
		i = e
		if a.SingleWord {
			before, _ := utf8.DecodeLastRuneInString(text[:s])
			after, _ := utf8.DecodeRuneInString(text[e:])
			if (s > 0 && isWordChar(before)) || (e < len(text) && isWordChar(after)) {
				continue
			}
		}
		if a.LStrip {
			for s > last {
				r, l := utf8.DecodeLastRuneInString(text[:s])
				if !unicode.IsSpace(r) {
					break
				}
				s -= l
			}
		}
		if a.RStrip {
			for e < len(text) {
				r, l := utf8.DecodeRuneInString(text[e:])
				if !unicode.IsSpace(r) {
					break
				}
				e += l
			}
			i = e
		}
		if s > last {
			out = append(out, split{last, s, -1})
		}
		out = append(out, split{s, e, best})
		last = e
	}
	if last < len(text) {
		out = append(out, split{last, len(text), -1})
	}
	return out
}

// isWordChar is Rust regex's Unicode \w, which HuggingFace's single_word
// check uses: Alphabetic, marks, decimal digits, connector punctuation and
// the join controls.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.In(r, unicode.Nl, unicode.Other_Alphabetic, unicode.Nd, unicode.Pc) ||
		r == '\u200c' || r == '\u200d'
}

// Encode tokenizes text and lays it out with the single-sequence template
// (ALBERT's "[CLS] A [SEP]"). When maxLen > 0 tokens at the end of text are
// dropped so that at most maxLen remain.
func (t *Tokenizer) Encode(text string, maxLen int) (tokenizer.Encoding, error) {
	a, err := t.Tokenize(text)
	if err != nil {
		return tokenizer.Encoding{}, err
	}
	extra := t.templateTokens(t.single)
	truncated := false
	if maxLen > 0 {
		if maxLen < extra {
			return tokenizer.Encoding{}, fmt.Errorf("unigram: maxLen %d leaves no room for the template's %d tokens", maxLen, extra)
		}
		if len(a) > maxLen-extra {
			a, truncated = a[:maxLen-extra], true
		}
	}
	return t.assemble(t.single, a, nil, truncated), nil
}

// EncodePair tokenizes a pair of texts with the pair template (ALBERT's
// "[CLS] A [SEP] B [SEP]"). When maxLen > 0 tokens are dropped from the end
// of the longer text first (longest_first truncation).
func (t *Tokenizer) EncodePair(textA, textB string, maxLen int) (tokenizer.Encoding, error) {
	a, addedA, err := t.tokenize(textA)
	if err != nil {
		return tokenizer.Encoding{}, fmt.Errorf("first text: %w", err)
	}
	b, addedB, err := t.tokenize(textB)
	if err != nil {
		return tokenizer.Encoding{}, fmt.Errorf("second text: %w", err)
	}
	extra := t.templateTokens(t.pair)
	truncated := false
	if maxLen > 0 {
		if maxLen < extra {
			return tokenizer.Encoding{}, fmt.Errorf("unigram: maxLen %d leaves no room for the template's %d tokens", maxLen, extra)
		}
		if len(a)+len(b) > maxLen-extra {
			// What tokenizers 0.23 keeps of each text before truncating
			// the pair decides which one is longer.
			na, nb := tokenizer.LongestFirst(wordCut(a, addedA, maxLen), wordCut(b, addedB, maxLen), maxLen-extra)
			a, b, truncated = a[:na], b[:nb], true
		}
	}
	return t.assemble(t.pair, a, b, truncated), nil
}

// wordCut returns how many tokens of ts tokenizers 0.23 keeps before it
// truncates a pair: it adds word after word and stops once it holds limit
// tokens or more, checking after the words of the text but not after added
// tokens written in it.
func wordCut(ts []tokenizer.Token, added []bool, limit int) int {
	total := 0
	for i := 0; i < len(ts); {
		j := i + 1
		for j < len(ts) && ts[j].Word == ts[i].Word {
			j++
		}
		total += j - i
		if !added[i] && total >= limit {
			return j
		}
		i = j
	}
	return len(ts)
}

func (t *Tokenizer) templateTokens(tpl []TemplatePiece) int {
	n := 0
	for _, p := range tpl {
		if p.Seq == "" {
			n++
		}
	}
	return n
}

func (t *Tokenizer) assemble(tpl []TemplatePiece, a, b []tokenizer.Token, truncated bool) tokenizer.Encoding {
	n := len(a) + len(b) + len(tpl)
	e := tokenizer.Encoding{
		IDs: make([]int, 0, n), TypeIDs: make([]int, 0, n), Tokens: make([]string, 0, n),
		Offsets: make([][2]int, 0, n), CharOffsets: make([][2]int, 0, n), Special: make([]bool, 0, n),
		WordIDs: make([]int, 0, n), Truncated: truncated,
	}
	for _, p := range tpl {
		var ts []tokenizer.Token
		switch p.Seq {
		case "":
			e.IDs = append(e.IDs, p.ID)
			e.TypeIDs = append(e.TypeIDs, p.TypeID)
			e.Tokens = append(e.Tokens, p.Token)
			e.Offsets = append(e.Offsets, [2]int{})
			e.CharOffsets = append(e.CharOffsets, [2]int{})
			e.Special = append(e.Special, true)
			e.WordIDs = append(e.WordIDs, -1)
			continue
		case "A":
			ts = a
		case "B":
			ts = b
		}
		for _, tk := range ts {
			e.IDs = append(e.IDs, tk.ID)
			e.TypeIDs = append(e.TypeIDs, p.TypeID)
			e.Tokens = append(e.Tokens, tk.Text)
			e.Offsets = append(e.Offsets, [2]int{tk.Start, tk.End})
			e.CharOffsets = append(e.CharOffsets, [2]int{tk.CharStart, tk.CharEnd})
			e.Special = append(e.Special, false)
			e.WordIDs = append(e.WordIDs, tk.Word)
		}
	}
	return e
}

// Decode turns ids back into text: byte pieces <0xNN> of a byte-fallback
// model are joined into UTF-8 (a run that is not UTF-8 becomes one U+FFFD
// per piece), the replacement character becomes a space, and the space that
// prepending added is dropped from the start. With skipSpecial, special added
// tokens are left out.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) string {
	var b strings.Builder
	var pending []byte
	flush := func() {
		// A run of byte pieces that is not UTF-8 as a whole becomes one
		// U+FFFD per piece (HuggingFace's ByteFallback decoder).
		if utf8.Valid(pending) {
			b.Write(pending)
		} else {
			b.WriteString(strings.Repeat("\uFFFD", len(pending)))
		}
		pending = pending[:0]
	}
	for _, id := range ids {
		special := false
		for _, a := range t.added {
			if a.ID == id && a.Special {
				special = true
			}
		}
		if special && skipSpecial {
			continue
		}
		s := t.token(id)
		var v byte
		if len(s) == 6 && strings.HasPrefix(s, "<0x") && s[5] == '>' && t.model.byteFallback {
			if _, err := fmt.Sscanf(s[3:5], "%02X", &v); err == nil {
				pending = append(pending, v)
				continue
			}
		}
		flush()
		b.WriteString(s)
	}
	flush()
	out := b.String()
	if t.meta.Replacement != 0 {
		out = strings.ReplaceAll(out, string(t.meta.Replacement), " ")
		if t.decodeTrim {
			out = strings.TrimPrefix(out, " ")
		}
	}
	return out
}
