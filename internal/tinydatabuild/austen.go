package tinydatabuild

import (
	"fmt"
	"regexp"
	"strings"
)

// Novel names the janeaustenr data sets, in publication order (the order of the corpus).
var Novels = []struct{ Name, Title, Gutenberg string }{
	{"sensesensibility", "Sense and Sensibility", "161"},
	{"prideprejudice", "Pride and Prejudice", "1342"},
	{"mansfieldpark", "Mansfield Park", "141"},
	{"emma", "Emma", "158"},
	{"northangerabbey", "Northanger Abbey", "121"},
	{"persuasion", "Persuasion", "105"},
}

// Document is a group of sentences that belong together (a chapter, a synset), with a stable key
// that decides its split.
type Document struct {
	Key       string
	Sentences []string
}

var (
	chapterRE = regexp.MustCompile(`^(CHAPTER|Chapter) ([0-9]+|[IVXLC]+)\.?$`)
	volumeRE  = regexp.MustCompile(`^VOLUME [IVX]+$`)
	// endMarkers close a novel: what follows them is not Austen's text (Northanger Abbey ends
	// with a modern publisher's note on the text).
	endMarkers = map[string]bool{"THE END": true, "FINIS": true, "Finis": true, "A NOTE ON THE TEXT": true}
)

// AustenChapters turns one novel's lines (as janeaustenr stores them: the Project Gutenberg text,
// one printed line per element, blank elements between paragraphs) into one document per
// chapter. Front matter before the first chapter heading, VOLUME headings and everything after
// an end marker are dropped; underscores (the Gutenberg mark for italics) are removed; the lines
// of a paragraph are joined with spaces and split into sentences by SplitSentences.
func AustenChapters(novel string, lines []string) ([]Document, error) {
	var docs []Document
	var para []string
	flush := func() {
		if len(para) == 0 || len(docs) == 0 {
			para = para[:0]
			return
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(strings.Join(para, " "), "_", "")), " ")
		para = para[:0]
		if text == "" {
			return
		}
		d := &docs[len(docs)-1]
		d.Sentences = append(d.Sentences, SplitSentences(text)...)
	}
	ended := false
	for _, raw := range lines {
		line := strings.TrimSpace(raw)
		switch {
		case endMarkers[line]:
			flush()
			ended = true
		case chapterRE.MatchString(line):
			flush()
			docs = append(docs, Document{Key: fmt.Sprintf("austen/%s/%03d", novel, len(docs)+1)})
		case volumeRE.MatchString(line):
			flush()
		case line == "":
			flush()
		default:
			para = append(para, line)
		}
		if ended {
			break
		}
	}
	flush()
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no chapter headings found", novel)
	}
	for _, d := range docs {
		if len(d.Sentences) == 0 {
			return nil, fmt.Errorf("%s: %s has no text", novel, d.Key)
		}
	}
	return docs, nil
}
