package shareddata

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/bertlab/bertlab/internal/tinydatabuild"
)

// Document is a pre-training document: its sentences in order. Key identifies it for the
// held-out split (the same text gives the same key).
type Document = tinydatabuild.Document

// Labelled is a text with its label (a review and its polarity).
type Labelled struct {
	Label, Text string
}

// Tagged is a sentence as words with one tag a word.
type Tagged struct {
	Words, Tags []string
}

// LineError names the line of a source file that could not be read, and why.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// eachLine calls fn with each line of b and its number (from 1), without the line ending;
// invalid UTF-8 is an error naming the line.
func eachLine(b []byte, fn func(n int, line string) error) error {
	n := 0
	for len(b) > 0 {
		n++
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		s := strings.TrimSuffix(string(line), "\r")
		if !utf8Valid(s) {
			return &LineError{n, "not UTF-8"}
		}
		if err := fn(n, s); err != nil {
			return err
		}
	}
	return nil
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// ParseParagraphs reads one paragraph a line (Simple Wikipedia, a dialogue a line) into one
// document a paragraph, split into sentences by tinydatabuild.SplitSentences. Blank lines
// are skipped.
func ParseParagraphs(b []byte) ([]Document, error) {
	var docs []Document
	err := eachLine(b, func(_ int, line string) error {
		if p := tinydatabuild.CleanLine(line); p != "" {
			docs = append(docs, Document{Key: p, Sentences: tinydatabuild.SplitSentences(p)})
		}
		return nil
	})
	return docs, err
}

// ParseLines reads one text a line (Tatoeba's sentences), blank lines skipped.
func ParseLines(b []byte) ([]string, error) {
	var out []string
	err := eachLine(b, func(_ int, line string) error {
		if s := tinydatabuild.CleanLine(line); s != "" {
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// ParseLabelled reads label<TAB>text lines (OneStopEnglish's level and document, a review's
// polarity and text). Blank lines are skipped; a line without a tab, with an empty label or
// text is an error naming it.
func ParseLabelled(b []byte) ([]Labelled, error) {
	var out []Labelled
	err := eachLine(b, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		label, text, ok := strings.Cut(line, "\t")
		label, text = strings.TrimSpace(label), tinydatabuild.CleanLine(text)
		switch {
		case !ok:
			return &LineError{n, "no tab between label and text"}
		case label == "":
			return &LineError{n, "empty label"}
		case text == "":
			return &LineError{n, "empty text"}
		}
		out = append(out, Labelled{label, text})
		return nil
	})
	return out, err
}

// ParseTagged reads sentence<TAB>tags lines (UD English-EWT as stored here): the words and the
// tags separated by spaces, as many tags as words. Blank lines are skipped.
func ParseTagged(b []byte) ([]Tagged, error) {
	var out []Tagged
	err := eachLine(b, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		text, tags, ok := strings.Cut(line, "\t")
		if !ok {
			return &LineError{n, "no tab between the sentence and its tags"}
		}
		w, t := strings.Fields(text), strings.Fields(tags)
		if len(w) == 0 {
			return &LineError{n, "no words"}
		}
		if len(w) != len(t) {
			return &LineError{n, fmt.Sprintf("%d words and %d tags", len(w), len(t))}
		}
		out = append(out, Tagged{w, t})
		return nil
	})
	return out, err
}

// SplitLowercase splits text that is lowercased and tokenized with spaces around punctuation
// (the movie reviews) into sentences: after a token ".", "!" or "?" standing alone, or a run of
// them.
func SplitLowercase(text string) []string {
	words := strings.Fields(text)
	var out []string
	start := 0
	for i, w := range words {
		end := w == "." || w == "!" || w == "?" || w == "..."
		next := i+1 < len(words) && (words[i+1] == "." || words[i+1] == "!" || words[i+1] == "?")
		if end && !next {
			out = append(out, strings.Join(words[start:i+1], " "))
			start = i + 1
		}
	}
	if start < len(words) {
		out = append(out, strings.Join(words[start:], " "))
	}
	return out
}
