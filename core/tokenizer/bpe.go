package tokenizer

import (
	"container/heap"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// BPE is a byte-level BPE tokenizer: GPT-2's and RoBERTa's, equal to the
// HuggingFace tokenizers library's ByteLevel pre-tokenizer, BPE model,
// ByteLevel decoder and RobertaProcessing or ByteLevel post-processor. It is
// immutable and safe for concurrent use. Load one with LoadBPE,
// LoadBPEFiles or LoadBPEFS.
type BPE struct {
	// tokens maps a model id to its vocabulary entry ("" where no entry
	// has that id); ids maps an entry to its id.
	tokens []string
	ids    map[string]int
	// merges maps a pair of ids, left<<32 | right, to the merge's rank and
	// the id of the merged entry.
	merges map[uint64]bpeMerge
	// byteID is the id of each byte's character (byteChars), -1 when the
	// vocabulary lacks it.
	byteID [256]int32

	unk          int // id of the model's unknown token, -1 for none
	fuseUnk      bool
	ignoreMerges bool

	addPrefixSpace bool // the pre-tokenizer's add_prefix_space
	useRegex       bool // the pre-tokenizer's use_regex

	// added are the added tokens; passes lists those matched in the raw
	// text (normalized false) and then those matched after normalisation.
	added     []addedToken
	addedByID map[int]int // id -> index in added
	passes    [2][]int

	post    bpePost
	decoder string // "ByteLevel", or "" for none (tokens joined by spaces)

	cls, sep, mask, pad, unkSpecial int

	cache *bpeCache
}

// addedToken is one of tokenizer.json's added_tokens.
type addedToken struct {
	content    string
	id         int
	lstrip     bool
	rstrip     bool
	normalized bool
	special    bool
}

// bpeMerge is one merge rule: its rank (line in merges.txt, lower first)
// and the id of the merged entry.
type bpeMerge struct{ rank, id int32 }

// Post-processors.
const (
	postNone      = iota // sequences as they are; the pair's second has type 1
	postRoberta          // <s> A </s> and <s> A </s> </s> B </s>, all type 0
	postByteLevel        // offsets trimmed, nothing added
)

// bpePost is the post-processor.
type bpePost struct {
	kind           int
	trimOffsets    bool
	addPrefixSpace bool
	cls, sep       int    // RobertaProcessing's ids
	clsTok, sepTok string // and their strings
}

// added returns how many special tokens the post-processor adds.
func (p *bpePost) added(pair bool) int {
	switch {
	case p.kind != postRoberta:
		return 0
	case pair:
		return 4
	}
	return 2
}

// CLSID returns the id of the start token (<s>) that the post-processor
// adds, or -1 when it adds none.
func (t *BPE) CLSID() int { return t.cls }

// SEPID returns the id of the end and separator token (</s>) that the
// post-processor adds, or -1 when it adds none.
func (t *BPE) SEPID() int { return t.sep }

// MaskID returns the id of the mask token (<mask>), or -1 when the
// tokenizer has none.
func (t *BPE) MaskID() int { return t.mask }

// PadID returns the id of the padding token (<pad>), or -1 when the
// tokenizer has none.
func (t *BPE) PadID() int { return t.pad }

// UnkID returns the id of the unknown token (<unk>), or -1 when the
// tokenizer has none. Byte-level BPE never needs it: every byte has a token.
func (t *BPE) UnkID() int { return t.unkSpecial }

// VocabSize returns one more than the largest id of the vocabulary and the
// added tokens.
func (t *BPE) VocabSize() int {
	n := len(t.tokens)
	for _, a := range t.added {
		n = max(n, a.id+1)
	}
	return n
}

// TokenID returns the id of an added token or vocabulary entry, as
// HuggingFace's token_to_id does.
func (t *BPE) TokenID(token string) (int, bool) {
	for _, a := range t.added {
		if a.content == token {
			return a.id, true
		}
	}
	id, ok := t.ids[token]
	return id, ok
}

// Token returns the added token or vocabulary entry of id (id_to_token),
// or "" when there is none.
func (t *BPE) Token(id int) string {
	if i, ok := t.addedByID[id]; ok {
		return t.added[i].content
	}
	if id >= 0 && id < len(t.tokens) {
		return t.tokens[id]
	}
	return ""
}

// Tokenize splits text into tokens, without the tokens the post-processor
// adds and without trimming offsets.
func (t *BPE) Tokenize(text string) []Token {
	// About one token for every four bytes of English with a real
	// vocabulary.
	out := make([]Token, 0, len(text)/4+4)
	w := bpeWorkPool.Get().(*bpeWork)
	out = t.tokenize(w, out, text)
	bpeWorkPool.Put(w)
	setCharOffsets(text, out)
	return out
}

// Encode tokenizes text and adds the post-processor's tokens (<s> text </s>
// for RoBERTa). When maxLen > 0 the result holds at most maxLen tokens
// (tokens at the end of text are dropped); maxLen must then leave room for
// the added tokens. maxLen <= 0 means no limit.
func (t *BPE) Encode(text string, maxLen int) (Encoding, error) {
	n := t.post.added(false)
	if maxLen > 0 && maxLen < n {
		return Encoding{}, fmt.Errorf("tokenizer: maxLen %d leaves no room for the %d added tokens", maxLen, n)
	}
	a := t.Tokenize(text)
	truncated := false
	if maxLen > 0 && len(a) > maxLen-n {
		a, truncated = a[:maxLen-n], true
	}
	return t.assemble(text, "", a, nil, false, truncated), nil
}

// EncodePair tokenizes a pair of texts (<s> a </s></s> b </s> for RoBERTa).
// When maxLen > 0 the result holds at most maxLen tokens; tokens are dropped
// from the end of the longer text first, as EncodePair of the WordPiece
// Tokenizer does (HuggingFace's longest_first). maxLen <= 0 means no limit.
func (t *BPE) EncodePair(a, b string, maxLen int) (Encoding, error) {
	n := t.post.added(true)
	if maxLen > 0 && maxLen < n {
		return Encoding{}, fmt.Errorf("tokenizer: maxLen %d leaves no room for the %d added tokens", maxLen, n)
	}
	ta, tb := t.Tokenize(a), t.Tokenize(b)
	truncated := false
	if maxLen > 0 && len(ta)+len(tb) > maxLen-n {
		na, nb := LongestFirst(wordCut(ta, maxLen), wordCut(tb, maxLen), maxLen-n)
		ta, tb, truncated = ta[:na], tb[:nb], true
	}
	return t.assemble(a, b, ta, tb, true, truncated), nil
}

// assemble trims offsets and adds the post-processor's tokens.
func (t *BPE) assemble(textA, textB string, a, b []Token, pair, truncated bool) Encoding {
	p := &t.post
	if p.kind != postNone && p.trimOffsets {
		trimOffsets(textA, a, p.addPrefixSpace)
		trimOffsets(textB, b, p.addPrefixSpace)
	}
	n := len(a) + len(b) + p.added(pair)
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
	special := func(id int, tok string) { e.appendSpecial(id, 0, tok) }
	seq := e.appendTokens
	if p.kind == postRoberta {
		special(p.cls, p.clsTok)
		seq(a, 0)
		special(p.sep, p.sepTok)
		if pair {
			special(p.sep, p.sepTok)
			seq(b, 0)
			special(p.sep, p.sepTok)
		}
		return e
	}
	seq(a, 0)
	if pair {
		seq(b, 1)
	}
	return e
}

// trimOffsets moves the spans of tokens that start or end with spaces
// ("Ġ" or whitespace) inward past them, as HuggingFace's ByteLevel
// process_offsets does on code-point offsets. With addPrefixSpace a single
// leading space of a token at the start is the one the pre-tokenizer added
// and stays; elsewhere the library trims it all the same, even from a span
// that holds no space (a word after an added token): so does this.
func trimOffsets(text string, ts []Token, addPrefixSpace bool) {
	isSpace := func(r rune) bool { return r == byteChars[' '] || classOf(r) == classSpace }
	for i := range ts {
		tk := &ts[i]
		lead, trail := 0, 0
		for _, r := range tk.Text {
			if !isSpace(r) {
				break
			}
			lead++
		}
		for s := tk.Text; s != ""; {
			r, size := utf8.DecodeLastRuneInString(s)
			if !isSpace(r) {
				break
			}
			trail++
			s = s[:len(s)-size]
		}
		if lead > 0 {
			if (i == 0 || tk.CharStart == 0) && addPrefixSpace && lead == 1 {
				lead = 0
			}
			cs := min(tk.CharStart+lead, tk.CharEnd)
			tk.Start = forwardRunes(text, tk.Start, cs-tk.CharStart)
			tk.CharStart = cs
		}
		if trail > 0 && tk.CharEnd >= trail {
			ce := max(tk.CharEnd-trail, tk.CharStart)
			tk.End = backRunes(text, tk.End, tk.CharEnd-ce)
			tk.CharEnd = ce
		}
	}
}

// forwardRunes returns the byte offset n code points after pos in text.
func forwardRunes(text string, pos, n int) int {
	for ; n > 0 && pos < len(text); n-- {
		_, size := utf8.DecodeRuneInString(text[pos:])
		pos += size
	}
	return pos
}

// backRunes returns the byte offset n code points before pos in text.
func backRunes(text string, pos, n int) int {
	for ; n > 0 && pos > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(text[:pos])
		pos -= size
	}
	return pos
}

