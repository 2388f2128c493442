package tinydatabuild

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WordNetPOS are the data files of WordNet's database, in the order of the corpus.
var WordNetPOS = []string{"noun", "verb", "adj", "adv"}

// WordNetStats counts what one data file held.
type WordNetStats struct {
	Synsets, WithExamples, Examples int
}

// WordNetSynsets reads one WordNet 3.0 data file (data.noun, ...) and returns one document for
// every synset that has at least one quoted example: its gloss as "lemma: definition" (the
// synset's first word, underscores as spaces, adjective markers such as "(a)" dropped; the
// definitions as WordNet writes them, joined by "; "), then each distinct example on its own
// line. Text after an example up to the next ";" (an attribution such as "- Shakespeare") is
// dropped. pos names the file in the documents' keys.
func WordNetSynsets(pos string, r io.Reader) ([]Document, WordNetStats, error) {
	var st WordNetStats
	var docs []Document
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		if len(line) == 0 || line[0] == ' ' { // the licence header lines start with two spaces
			continue
		}
		if !utf8.Valid(line) {
			return nil, st, fmt.Errorf("data.%s line %d: not valid UTF-8", pos, lineNo)
		}
		head, gloss, ok := bytes.Cut(line, []byte(" | "))
		if !ok {
			return nil, st, fmt.Errorf("data.%s line %d: no gloss", pos, lineNo)
		}
		f := strings.Fields(string(head))
		if len(f) < 6 {
			return nil, st, fmt.Errorf("data.%s line %d: %d header fields", pos, lineNo, len(f))
		}
		offset := f[0]
		nWords, err := strconv.ParseUint(f[3], 16, 8)
		if err != nil || nWords == 0 {
			return nil, st, fmt.Errorf("data.%s line %d: word count %q", pos, lineNo, f[3])
		}
		st.Synsets++
		defs, examples := splitGloss(string(gloss))
		if len(examples) == 0 {
			continue
		}
		st.WithExamples++
		st.Examples += len(examples)
		d := Document{Key: "wordnet/" + pos + "/" + offset}
		if defs != "" {
			d.Sentences = append(d.Sentences, lemmaText(f[4])+": "+defs)
		}
		d.Sentences = append(d.Sentences, examples...)
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, st, fmt.Errorf("data.%s line %d: %w", pos, lineNo+1, err)
	}
	return docs, st, nil
}

// lemmaText turns a WordNet word field into text: "ice_cream" -> "ice cream", "able(a)" -> "able".
func lemmaText(w string) string {
	if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
		w = w[:i]
	}
	return strings.ReplaceAll(w, "_", " ")
}

// splitGloss separates a gloss into its definitions (joined by "; ") and its quoted examples.
func splitGloss(g string) (string, []string) {
	var defs, examples []string
	seen := map[string]bool{}
	var cur strings.Builder
	flush := func() {
		if s := clean(cur.String()); s != "" {
			defs = append(defs, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(g); {
		switch g[i] {
		case '"':
			rest := g[i+1:]
			ex := rest
			i = len(g)
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				ex = rest[:j]
				i = len(g) - len(rest) + j + 1
			}
			if s := clean(ex); s != "" && !seen[s] {
				seen[s] = true
				examples = append(examples, s)
			}
			// Skip an attribution up to the next separator.
			if k := strings.IndexByte(g[i:], ';'); k >= 0 {
				i += k + 1
			} else {
				i = len(g)
			}
		case ';':
			flush()
			i++
		default:
			cur.WriteByte(g[i])
			i++
		}
	}
	flush()
	return strings.Join(defs, "; "), examples
}

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }
