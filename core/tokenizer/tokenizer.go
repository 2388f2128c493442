package tokenizer

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxInputCharsPerWord is the longest word, in characters after
// normalisation, that WordPiece splits; longer words become the unknown token
// (HuggingFace's max_input_chars_per_word).
const MaxInputCharsPerWord = 100

// Tokenizer is a BERT tokenizer: a vocabulary and its settings. It is
// immutable and safe for concurrent use.
type Tokenizer struct {
	vocab *Vocab
	cfg   Config

	unk, sep, pad, cls, mask int
	// specials are the distinct special-token strings, matched in raw text.
	specials []string
	// specialFirst marks the bytes a special token can start with.
	specialFirst [256]bool
}

// Token is one token of a text, with the span of the original text it came
// from.
type Token struct {
	// Text is the vocabulary entry, e.g. "##ing" or "[UNK]".
	Text string
	// ID is the id of Text in the vocabulary.
	ID int
	// Start and End are byte offsets into the original text: text[Start:End]
	// is what this token was made from. Pieces of one word share its span
	// where a piece covers only part of an original character.
	Start, End int
	// CharStart and CharEnd are the same span in Unicode code points (the
	// offsets HuggingFace reports to Python and JavaScript).
	CharStart, CharEnd int
	// Word is the index of the word the token belongs to: the words of the
	// pre-tokenizer (split at whitespace and punctuation) and special tokens
	// written in the text, counted from 0 (HuggingFace's word_ids).
	Word int

	// added marks a special token matched in the raw text.
	added bool
}

// Encoding is the model input for one text or one pair of texts, with
// [CLS] and [SEP] added. All slices have one element per token.
type Encoding struct {
	// IDs are the input_ids.
	IDs []int
	// TypeIDs are the token_type_ids: 0 for [CLS], the first text and its
	// [SEP]; 1 for the second text and the final [SEP].
	TypeIDs []int
	// Tokens are the vocabulary entries of IDs.
	Tokens []string
	// Offsets are byte spans into the text the token came from: the first
	// text where TypeIDs is 0, the second where it is 1. Added special tokens
	// have [0, 0].
	Offsets [][2]int
	// CharOffsets are Offsets in Unicode code points.
	CharOffsets [][2]int
	// Special marks the [CLS] and [SEP] tokens that Encode added (special
	// tokens written in the text are not marked; HuggingFace's
	// special_tokens_mask).
	Special []bool
	// WordIDs are the Token.Word of each token within its text, -1 for
	// added special tokens.
	WordIDs []int
	// Truncated reports whether tokens were dropped to respect maxLen.
	Truncated bool
}

// Len returns the number of tokens.
func (e *Encoding) Len() int { return len(e.IDs) }