// bpeWork holds the buffers of one tokenization, kept in bpeWorkPool so
// that repeated calls do not grow them anew.
type bpeWork struct {
	ends   []int    // ends of the pre-tokenizer's pieces in buf
	units  []byte   // the bytes of one piece, invalid UTF-8 read as U+FFFD
	spans  [][2]int // the span of text each unit came from
	syms   []bpeSym
	queue  mergeQueue
	result []bpeSym
}

var bpeWorkPool = sync.Pool{New: func() any { return new(bpeWork) }}

// segment is a span of text: an added token (added >= 0) or text between
// them.
type segment struct{ start, end, added int }

// tokenize appends the tokens of text (no char offsets yet).
func (t *BPE) tokenize(w *bpeWork, out []Token, text string) []Token {
	segs := []segment{{0, len(text), -1}}
	for _, pass := range t.passes {
		if len(pass) > 0 {
			segs = t.splitAdded(segs, text, pass)
		}
	}
	word := 0
	for _, sg := range segs {
		if sg.added >= 0 {
			a := &t.added[sg.added]
			out = append(out, Token{Text: text[sg.start:sg.end], ID: a.id, Start: sg.start, End: sg.end, Word: word, added: true})
			word++
			continue
		}
		out, word = t.tokenizeSegment(w, out, text, sg.start, sg.end, word)
	}
	return out
}

