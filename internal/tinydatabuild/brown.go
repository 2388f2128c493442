package tinydatabuild

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// BrownGenres names the Brown corpus's fifteen genres by the letter after the "c" of a sample's
// file name (ca01 is press reportage), as its CONTENTS file lists them.
var BrownGenres = map[byte]string{
	'a': "press: reportage", 'b': "press: editorial", 'c': "press: reviews", 'd': "religion",
	'e': "skill and hobbies", 'f': "popular lore", 'g': "belles-lettres",
	'h': "miscellaneous: government & house organs", 'j': "learned", 'k': "fiction: general",
	'l': "fiction: mystery", 'm': "fiction: science", 'n': "fiction: adventure",
	'p': "fiction: romance", 'r': "humor",
}

// BrownSample reads one sample of the tagged Brown corpus (Form C, as NLTK distributes it: one
// sentence a line as "word/tag" tokens separated by spaces, blank lines between paragraphs) and
// returns its sentences as plain text: the tags stripped (each token is cut at its last "/"),
// the quote tokens “ and ” written as ", and the tokens joined with the spacing of ordinary
// prose (see DetokenizeBrown). Lines without words are skipped.
func BrownSample(name string, r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("%s line %d: not valid UTF-8", name, lineNo)
		}
		var words []string
		for _, tok := range strings.Fields(line) {
			i := strings.LastIndexByte(tok, '/')
			if i <= 0 {
				return nil, fmt.Errorf("%s line %d: token %q has no word/tag form", name, lineNo, tok)
			}
			words = append(words, tok[:i])
		}
		if s := DetokenizeBrown(words); s != "" {
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// DetokenizeBrown joins Brown tokens into a sentence: no space before , . ; : ? ! ) ] and
// closing quotes (” and '), none after ( [ and opening quotes (“ and `); “ and ” become ".
// Every other token is separated by one space ("--" too).
func DetokenizeBrown(words []string) string {
	var b strings.Builder
	glue := true // no space before the next token
	for _, w := range words {
		attachLeft, attachRight := false, false
		switch w {
		case "``":
			w, attachRight = `"`, true
		case "`":
			w, attachRight = "'", true
		case "''":
			w, attachLeft = `"`, true
		case "'":
			attachLeft = true
		case ",", ".", ";", ":", "?", "!", ")", "]":
			attachLeft = true
		case "(", "[":
			attachRight = true
		}
		if b.Len() > 0 && !glue && !attachLeft {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		glue = attachRight
	}
	return b.String()
}
