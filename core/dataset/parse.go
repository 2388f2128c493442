// Package dataset holds bertlab's data formats: the example types and the parser of every format
// a dataset comes in. It imports nothing of bertlab's, so that anything may read data without
// linking the data itself (tinydata embeds the files; core/train turns examples into features).
// The parsers read any io.Reader, so the same formats work for files a user brings:
//
//   - pre-training text: one sentence a line, a blank line between documents (ParsePretrain,
//     ParseText for text in a string);
//   - classification: label<TAB>text, or label<TAB>a<TAB>b for sentence pairs
//     (ParseClassification);
//   - tagging, CoNLL style: token<TAB>tag a line, a blank line after each sentence (ParseCoNLL);
//   - extractive question answering: SQuAD v1.1 JSON (ParseSQuAD).
package dataset

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLineBytes bounds one line of any format, so that a file without line breaks cannot make a
// parser hold it whole.
const MaxLineBytes = 64 << 10

// ParseError says which line of the input is wrong and why.
type ParseError struct {
	Line int // 1-based
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Document is a run of sentences that belong together (a chapter, a dictionary entry): the unit
// that next-sentence prediction draws its pairs from.
type Document struct {
	Sentences []string
}

// Example is one classification example: a label and a text, and for sentence-pair tasks a
// second text.
type Example struct {
	Label string
	Text  string
	Pair  string // "" unless the file has pairs
}

// TaggedSentence is a sentence of a tagging task: one tag per token.
type TaggedSentence struct {
	Tokens []string
	Tags   []string
}

// lines calls fn with each line (without its line ending, CRLF or LF; a leading byte-order mark
// removed) and its 1-based number. It rejects lines longer than MaxLineBytes, invalid UTF-8,
// control characters other than tab, and byte-order marks past the start.
func lines(r io.Reader, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLineBytes+2) // room for the line ending
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if len(line) > MaxLineBytes {
			return &ParseError{n, fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
		}
		if !utf8.ValidString(line) {
			return &ParseError{n, "not valid UTF-8"}
		}
		for i, c := range line {
			switch {
			case (c < 0x20 && c != '\t') || c == 0x7f:
				return &ParseError{n, fmt.Sprintf("control character %U at byte %d", c, i+1)}
			case c == '\uFEFF':
				return &ParseError{n, fmt.Sprintf("byte-order mark at byte %d (allowed only at the start of the input)", i+1)}
			}
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	switch err := sc.Err(); err {
	case nil:
		return nil
	case bufio.ErrTooLong:
		return &ParseError{n + 1, fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
	default:
		return &ParseError{n + 1, "read: " + err.Error()}
	}
}

// ParsePretrain reads pre-training text: one sentence a line, documents separated by one or more
// blank lines. Space at either end of a line is dropped; a line of only spaces is blank.
func ParsePretrain(r io.Reader) ([]Document, error) {
	var docs []Document
	var cur []string
	err := lines(r, func(n int, line string) error {
		line = strings.TrimSpace(line)
		if line == "" {
			if len(cur) > 0 {
				docs = append(docs, Document{cur})
				cur = nil
			}
			return nil
		}
		cur = append(cur, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cur) > 0 {
		docs = append(docs, Document{cur})
	}
	return docs, nil
}

// ParseText is ParsePretrain for text held in a string (text pasted into the page).
func ParseText(text string) ([]Document, error) {
	return ParsePretrain(strings.NewReader(text))
}

// Sentences returns each document's sentences: the shape core/train tokenizes.
func Sentences(docs []Document) [][]string {
	out := make([][]string, len(docs))
	for i, d := range docs {
		out[i] = d.Sentences
	}
	return out
}

// ParseClassification reads label<TAB>text lines, or label<TAB>a<TAB>b for sentence pairs; a file
// holds one kind or the other. Blank lines are skipped. Labels and texts must not be empty;
// space at either end of a field is dropped.
func ParseClassification(r io.Reader) ([]Example, error) {
	var out []Example
	arity, arityLine := 0, 0
	err := lines(r, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		f := strings.Split(line, "\t")
		if len(f) != 2 && len(f) != 3 {
			return &ParseError{n, fmt.Sprintf("want label<TAB>text or label<TAB>a<TAB>b, got %d tab-separated fields", len(f))}
		}
		if arity == 0 {
			arity, arityLine = len(f), n
		} else if len(f) != arity {
			return &ParseError{n, fmt.Sprintf("%d fields, but line %d has %d: a file holds single texts or pairs, not both", len(f), arityLine, arity)}
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		switch {
		case f[0] == "":
			return &ParseError{n, "empty label"}
		case f[1] == "":
			return &ParseError{n, "empty text"}
		case len(f) == 3 && f[2] == "":
			return &ParseError{n, "empty second text"}
		}
		e := Example{Label: f[0], Text: f[1]}
		if len(f) == 3 {
			e.Pair = f[2]
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ParseCoNLL reads token<TAB>tag lines, sentences separated by one or more blank lines. Tokens
// and tags must not be empty nor hold white space.
func ParseCoNLL(r io.Reader) ([]TaggedSentence, error) {
	var out []TaggedSentence
	var cur TaggedSentence
	err := lines(r, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			if len(cur.Tokens) > 0 {
				out = append(out, cur)
				cur = TaggedSentence{}
			}
			return nil
		}
		f := strings.Split(line, "\t")
		if len(f) != 2 {
			return &ParseError{n, fmt.Sprintf("want token<TAB>tag, got %d tab-separated fields", len(f))}
		}
		for i, what := range []string{"token", "tag"} {
			switch {
			case f[i] == "":
				return &ParseError{n, "empty " + what}
			case strings.IndexFunc(f[i], unicode.IsSpace) >= 0:
				return &ParseError{n, fmt.Sprintf("%s %q holds a space", what, f[i])}
			}
		}
		cur.Tokens = append(cur.Tokens, f[0])
		cur.Tags = append(cur.Tags, f[1])
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cur.Tokens) > 0 {
		out = append(out, cur)
	}
	return out, nil
}
