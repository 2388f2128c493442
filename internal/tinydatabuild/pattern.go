package tinydatabuild

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// LabelledText is one sentiment example.
type LabelledText struct {
	Label, Text string
}

// SentimentStats counts what the polarity file held and what was dropped.
type SentimentStats struct {
	Rows, Duplicates, Conflicting int
}

// PangLeeSentences reads pattern's polarity-en-pang&lee2.csv: CSV rows of "1" (positive) or "-1"
// (negative) and a sentence, which may end in a newline inside its quotes. Whitespace in the text
// is collapsed (tabs and newlines included, so the TSV stays one example a line). A text that
// occurs again with the same label is dropped as a duplicate; a text with both labels is dropped
// altogether.
func PangLeeSentences(r io.Reader) ([]LabelledText, SentimentStats, error) {
	var st SentimentStats
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = 2
	labels := map[string]string{"1": "positive", "-1": "negative"}
	var all []LabelledText
	seen := map[string]string{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, err
		}
		st.Rows++
		label, ok := labels[rec[0]]
		if !ok {
			line, _ := cr.FieldPos(0)
			return nil, st, fmt.Errorf("line %d: label %q is neither 1 nor -1", line, rec[0])
		}
		text := clean(rec[1])
		if text == "" || !utf8.ValidString(text) {
			line, _ := cr.FieldPos(1)
			return nil, st, fmt.Errorf("line %d: empty or invalid text", line)
		}
		if prev, dup := seen[text]; dup {
			if prev != label {
				seen[text] = "conflict"
			}
			st.Duplicates++
			continue
		}
		seen[text] = label
		all = append(all, LabelledText{label, text})
	}
	out := all[:0]
	for _, e := range all {
		if seen[e.Text] == "conflict" {
			st.Conflicting++
			continue
		}
		out = append(out, e)
	}
	return out, st, nil
}

// TaggedSentence is one sentence of the POS data.
type TaggedSentence struct {
	Tokens, Tags []string
}

// Key identifies a sentence by its tokens.
func (s TaggedSentence) Key() string { return strings.Join(s.Tokens, " ") }

// POSStats counts what the tagged file held and why sentences were left out.
type POSStats struct {
	Lines, BadTag, TooShort, TooLong, Duplicates, Kept int
}

// Sentence lengths, in tokens, kept for the POS data: shorter lines are mostly fragments of the
// source's sentence splitting ("Ms ."), longer ones rare.
const (
	MinPOSTokens = 3
	MaxPOSTokens = 60
)

// pennTags is the Penn Treebank tag set, plus the plain double quote that the source uses for
// both opening and closing quotes.
var pennTags = map[string]bool{}

func init() {
	for _, t := range strings.Fields("CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS " +
		"PRP PRP$ RB RBR RBS RP SYM TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB # $ `` '' ( ) , . : \"") {
		pennTags[t] = true
	}
}

// OANCSentences reads pattern's tagged-en-oanc.txt: one sentence a line, tokens "word/TAG"
// separated by spaces (split at the last "/"). Sentences with a token outside the Penn tag set
// (the source has a few ambiguous tags such as "VBG|NN") or a malformed token, of fewer than
// MinPOSTokens or more than MaxPOSTokens tokens, or repeating an earlier sentence are left out.
func OANCSentences(r io.Reader) ([]TaggedSentence, POSStats, error) {
	var st POSStats
	var out []TaggedSentence
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "\uFEFF")
		st.Lines++
		if !utf8.ValidString(line) {
			return nil, st, fmt.Errorf("line %d: not valid UTF-8", st.Lines)
		}
		fields := strings.Fields(line)
		s := TaggedSentence{}
		ok := true
		for _, f := range fields {
			i := strings.LastIndexByte(f, '/')
			if i <= 0 || i == len(f)-1 || !pennTags[f[i+1:]] {
				ok = false
				break
			}
			s.Tokens = append(s.Tokens, f[:i])
			s.Tags = append(s.Tags, f[i+1:])
		}
		switch {
		case !ok:
			st.BadTag++
		case len(s.Tokens) < MinPOSTokens:
			st.TooShort++
		case len(s.Tokens) > MaxPOSTokens:
			st.TooLong++
		case seen[s.Key()]:
			st.Duplicates++
		default:
			seen[s.Key()] = true
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, st, fmt.Errorf("line %d: %w", st.Lines+1, err)
	}
	st.Kept = len(out)
	return out, st, nil
}
