package tokenizer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ContinuationPrefix marks a WordPiece that continues a word ("##ing").
const ContinuationPrefix = "##"

// Limits that keep a vocabulary reader from being used to exhaust memory; real
// BERT vocabularies hold 20k-120k tokens of at most a few dozen bytes.
const (
	// MaxVocabTokens is the largest number of tokens a vocabulary may hold.
	MaxVocabTokens = 1 << 22
	// MaxTokenBytes is the longest token, in bytes, a vocabulary may hold.
	MaxTokenBytes = 1024
)

// Vocab maps WordPiece tokens to ids and back. The id of a token is its line
// number (from 0) in vocab.txt. A Vocab is immutable and safe for concurrent
// use.
type Vocab struct {
	tokens []string
	ids    map[string]int
	// cont maps a continuation piece without its "##" to the id of "##piece",
	// so that WordPiece looks up continuations without building strings.
	cont map[string]int
	// Longest token (bytes) in ids and in cont: WordPiece never tries longer
	// candidates, which bounds its work per word.
	maxLen, maxContLen int
}

// NewVocab builds a vocabulary whose ids are the indexes of tokens. Tokens
// must be distinct, valid UTF-8, at most MaxTokenBytes long, must not contain
// a newline nor end with a carriage return (they could not be written to
// vocab.txt and read back).
func NewVocab(tokens []string) (*Vocab, error) {
	if len(tokens) == 0 {
		return nil, errors.New("vocab: no tokens")
	}
	if len(tokens) > MaxVocabTokens {
		return nil, fmt.Errorf("vocab: %d tokens, more than the limit of %d", len(tokens), MaxVocabTokens)
	}
	v := newVocab(len(tokens))
	for i, tok := range tokens {
		if err := v.add(tok); err != nil {
			return nil, fmt.Errorf("vocab: token %d: %w", i, err)
		}
	}
	return v, nil
}

// ReadVocab reads a vocab.txt: one token per line, the id of a token being
// its line number counted from 0. Lines may end in "\n" or "\r\n"; a final
// newline is optional. Duplicate tokens, invalid UTF-8, lines longer than
// MaxTokenBytes and files of more than MaxVocabTokens lines are errors that
// name the line.
func ReadVocab(r io.Reader) (*Vocab, error) {
	sc := bufio.NewScanner(r)
	// Room for the longest allowed token plus "\r\n"; a longer line fails the
	// scan with bufio.ErrTooLong.
	sc.Buffer(make([]byte, 0, 64*1024), MaxTokenBytes+2)
	v := newVocab(0)
	for sc.Scan() {
		line := len(v.tokens) + 1
		if len(v.tokens) == MaxVocabTokens {
			return nil, fmt.Errorf("vocab line %d: more than %d tokens", line, MaxVocabTokens)
		}
		if err := v.add(sc.Text()); err != nil {
			return nil, fmt.Errorf("vocab line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("vocab line %d: longer than %d bytes", len(v.tokens)+1, MaxTokenBytes)
		}
		return nil, fmt.Errorf("vocab line %d: %w", len(v.tokens)+1, err)
	}
	if len(v.tokens) == 0 {
		return nil, errors.New("vocab: no tokens")
	}
	return v, nil
}

func newVocab(n int) *Vocab {
	return &Vocab{
		tokens: make([]string, 0, n),
		ids:    make(map[string]int, n),
		cont:   make(map[string]int, n/4),
	}
}

// add appends tok with the next id.
func (v *Vocab) add(tok string) error {
	switch {
	case len(tok) > MaxTokenBytes:
		return fmt.Errorf("token of %d bytes, longer than %d", len(tok), MaxTokenBytes)
	case !utf8.ValidString(tok):
		return fmt.Errorf("token %q is not valid UTF-8", tok)
	case strings.Contains(tok, "\n"):
		return fmt.Errorf("token %q contains a newline", tok)
	case strings.HasSuffix(tok, "\r"):
		return fmt.Errorf("token %q ends with a carriage return", tok)
	}
	if first, dup := v.ids[tok]; dup {
		return fmt.Errorf("duplicate token %q (first at id %d, line %d)", tok, first, first+1)
	}
	id := len(v.tokens)
	v.tokens = append(v.tokens, tok)
	v.ids[tok] = id
	v.maxLen = max(v.maxLen, len(tok))
	if piece, ok := strings.CutPrefix(tok, ContinuationPrefix); ok {
		v.cont[piece] = id
		v.maxContLen = max(v.maxContLen, len(piece))
	}
	return nil
}

// ID returns the id of token and whether the vocabulary holds it.
func (v *Vocab) ID(token string) (int, bool) {
	id, ok := v.ids[token]
	return id, ok
}

// Token returns the token with the given id, or "" when id is out of range.
func (v *Vocab) Token(id int) string {
	if id < 0 || id >= len(v.tokens) {
		return ""
	}
	return v.tokens[id]
}

// Len returns the number of tokens, which is also the model's vocab_size.
func (v *Vocab) Len() int { return len(v.tokens) }

// WriteTo writes the vocabulary in vocab.txt form, one token per line ending
// in "\n", and returns the number of bytes written. It implements io.WriterTo.
func (v *Vocab) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriter(cw)
	for _, tok := range v.tokens {
		bw.WriteString(tok)
		if err := bw.WriteByte('\n'); err != nil {
			return cw.n, err
		}
	}
	err := bw.Flush()
	return cw.n, err
}

// countingWriter counts the bytes that reach w, for io.WriterTo's result.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