// splitAdded splits the text segments of segs at the added tokens pass
// lists, as HuggingFace's AddedVocabulary does: leftmost-longest matches,
// whitespace before a token with lstrip and after one with rstrip joining
// the token, within its segment.
func (t *BPE) splitAdded(segs []segment, text string, pass []int) []segment {
	out := make([]segment, 0, len(segs))
	for _, sg := range segs {
		if sg.added >= 0 {
			out = append(out, sg)
			continue
		}
		s := text[sg.start:sg.end]
		done := 0 // end of the previous match in s
		for i := 0; i < len(s); {
			best := -1
			for _, k := range pass {
				c := t.added[k].content
				if strings.HasPrefix(s[i:], c) && (best < 0 || len(c) > len(t.added[best].content)) {
					best = k
				}
			}
			if best < 0 {
				i++
				continue
			}
			a := &t.added[best]
			start, stop := i, i+len(a.content)
			i = stop
			if a.lstrip {
				start = max(spaceStartAtEnd(s[:start]), done)
			}
			if a.rstrip {
				stop += spaceEndAtStart(s[stop:])
			}
			if done < start {
				out = append(out, segment{sg.start + done, sg.start + start, -1})
			}
			out = append(out, segment{sg.start + start, sg.start + stop, best})
			done = stop
		}
		if done < len(s) {
			out = append(out, segment{sg.start + done, sg.end, -1})
		}
	}
	return out
}

// spaceStartAtEnd returns where the whitespace that s ends with begins.
func spaceStartAtEnd(s string) int {
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if classOf(r) != classSpace {
			break
		}
		s = s[:len(s)-size]
	}
	return len(s)
}

// spaceEndAtStart returns where the whitespace that s starts with ends.
func spaceEndAtStart(s string) int {
	for i, r := range s {
		if classOf(r) != classSpace {
			return i
		}
	}
	return len(s)
}

