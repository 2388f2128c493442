package tokenizer

import (
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// TrainerConfig are the settings of a WordPiece vocabulary trainer.
type TrainerConfig struct {
	// VocabSize is the number of tokens wanted, special tokens and the alphabet included. The
	// alphabet is always kept whole, so a corpus with more characters than VocabSize leaves
	// room for nothing else and gives a larger vocabulary.
	VocabSize int
	// MinFrequency is how often a character must occur in the corpus to be in the alphabet,
	// and how often a pair must occur to be merged; less than 1 means 1.
	MinFrequency int
	// Tokenizer holds the normaliser settings the corpus is read with and the names of the
	// special tokens; it becomes the trained tokenizer's Config. Zero means DefaultConfig.
	Tokenizer Config
}

// DefaultTrainer returns the settings of HuggingFace's BertWordPieceTokenizer.train for a
// vocabulary of size tokens: lowercase, accents stripped, pairs merged from two occurrences.
func DefaultTrainer(size int) TrainerConfig {
	return TrainerConfig{VocabSize: size, MinFrequency: 2, Tokenizer: DefaultConfig()}
}

// Trainer learns a WordPiece vocabulary from text with the algorithm of HuggingFace
// tokenizers' WordPieceTrainer: byte-pair-encoding merges on characters, where a piece that
// does not start a word carries the "##" continuation prefix (the BPE of Sennrich et al. 2016,
// which is how BERT-style vocabularies are usually built today), not the likelihood-based
// selection of Schuster & Nakajima (2012), whose score freq(ab)/(freq(a)·freq(b)) favours rare
// pieces that always occur together and leaves frequent words split in a small vocabulary.
//
// The steps:
//
//  1. Text is normalised and split into words exactly as Tokenizer does (cleaning, CJK
//     splitting, lowercasing, accent stripping, whitespace and punctuation split), and the
//     distinct words are counted. Special tokens written in the text are skipped; words longer
//     than MaxInputCharsPerWord are skipped too (the tokenizer maps them to the unknown token).
//  2. The vocabulary starts with the special tokens in the order [PAD], [UNK], [CLS], [SEP],
//     [MASK] (ids 0-4, as BertWordPieceTokenizer numbers them, so pad_token_id is 0), then
//     every character seen at least MinFrequency times, by code point, then the same characters
//     with "##". Any word made of those characters therefore tokenizes without [UNK].
//  3. Each word is a sequence of pieces: its first character, then "##"-prefixed characters.
//     The pair of adjacent pieces that occurs most often in the corpus (counting every word
//     as often as it occurs) is merged into a new piece ("th" + "##e" = "the", "##i" + "##ng"
//     = "##ing") and appended to the vocabulary (unless another merge made the same string
//     already), until it holds VocabSize tokens or no pair occurs MinFrequency times. Ties go to the pair whose pieces entered the vocabulary
//     first, so the result depends only on the text and the settings: the order in which
//     text is added does not matter.
//
// The vocabulary is then used by Tokenizer's greedy longest-match-first WordPiece, as BERT
// uses a vocabulary trained this way; the merges themselves are not kept. A Trainer is not
// safe for concurrent use.
type Trainer struct {
	cfg      TrainerConfig
	n        normalizer
	specials []string
	words    map[string]int64
	buf      []byte
}

// NewTrainer returns a trainer with no text yet.
func NewTrainer(c TrainerConfig) (*Trainer, error) {
	if c.VocabSize < 1 {
		return nil, fmt.Errorf("vocab trainer: vocabulary size %d", c.VocabSize)
	}
	if c.Tokenizer == (Config{}) {
		c.Tokenizer = DefaultConfig()
	}
	c.MinFrequency = max(c.MinFrequency, 1)
	t := &Trainer{cfg: c, words: map[string]int64{}}
	tc := c.Tokenizer
	for _, s := range []struct{ key, name string }{
		{"pad_token", tc.PadToken}, {"unk_token", tc.UnkToken}, {"cls_token", tc.ClsToken},
		{"sep_token", tc.SepToken}, {"mask_token", tc.MaskToken},
	} {
		switch {
		case s.name == "":
			return nil, fmt.Errorf("vocab trainer: %s is empty", s.key)
		case !utf8.ValidString(s.name) || strings.ContainsAny(s.name, "\r\n") || len(s.name) > MaxTokenBytes:
			return nil, fmt.Errorf("vocab trainer: %s %q cannot be a vocab.txt line", s.key, s.name)
		}
		if !contains(t.specials, s.name) {
			t.specials = append(t.specials, s.name)
		}
	}
	t.n.lower, t.n.strip, t.n.chinese = tc.DoLowerCase, tc.stripAccents(), tc.TokenizeChineseChars
	return t, nil
}

// Add counts the words of text (any length: a sentence, a document).
func (t *Trainer) Add(text string) {
	eachWord(&t.n, t.specials, text, &t.buf, func(w []byte) { t.words[string(w)]++ })
}

// Words returns the number of distinct words counted so far.
func (t *Trainer) Words() int { return len(t.words) }

// PreTokenize returns the words of text as a Tokenizer with settings c sees them before
// WordPiece: normalised, split at whitespace and punctuation. Special tokens written in the
// text and words longer than MaxInputCharsPerWord are left out, as the vocabulary trainer
// leaves them out.
func PreTokenize(c Config, text string) []string {
	n := normalizer{lower: c.DoLowerCase, strip: c.stripAccents(), chinese: c.TokenizeChineseChars}
	var specials []string
	for _, s := range []string{c.PadToken, c.UnkToken, c.ClsToken, c.SepToken, c.MaskToken} {
		if s != "" && !contains(specials, s) {
			specials = append(specials, s)
		}
	}
	var out []string
	var buf []byte
	eachWord(&n, specials, text, &buf, func(w []byte) { out = append(out, string(w)) })
	return out
}

// eachWord calls fn with the UTF-8 bytes of every word of text (valid until fn returns).
func eachWord(n *normalizer, specials []string, text string, buf *[]byte, fn func([]byte)) {
	rest := 0
	for i := 0; i < len(text); i++ {
		// The longest special token that starts here, as Tokenizer matches them.
		best := ""
		for _, sp := range specials {
			if len(sp) > len(best) && strings.HasPrefix(text[i:], sp) {
				best = sp
			}
		}
		if best != "" {
			eachWordOfSpan(n, text[rest:i], buf, fn)
			i += len(best) - 1
			rest = i + 1
		}
	}
	eachWordOfSpan(n, text[rest:], buf, fn)
}

// eachWordOfSpan is BertPreTokenizer over the normalised span, as Tokenizer.tokenizeSpan
// splits it.
func eachWordOfSpan(n *normalizer, span string, buf *[]byte, fn func([]byte)) {
	if span == "" {
		return
	}
	cs := n.normalize(span, 0)
	for i := 0; i < len(cs); {
		if isWhitespace(cs[i].r) {
			i++
			continue
		}
		j := i + 1
		if !isPunctuation(cs[i].r) {
			for j < len(cs) && !isWhitespace(cs[j].r) && !isPunctuation(cs[j].r) {
				j++
			}
		}
		if j-i <= MaxInputCharsPerWord {
			b := (*buf)[:0]
			for _, c := range cs[i:j] {
				b = utf8.AppendRune(b, c.r)
			}
			*buf = b
			fn(b)
		}
		i = j
	}
}

// trainWord is a distinct word of the corpus as vocabulary ids (-1: a character outside the
// alphabet) and how often it occurs.
type trainWord struct {
	syms []int32
	freq int64
}

// Train learns the vocabulary from the text added so far and returns it as a Tokenizer with
// the configured settings (write it with SaveDir).
func (t *Trainer) Train() (*Tokenizer, error) {
	if len(t.words) == 0 {
		return nil, errors.New("vocab trainer: no text")
	}
	minFreq := int64(t.cfg.MinFrequency)
	// Words in sorted order, so that nothing depends on map iteration.
	keys := make([]string, 0, len(t.words))
	for w := range t.words {
		keys = append(keys, w)
	}
	slices.Sort(keys)

	// The alphabet: characters counted wherever they occur.
	charFreq := map[rune]int64{}
	for _, w := range keys {
		f := t.words[w]
		for _, r := range w {
			charFreq[r] += f
		}
	}
	var alphabet []rune
	for r, f := range charFreq {
		if f >= minFreq {
			alphabet = append(alphabet, r)
		}
	}
	slices.Sort(alphabet)

	var tokens []string
	ids := map[string]int32{}
	addToken := func(s string) int32 {
		if id, ok := ids[s]; ok {
			return id
		}
		id := int32(len(tokens))
		tokens = append(tokens, s)
		ids[s] = id
		return id
	}
	for _, s := range t.specials {
		addToken(s)
	}
	first := make(map[rune]int32, len(alphabet))
	cont := make(map[rune]int32, len(alphabet))
	for _, r := range alphabet {
		first[r] = addToken(string(r))
	}
	for _, r := range alphabet {
		cont[r] = addToken(ContinuationPrefix + string(r))
	}

	words := make([]trainWord, len(keys))
	for i, w := range keys {
		syms := make([]int32, 0, utf8.RuneCountInString(w))
		for k, r := range w {
			id, ok := first[r]
			if k > 0 {
				id, ok = cont[r]
			}
			if !ok {
				id = -1
			}
			syms = append(syms, id)
		}
		words[i] = trainWord{syms, t.words[w]}
	}

	m := newMerger(words)
	for len(tokens) < t.cfg.VocabSize {
		a, b, count, ok := m.best()
		if !ok || count < minFreq {
			break
		}
		// At most MaxInputCharsPerWord characters and "##": well within MaxTokenBytes.
		merged := tokens[a] + strings.TrimPrefix(tokens[b], ContinuationPrefix)
		m.merge(a, b, addToken(merged))
	}
	v, err := NewVocab(tokens)
	if err != nil {
		return nil, fmt.Errorf("vocab trainer: %w", err)
	}
	return New(v, t.cfg.Tokenizer)
}

// merger holds the words as pieces and the count of every adjacent pair, and merges pairs.
type merger struct {
	words []trainWord
	count map[uint64]int64
	// where lists the words in which a pair has occurred (it may have gone since: merge
	// checks).
	where map[uint64][]int32
	queue pairQueue
	seen  []uint32 // the merge that last visited each word
	round uint32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func newMerger(words []trainWord) *merger {
	m := &merger{words: words, count: map[uint64]int64{}, where: map[uint64][]int32{}, seen: make([]uint32, len(words))}
	for i, w := range words {
		for k := 0; k+1 < len(w.syms); k++ {
			a, b := w.syms[k], w.syms[k+1]
			if a < 0 || b < 0 {
				continue
			}
			key := pairKey(a, b)
			m.count[key] += w.freq
			if ws := m.where[key]; len(ws) == 0 || ws[len(ws)-1] != int32(i) {
				m.where[key] = append(ws, int32(i))
			}
		}
	}
	m.queue = make(pairQueue, 0, len(m.count))
	for key, c := range m.count {
		m.queue = append(m.queue, pairEntry{int32(key >> 32), int32(uint32(key)), c})
	}
	heap.Init(&m.queue)
	return m
}

// best returns the most frequent pair. Queue entries hold counts that were true when pushed;
// counts of a pair only fall until one of its pieces is made anew, which pushes it again, so a
// stale entry is an upper bound that is corrected and pushed back.
func (m *merger) best() (a, b int32, count int64, ok bool) {
	for m.queue.Len() > 0 {
		e := heap.Pop(&m.queue).(pairEntry)
		cur := m.count[pairKey(e.a, e.b)]
		if cur == e.count {
			return e.a, e.b, cur, true
		}
		if cur > 0 {
			heap.Push(&m.queue, pairEntry{e.a, e.b, cur})
		}
	}
	return 0, 0, 0, false
}

// merge replaces every occurrence of a followed by b with id, left to right, and updates the
// pair counts of the words concerned.
func (m *merger) merge(a, b, id int32) {
	key := pairKey(a, b)
	m.round++
	grown := map[uint64]bool{}
	for _, wi := range m.where[key] {
		if m.seen[wi] == m.round {
			continue
		}
		m.seen[wi] = m.round
		w := &m.words[wi]
		if !hasPair(w.syms, a, b) {
			continue
		}
		m.addPairs(w.syms, -w.freq, -1, nil)
		out := w.syms[:0]
		for k := 0; k < len(w.syms); k++ {
			if k+1 < len(w.syms) && w.syms[k] == a && w.syms[k+1] == b {
				out = append(out, id)
				k++
				continue
			}
			out = append(out, w.syms[k])
		}
		w.syms = out
		m.addPairs(w.syms, w.freq, wi, func(k uint64) {
			if int32(k>>32) == id || int32(uint32(k)) == id {
				grown[k] = true
			}
		})
	}
	delete(m.where, key)
	if m.count[key] == 0 {
		delete(m.count, key)
	}
	// Sorted, so that the queue's layout (and nothing else) does not depend on map order.
	keys := make([]uint64, 0, len(grown))
	for k := range grown {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		heap.Push(&m.queue, pairEntry{int32(k >> 32), int32(uint32(k)), m.count[k]})
	}
}

// addPairs adds delta to the count of every pair of syms; with wi >= 0 it records the word in
// the pairs' lists and calls touched for each pair.
func (m *merger) addPairs(syms []int32, delta int64, wi int32, touched func(uint64)) {
	for k := 0; k+1 < len(syms); k++ {
		a, b := syms[k], syms[k+1]
		if a < 0 || b < 0 {
			continue
		}
		key := pairKey(a, b)
		m.count[key] += delta
		if wi >= 0 {
			if ws := m.where[key]; len(ws) == 0 || ws[len(ws)-1] != wi {
				m.where[key] = append(ws, wi)
			}
			touched(key)
		}
	}
}

func hasPair(syms []int32, a, b int32) bool {
	for k := 0; k+1 < len(syms); k++ {
		if syms[k] == a && syms[k+1] == b {
			return true
		}
	}
	return false
}

// pairEntry is a pair of pieces and its count when queued.
type pairEntry struct {
	a, b  int32
	count int64
}

// pairQueue is a max-heap of pairs by count; among equal counts the pair of earlier ids comes
// first.
type pairQueue []pairEntry

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	if q[i].count != q[j].count {
		return q[i].count > q[j].count
	}
	if q[i].a != q[j].a {
		return q[i].a < q[j].a
	}
	return q[i].b < q[j].b
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(pairEntry)) }
func (q *pairQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// Coverage tokenizes lines and counts their words, their pieces and the words that became
// [UNK]: how well the vocabulary fits a text (pieces/words near 1 is a close fit).
func (t *Tokenizer) Coverage(lines []string) (words, pieces, unknown int) {
	for _, l := range lines {
		toks := t.Tokenize(l)
		pieces += len(toks)
		for i, tk := range toks {
			if i == 0 || tk.Word != toks[i-1].Word {
				words++
			}
			if tk.ID == t.UnkID() {
				unknown++
			}
		}
	}
	return words, pieces, unknown
}