// New returns a tokenizer for v with settings c. The five special tokens
// named in c must be non-empty and in v.
func New(v *Vocab, c Config) (*Tokenizer, error) {
	if v == nil {
		return nil, errors.New("tokenizer: nil vocab")
	}
	if c.ModelMaxLength < 0 {
		return nil, fmt.Errorf("tokenizer: negative model_max_length %d", c.ModelMaxLength)
	}
	t := &Tokenizer{vocab: v, cfg: c}
	for _, s := range []struct {
		key, name string
		id        *int
	}{
		{"unk_token", c.UnkToken, &t.unk},
		{"sep_token", c.SepToken, &t.sep},
		{"pad_token", c.PadToken, &t.pad},
		{"cls_token", c.ClsToken, &t.cls},
		{"mask_token", c.MaskToken, &t.mask},
	} {
		if s.name == "" {
			return nil, fmt.Errorf("tokenizer: %s is empty", s.key)
		}
		id, ok := v.ID(s.name)
		if !ok {
			return nil, fmt.Errorf("tokenizer: %s %q is not in the vocab", s.key, s.name)
		}
		*s.id = id
		if !contains(t.specials, s.name) {
			t.specials = append(t.specials, s.name)
			t.specialFirst[s.name[0]] = true
		}
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Vocab returns the vocabulary.
func (t *Tokenizer) Vocab() *Vocab { return t.vocab }

// Config returns the settings.
func (t *Tokenizer) Config() Config { return t.cfg }

// CLSID returns the id of the classification token ([CLS]).
func (t *Tokenizer) CLSID() int { return t.cls }

// SEPID returns the id of the separator token ([SEP]).
func (t *Tokenizer) SEPID() int { return t.sep }

// MaskID returns the id of the mask token ([MASK]).
func (t *Tokenizer) MaskID() int { return t.mask }

// PadID returns the id of the padding token ([PAD]).
func (t *Tokenizer) PadID() int { return t.pad }

// UnkID returns the id of the unknown token ([UNK]).
func (t *Tokenizer) UnkID() int { return t.unk }

// Tokenize splits text into tokens, without adding [CLS] or [SEP].
func (t *Tokenizer) Tokenize(text string) []Token {
	sc := t.getScratch()
	defer scratchPool.Put(sc)
	return t.tokenize(sc, text)
}

// Encode tokenizes text and adds [CLS] and [SEP]. When maxLen > 0 the result
// holds at most maxLen tokens (tokens at the end of text are dropped); maxLen
// must then be at least 2. maxLen <= 0 means no limit.
func (t *Tokenizer) Encode(text string, maxLen int) (Encoding, error) {
	if maxLen > 0 && maxLen < 2 {
		return Encoding{}, fmt.Errorf("tokenizer: maxLen %d leaves no room for [CLS] and [SEP]", maxLen)
	}
	a := t.Tokenize(text)
	truncated := false
	if maxLen > 0 && len(a) > maxLen-2 {
		a, truncated = a[:maxLen-2], true
	}
	return t.assemble(a, nil, false, truncated), nil
}

// EncodePair tokenizes a pair of texts as [CLS] a [SEP] b [SEP]. When
// maxLen > 0 the result holds at most maxLen tokens (at least 3); tokens are
// dropped from the end of the longer text first (HuggingFace's longest_first
// truncation, as tokenizers 0.23 does it). maxLen <= 0 means no limit.
func (t *Tokenizer) EncodePair(a, b string, maxLen int) (Encoding, error) {
	if maxLen > 0 && maxLen < 3 {
		return Encoding{}, fmt.Errorf("tokenizer: maxLen %d leaves no room for [CLS] and two [SEP]", maxLen)
	}
	sc := t.getScratch()
	defer scratchPool.Put(sc)
	ta, tb := t.tokenize(sc, a), t.tokenize(sc, b)
	truncated := false
	if maxLen > 0 && len(ta)+len(tb) > maxLen-3 {
		// What tokenizers 0.23 keeps of each text before truncating the pair
		// decides which one is longer.
		na, nb := LongestFirst(wordCut(ta, maxLen), wordCut(tb, maxLen), maxLen-3)
		ta, tb, truncated = ta[:na], tb[:nb], true
	}
	return t.assemble(ta, tb, true, truncated), nil
}

// wordCut returns how many tokens of ts tokenizers 0.23 keeps before it
// truncates a pair: it adds word after word and stops once it holds limit
// tokens or more, checking after the words of the text but not after special
// tokens written in it.
func wordCut(ts []Token, limit int) int {
	total := 0
	for i := 0; i < len(ts); {
		j := i + 1
		for j < len(ts) && ts[j].Word == ts[i].Word {
			j++
		}
		total += j - i
		if !ts[i].added && total >= limit {
			return j
		}
		i = j
	}
	return len(ts)
}

// LongestFirst returns how many tokens of sequences of n1 and n2 tokens to
// keep so that at most budget remain, as the HuggingFace Rust library's
// longest_first strategy does: shorten the longer sequence down to the
// shorter, then both equally; an odd token left over goes to the longer one,
// or to the second when both are equally long.
func LongestFirst(n1, n2, budget int) (int, int) {
	swap := n1 > n2
	if swap {
		n1, n2 = n2, n1
	}
	if n1 > budget {
		n2 = n1
	} else {
		n2 = min(n2, max(n1, budget-n1))
	}
	if n1+n2 > budget {
		n1 = budget / 2
		n2 = n1 + budget%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return n1, n2
}

// assemble lays out [CLS] a [SEP] (b [SEP]).
func (t *Tokenizer) assemble(a, b []Token, pair bool, truncated bool) Encoding {
	n := len(a) + 2
	if pair {
		n += len(b) + 1
	}
	e := Encoding{
		IDs:         make([]int, 0, n),
		TypeIDs:     make([]int, 0, n),
		Tokens:      make([]string, 0, n),
		Offsets:     make([][2]int, 0, n),
		CharOffsets: make([][2]int, 0, n),
		Special:     make([]bool, 0, n),
		WordIDs:     make([]int, 0, n),
		Truncated:   truncated,
	}
	special := func(id, typ int) { e.appendSpecial(id, typ, t.vocab.tokens[id]) }
	seq := e.appendTokens
	special(t.cls, 0)
	seq(a, 0)
	special(t.sep, 0)
	if pair {
		seq(b, 1)
		special(t.sep, 1)
	}
	return e
}

// scratch holds the buffers of one tokenization, kept in scratchPool so
// that repeated calls do not grow them anew.
type scratch struct {
	n  normalizer
	wb wordBuf
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns scratch buffers with the normaliser set up for t.
func (t *Tokenizer) getScratch() *scratch {
	sc := scratchPool.Get().(*scratch)
	sc.n.lower, sc.n.strip, sc.n.chinese = t.cfg.DoLowerCase, t.cfg.stripAccents(), t.cfg.TokenizeChineseChars
	return sc
}

// tokenize splits text at the special tokens written in it, then normalises,
// pre-tokenizes and WordPiece-splits the spans between them.
func (t *Tokenizer) tokenize(sc *scratch, text string) []Token {
	n, wb := &sc.n, &sc.wb
	// About one token for every five bytes of English.
	out := make([]Token, 0, len(text)/5+4)
	word := 0
	rest := 0 // start of the text not yet tokenized
	for i := 0; i < len(text); i++ {
		if !t.specialFirst[text[i]] {
			continue
		}
		sp := t.matchSpecial(text[i:])
		if sp == "" {
			continue
		}
		out, word = t.tokenizeSpan(n, wb, out, text[rest:i], rest, word)
		id := t.vocab.ids[sp]
		out = append(out, Token{Text: t.vocab.tokens[id], ID: id, Start: i, End: i + len(sp), Word: word, added: true})
		word++
		i += len(sp) - 1
		rest = i + 1
	}
	out, _ = t.tokenizeSpan(n, wb, out, text[rest:], rest, word)
	setCharOffsets(text, out)
	return out
}

// matchSpecial returns the longest special token that s starts with, or "".
func (t *Tokenizer) matchSpecial(s string) string {
	best := ""
	for _, sp := range t.specials {
		if len(sp) > len(best) && strings.HasPrefix(s, sp) {
			best = sp
		}
	}
	return best
}

// wordBuf holds the UTF-8 form of a span's normalised characters:
// pos[k] is the byte offset of character k in text, pos[len] = len(text).
type wordBuf struct {
	text []byte
	pos  []int
}

// tokenizeSpan appends the tokens of span, which starts at byte base of the
// original text; words are numbered from word on. It returns the next word
// number.
func (t *Tokenizer) tokenizeSpan(n *normalizer, wb *wordBuf, out []Token, span string, base, word int) ([]Token, int) {
	if span == "" {
		return out, word
	}
	cs := n.normalize(span, base)
	wb.text, wb.pos = wb.text[:0], wb.pos[:0]
	for _, c := range cs {
		wb.pos = append(wb.pos, len(wb.text))
		wb.text = utf8.AppendRune(wb.text, c.r)
	}
	wb.pos = append(wb.pos, len(wb.text))
	// BertPreTokenizer: split at whitespace (dropped) and around punctuation
	// (each mark a word).
	for i := 0; i < len(cs); {
		r := cs[i].r
		if isWhitespace(r) {
			i++
			continue
		}
		j := i + 1
		if !isPunctuation(r) {
			for j < len(cs) && !isWhitespace(cs[j].r) && !isPunctuation(cs[j].r) {
				j++
			}
		}
		out = t.wordPiece(out, wb, cs, i, j, word)
		word++
		i = j
	}
	return out, word
}

// wordPiece appends the WordPiece tokens of the word cs[a:b]: greedily the
// longest vocabulary entry at each position, "##"-prefixed after the first.
// A word longer than MaxInputCharsPerWord, or with a position where no entry
// matches, becomes a single unknown token.
func (t *Tokenizer) wordPiece(out []Token, wb *wordBuf, cs []nchar, a, b, word int) []Token {
	v := t.vocab
	if b-a <= MaxInputCharsPerWord {
		mark := len(out)
		ok := true
		for start := a; start < b; {
			ids, limit := v.ids, v.maxLen
			if start > a {
				ids, limit = v.cont, v.maxContLen
			}
			// No entry is longer than limit bytes: skip longer candidates.
			end := b
			for end > start && wb.pos[end]-wb.pos[start] > limit {
				end--
			}
			id := -1
			for ; end > start; end-- {
				if x, found := ids[string(wb.text[wb.pos[start]:wb.pos[end]])]; found {
					id = x
					break
				}
			}
			if id < 0 {
				ok = false
				break
			}
			out = append(out, Token{Text: v.tokens[id], ID: id, Start: cs[start].start, End: cs[end-1].end, Word: word})
			start = end
		}
		if ok {
			return out
		}
		out = out[:mark]
	}
	return append(out, Token{Text: v.tokens[t.unk], ID: t.unk, Start: cs[a].start, End: cs[b-1].end, Word: word})
}

// setCharOffsets fills CharStart and CharEnd from the byte offsets, counting
// code points the way ranging over a Go string does (an invalid byte counts
// as one). Offsets only grow along ts, so one forward scan suffices.
func setCharOffsets(text string, ts []Token) {
	var starts, ends runeCounter
	for i := range ts {
		ts[i].CharStart = starts.at(text, ts[i].Start)
		ts[i].CharEnd = ends.at(text, ts[i].End)
	}
}

// runeCounter converts byte offsets to code-point offsets, moving forward.
type runeCounter struct{ byteAt, runeAt int }

func (c *runeCounter) at(text string, pos int) int {
	if pos < c.byteAt {
		*c = runeCounter{}
	}
	for c.byteAt < pos {
		if text[c.byteAt] < utf8.RuneSelf {
			c.byteAt++
		} else {
			_, size := utf8.DecodeRuneInString(text[c.byteAt:])
			c.byteAt += size
		}
		c.runeAt++
	}
	return c.runeAt
}

// appendSpecial appends a special token (no offsets, no word) to e.
func (e *Encoding) appendSpecial(id, typ int, tok string) {
	e.IDs = append(e.IDs, id)
	e.TypeIDs = append(e.TypeIDs, typ)
	e.Tokens = append(e.Tokens, tok)
	e.Offsets = append(e.Offsets, [2]int{})
	e.CharOffsets = append(e.CharOffsets, [2]int{})
	e.Special = append(e.Special, true)
	e.WordIDs = append(e.WordIDs, -1)
}

// appendTokens appends the tokens of one sequence, of token type typ, to e.
func (e *Encoding) appendTokens(ts []Token, typ int) {
	for _, tk := range ts {
		e.IDs = append(e.IDs, tk.ID)
		e.TypeIDs = append(e.TypeIDs, typ)
		e.Tokens = append(e.Tokens, tk.Text)
		e.Offsets = append(e.Offsets, [2]int{tk.Start, tk.End})
		e.CharOffsets = append(e.CharOffsets, [2]int{tk.CharStart, tk.CharEnd})
		e.Special = append(e.Special, false)
		e.WordIDs = append(e.WordIDs, tk.Word)
	}
}