// tokenizeSegment appends the tokens of text[start:end], a span between
// added tokens: the ByteLevel pre-tokenizer (a space before it when
// add_prefix_space is set and it does not start with one; the GPT-2 regex)
// and BPE on the bytes of each piece. Each piece is a word.
func (t *BPE) tokenizeSegment(w *bpeWork, out []Token, text string, start, end, word int) ([]Token, int) {
	if start >= end {
		return out, word
	}
	seg := text[start:end]
	prefix := 0
	buf := seg
	if t.addPrefixSpace && seg[0] != ' ' {
		buf, prefix = " "+seg, 1
	}
	w.ends = w.ends[:0]
	if t.useRegex {
		w.ends = splitGPT2(w.ends, buf)
	} else {
		w.ends = append(w.ends, len(buf))
	}
	from := 0
	for _, to := range w.ends {
		// The units of the piece, and for each byte of their characters
		// in byteChars (HuggingFace counts offsets in those) the span of
		// the original character it came from; the added space takes the
		// first character's.
		w.units, w.spans = w.units[:0], w.spans[:0]
		for i := from; i < to; {
			r, size := utf8.DecodeRuneInString(buf[i:])
			var span [2]int
			if i < prefix {
				_, n := utf8.DecodeRuneInString(seg)
				span = [2]int{start, start + n}
			} else {
				span = [2]int{start + i - prefix, start + i - prefix + size}
			}
			mark := len(w.units)
			if r == utf8.RuneError && size == 1 {
				w.units = utf8.AppendRune(w.units, r)
			} else {
				w.units = append(w.units, buf[i:i+size]...)
			}
			for _, b := range w.units[mark:] {
				w.spans = append(w.spans, span)
				if byteChars[b] >= utf8.RuneSelf {
					w.spans = append(w.spans, span)
				}
			}
			i += size
		}
		from = to
		pos := 0
		for _, s := range t.word(w, w.units) {
			out = append(out, Token{Text: t.tokens[s.id], ID: int(s.id), Start: w.spans[pos][0], End: w.spans[pos+int(s.n)-1][1], Word: word})
			pos += int(s.n)
		}
		word++
	}
	return out, word
}

// bpeSym is a symbol of a word: an id and the length of what it covers,
// in UTF-8 bytes of the word's byteChars characters.
type bpeSym struct{ id, n int32 }

// word returns the BPE tokens of one pre-tokenized piece, given as bytes:
// each byte's character, then the merges applied by rank (HuggingFace's
// Word::merge_all). Bytes whose character is not in the vocabulary become
// the unknown token or, without one, are dropped (and, as in HuggingFace,
// the spans of the tokens after them shift).
func (t *BPE) word(w *bpeWork, units []byte) []bpeSym {
	if t.ignoreMerges {
		var sb strings.Builder
		for _, b := range units {
			sb.WriteRune(byteChars[b])
		}
		if id, ok := t.ids[sb.String()]; ok {
			return []bpeSym{{int32(id), int32(sb.Len())}}
		}
	}
	if syms, ok := t.cache.get(units); ok {
		return syms
	}
	syms := w.syms[:0]
	pendingUnk := int32(0) // bytes of an unknown run not yet added
	for _, b := range units {
		id, n := t.byteID[b], int32(utf8.RuneLen(byteChars[b]))
		if id >= 0 {
			if pendingUnk > 0 {
				syms = append(syms, bpeSym{int32(t.unk), pendingUnk})
				pendingUnk = 0
			}
			syms = append(syms, bpeSym{id, n})
			continue
		}
		if t.unk < 0 {
			continue
		}
		if pendingUnk > 0 && !t.fuseUnk {
			syms = append(syms, bpeSym{int32(t.unk), pendingUnk})
			pendingUnk = 0
		}
		pendingUnk += n
	}
	if pendingUnk > 0 {
		syms = append(syms, bpeSym{int32(t.unk), pendingUnk})
	}
	w.syms = syms
	res := t.mergeAll(w, syms)
	out := make([]bpeSym, len(res))
	copy(out, res)
	t.cache.put(units, out)
	return out
}

// mergeItem is a candidate merge of the symbol at pos with the next one.
type mergeItem struct{ rank, pos, id int32 }

// mergeQueue is a min-heap of candidates by rank, then position.
type mergeQueue []mergeItem

