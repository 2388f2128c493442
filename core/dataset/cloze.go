package dataset

import (
	"fmt"
	"io"
	"strings"
)

// ClozeMask is the token a cloze sentence holds once, where the model fills in a word.
const ClozeMask = "[MASK]"

// Cloze is a cloze sentence with the words a reader accepts in its gap.
type Cloze struct {
	Text   string   // the sentence, with ClozeMask once
	Accept []string // the acceptable words, lowercase as written; nil when none were given
}

// ParseCloze reads cloze sentences: one a line, `sentence` or `sentence<TAB>word|word|...`;
// blank lines and lines starting with # are skipped. Each sentence must hold [MASK] exactly once;
// acceptable words are trimmed and must not be empty.
func ParseCloze(r io.Reader) ([]Cloze, error) {
	var out []Cloze
	err := lines(r, func(n int, line string) error {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			return nil
		}
		text, accept, hasAccept := strings.Cut(line, "\t")
		text = strings.TrimSpace(text)
		if c := strings.Count(text, ClozeMask); c != 1 {
			return &ParseError{n, fmt.Sprintf("%d %s in the sentence, want exactly one", c, ClozeMask)}
		}
		c := Cloze{Text: text}
		if hasAccept {
			if strings.Contains(accept, "\t") {
				return &ParseError{n, "more than two tab-separated fields"}
			}
			for _, w := range strings.Split(accept, "|") {
				if w = strings.TrimSpace(w); w == "" {
					return &ParseError{n, "an empty acceptable word"}
				}
				c.Accept = append(c.Accept, w)
			}
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &ParseError{1, "no cloze sentence"}
	}
	return out, nil
}