func (q mergeQueue) Len() int { return len(q) }
func (q mergeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].pos < q[j].pos
}
func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *mergeQueue) Push(x any)   { *q = append(*q, x.(mergeItem)) }
func (q *mergeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// mergeAll applies the merges to syms, always the one of lowest rank first
// (leftmost among equals), with HuggingFace's checks for stale candidates:
// a candidate still counts when the pair now at its position merges into
// the same id.
func (t *BPE) mergeAll(w *bpeWork, syms []bpeSym) []bpeSym {
	n := len(syms)
	if n < 2 {
		return syms
	}
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range syms {
		prev[i], next[i] = int32(i-1), int32(i+1)
	}
	next[n-1] = -1
	q := w.queue[:0]
	for i := 0; i+1 < n; i++ {
		if m, ok := t.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			q = append(q, mergeItem{m.rank, int32(i), m.id})
		}
	}
	heap.Init(&q)
	for q.Len() > 0 {
		top := heap.Pop(&q).(mergeItem)
		p := top.pos
		if syms[p].n == 0 || next[p] < 0 {
			continue
		}
		r := next[p]
		if m, ok := t.merges[pairKey(syms[p].id, syms[r].id)]; !ok || m.id != top.id {
			continue
		}
		syms[p] = bpeSym{top.id, syms[p].n + syms[r].n}
		syms[r].n = 0
		next[p] = next[r]
		if next[r] >= 0 {
			prev[next[r]] = p
		}
		if pp := prev[p]; pp >= 0 {
			if m, ok := t.merges[pairKey(syms[pp].id, syms[p].id)]; ok {
				heap.Push(&q, mergeItem{m.rank, pp, m.id})
			}
		}
		if nn := next[p]; nn >= 0 {
			if m, ok := t.merges[pairKey(syms[p].id, syms[nn].id)]; ok {
				heap.Push(&q, mergeItem{m.rank, p, m.id})
			}
		}
	}
	w.queue = q
	out := w.result[:0]
	for _, s := range syms {
		if s.n > 0 {
			out = append(out, s)
		}
	}
	w.result = out
	return out
}

// Cache limits: HuggingFace keeps 10,000 words of fewer than 256 bytes.
const (
	bpeCacheWords   = 10000
	bpeCacheWordLen = 256
)

// bpeCache remembers the tokens of words already split; it stops growing
// when full.
type bpeCache struct {
	mu sync.RWMutex
	m  map[string][]bpeSym
}

func (c *bpeCache) get(units []byte) ([]bpeSym, bool) {
	if c == nil || len(units) >= bpeCacheWordLen {
		return nil, false
	}
	c.mu.RLock()
	s, ok := c.m[string(units)]
	c.mu.RUnlock()
	return s, ok
}

func (c *bpeCache) put(units []byte, syms []bpeSym) {
	if c == nil || len(units) >= bpeCacheWordLen {
		return
	}
	c.mu.Lock()
	if len(c.m) < bpeCacheWords {
		c.m[string(units)] = syms
	}
	c.mu.Unlock()
}

// Decode turns ids back into text, as HuggingFace's decode does: each id's
// added token or vocabulary entry (ids with neither are skipped; special
// added tokens too when skipSpecial), then the decoder: ByteLevel maps each
// character back to its byte (a token with a character outside the table
// is kept as it is) and reads the bytes as UTF-8, each invalid sequence
// becoming U+FFFD.
func (t *BPE) Decode(ids []int, skipSpecial bool) string {
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		tok := t.Token(id)
		if tok == "" {
			continue
		}
		if skipSpecial && t.isSpecial(tok) {
			continue
		}
		toks = append(toks, tok)
	}
	if t.decoder == "" {
		return strings.Join(toks, " ")
	}
	var b []byte
	for _, tok := range toks {
		mark := len(b)
		for _, r := range tok {
			c, ok := charBytes[r]
			if !ok {
				b = append(b[:mark], tok...)
				break
			}
			b = append(b, c)
		}
	}
	return lossyUTF8(b)
}

// isSpecial reports whether tok is the content of a special added token.
func (t *BPE) isSpecial(tok string) bool {
	for _, a := range t.added {
		if a.special && a.content == tok {
			return true
		}
	}
	return false
}

// lossyUTF8 returns b as a string with each maximal invalid subsequence
// replaced by U+FFFD, as Rust's String::from_utf8_lossy does (Go's
// strings.ToValidUTF8 replaces whole runs instead).
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			sb.Write(b[i : i+size])
			i += size
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += invalidPrefix(b[i:])
	}
	return sb.String()
}

// invalidPrefix returns the length of the maximal prefix of b, which does
// not start with a valid UTF-8 sequence, that could start one (at least 1).
func invalidPrefix(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(b); i++ {
		if b[i] < lo || b[i] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return i
}
