package tinydata

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/dataset"
)

// These tests read the committed files from disk (the js/wasm test runner has the package folder
// as its working directory too), check them against SOURCES.md and against each other, and check
// that the embedded copies are the same bytes.

var disk = os.DirFS(".")

type manifestRow struct {
	bytes, lines int
	contents     string
	sha256       string
}

var manifestRE = regexp.MustCompile(`^\| ([a-z0-9/.-]+) \| (\d+) \| (\d+) \| ([^|]+) \| ([0-9a-f]{64}) \|$`)

// manifest reads the table of files between SOURCES.md's manifest markers.
func manifest(t *testing.T) map[string]manifestRow {
	t.Helper()
	rows := map[string]manifestRow{}
	in := false
	sc := bufio.NewScanner(strings.NewReader(Sources()))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "<!-- manifest begin -->":
			in = true
		case line == "<!-- manifest end -->":
			in = false
		case in && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| file "):
			m := manifestRE.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("SOURCES.md: manifest row %q does not parse", line)
			}
			b, _ := strconv.Atoi(m[2])
			l, _ := strconv.Atoi(m[3])
			rows[m[1]] = manifestRow{b, l, m[4], m[5]}
		}
	}
	if len(rows) == 0 {
		t.Fatal("SOURCES.md has no manifest rows")
	}
	return rows
}

var allFiles = []string{
	PretrainTrain, PretrainHeldout, SentimentTrain, SentimentDev, SentimentTest, POSTrain, POSDev, POSTest,
	WebPretrain, WebSentimentTrain, WebSentimentTest, WebPOSTrain, WebPOSTest,
}

// contents describes a file the way SOURCES.md does, from what the parsers read.
func contents(t *testing.T, name string) string {
	t.Helper()
	switch path.Ext(name) {
	case ".txt":
		docs := readDocs(t, name)
		n := 0
		for _, d := range docs {
			n += len(d.Sentences)
		}
		return fmt.Sprintf("%d documents, %d sentences", len(docs), n)
	case ".tsv":
		count := perLabel(readExamples(t, name))
		if len(count) != len(SentimentLabels) {
			t.Errorf("%s: labels %v, want %v", name, count, SentimentLabels)
		}
		return fmt.Sprintf("%d examples: %d negative, %d positive", len(readExamples(t, name)), count["negative"], count["positive"])
	case ".conll":
		s := readTagged(t, name)
		n := 0
		for _, x := range s {
			n += len(x.Tokens)
		}
		return fmt.Sprintf("%d sentences, %d tokens", len(s), n)
	}
	t.Fatalf("%s: unknown format", name)
	return ""
}

func TestCommittedFilesMatchSources(t *testing.T) {
	rows := manifest(t)
	if len(rows) != len(allFiles) {
		t.Errorf("SOURCES.md lists %d files, the package names %d", len(rows), len(allFiles))
	}
	for _, name := range allFiles {
		data, err := fs.ReadFile(disk, name)
		if err != nil {
			t.Fatal(err)
		}
		row, ok := rows[name]
		if !ok {
			t.Errorf("%s: not in SOURCES.md", name)
			continue
		}
		sum := sha256.Sum256(data)
		got := manifestRow{len(data), bytes.Count(data, []byte("\n")), contents(t, name), hex.EncodeToString(sum[:])}
		if got != row {
			t.Errorf("%s:\n got  %+v\n SOURCES.md %+v", name, got, row)
		}
	}
	// No stray files in the data folders.
	for _, dir := range []string{"pretrain", "sentiment", "pos", "web"} {
		entries, err := fs.ReadDir(disk, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if _, ok := rows[dir+"/"+e.Name()]; !ok {
				t.Errorf("%s/%s is not in SOURCES.md", dir, e.Name())
			}
		}
	}
}

func TestEmbeddedEqualsDisk(t *testing.T) {
	src, err := os.ReadFile("SOURCES.md")
	if err != nil || string(src) != Sources() {
		t.Fatalf("embedded SOURCES.md differs from the file (%v)", err)
	}
	for _, name := range allFiles {
		want, err := fs.ReadFile(disk, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.ReadFile(FS(), name)
		if !fullData && fullFiles[name] {
			if err == nil {
				t.Errorf("%s is embedded in the browser build", name)
			}
			if _, err := LoadClassification(name); !errors.Is(err, ErrNotEmbedded) && strings.HasSuffix(name, ".tsv") {
				t.Errorf("LoadClassification(%s): %v, want ErrNotEmbedded", name, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: embedded copy differs from the file (%v)", name, err)
		}
	}
}

// The files are parsed once for all tests: under js/wasm parsing the 7 MB corpus is slow.
var (
	docsCache     = map[string][]dataset.Document{}
	examplesCache = map[string][]dataset.Example{}
	taggedCache   = map[string][]dataset.TaggedSentence{}
)

func readDocs(t *testing.T, name string) []dataset.Document {
	t.Helper()
	if d, ok := docsCache[name]; ok {
		return d
	}
	f, err := disk.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := dataset.ParsePretrain(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	docsCache[name] = d
	return d
}

func readExamples(t *testing.T, name string) []dataset.Example {
	t.Helper()
	if e, ok := examplesCache[name]; ok {
		return e
	}
	f, err := disk.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := dataset.ParseClassification(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	examplesCache[name] = e
	return e
}

func readTagged(t *testing.T, name string) []dataset.TaggedSentence {
	t.Helper()
	if s, ok := taggedCache[name]; ok {
		return s
	}
	f, err := disk.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := dataset.ParseCoNLL(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	taggedCache[name] = s
	return s
}

func docKey(d dataset.Document) string          { return strings.Join(d.Sentences, "\n") }
func exampleKey(e dataset.Example) string       { return e.Text + "\t" + e.Pair }
func taggedKey(s dataset.TaggedSentence) string { return strings.Join(s.Tokens, " ") }

// disjoint fails if any key occurs in two of the sets, or twice in one.
func disjoint[T any](t *testing.T, key func(T) string, sets map[string][]T) {
	t.Helper()
	seen := map[string]string{}
	for name, set := range sets {
		for _, x := range set {
			k := key(x)
			if prev, ok := seen[k]; ok {
				t.Errorf("%q is in %s and %s", k, prev, name)
				return
			}
			seen[k] = name
		}
	}
}

// subset fails unless every element of part is in whole.
func subset[T any](t *testing.T, key func(T) string, partName string, part []T, wholeName string, whole []T) {
	t.Helper()
	in := map[string]bool{}
	for _, x := range whole {
		in[key(x)] = true
	}
	for _, x := range part {
		if !in[key(x)] {
			t.Errorf("%s: %q is not in %s", partName, key(x), wholeName)
			return
		}
	}
}

func perLabel(ex []dataset.Example) map[string]int {
	n := map[string]int{}
	for _, e := range ex {
		n[e.Label]++
	}
	return n
}

func TestSplits(t *testing.T) {
	// Pre-training: documents do not repeat across train and held-out; held-out is about 2%.
	train, heldout := readDocs(t, PretrainTrain), readDocs(t, PretrainHeldout)
	disjoint(t, docKey, map[string][]dataset.Document{PretrainTrain: train, PretrainHeldout: heldout})
	if pct := 100 * float64(len(heldout)) / float64(len(train)+len(heldout)); pct < 1.9 || pct > 2.2 {
		t.Errorf("held-out is %.2f%% of the documents, want 2%%", pct)
	}
	subset(t, docKey, WebPretrain, readDocs(t, WebPretrain), PretrainTrain, train)

	// Sentiment: 80/10/10 of each class, classes balanced in every split, no text in two splits.
	sTrain, sDev, sTest := readExamples(t, SentimentTrain), readExamples(t, SentimentDev), readExamples(t, SentimentTest)
	disjoint(t, exampleKey, map[string][]dataset.Example{SentimentTrain: sTrain, SentimentDev: sDev, SentimentTest: sTest})
	for _, l := range SentimentLabels {
		tr, dv, te := perLabel(sTrain)[l], perLabel(sDev)[l], perLabel(sTest)[l]
		total := tr + dv + te
		if dv != total*10/100 || te != dv || tr != total-2*dv {
			t.Errorf("%s: train/dev/test %d/%d/%d, want 80/10/10", l, tr, dv, te)
		}
	}
	for name, ex := range map[string][]dataset.Example{SentimentTrain: sTrain, SentimentDev: sDev, SentimentTest: sTest} {
		if n := perLabel(ex); n["negative"] != n["positive"] {
			t.Errorf("%s is not balanced: %v", name, n)
		}
	}
	webTrain, webTest := readExamples(t, WebSentimentTrain), readExamples(t, WebSentimentTest)
	subset(t, exampleKey, WebSentimentTrain, webTrain, SentimentTrain, sTrain)
	subset(t, exampleKey, WebSentimentTest, webTest, SentimentTest, sTest)
	for name, ex := range map[string][]dataset.Example{WebSentimentTrain: webTrain, WebSentimentTest: webTest} {
		if n := perLabel(ex); n["negative"] != n["positive"] {
			t.Errorf("%s is not balanced: %v", name, n)
		}
	}

	// Part of speech: 4000/500/500 sentences, none in two splits, a tag for every token.
	pTrain, pDev, pTest := readTagged(t, POSTrain), readTagged(t, POSDev), readTagged(t, POSTest)
	disjoint(t, taggedKey, map[string][]dataset.TaggedSentence{POSTrain: pTrain, POSDev: pDev, POSTest: pTest})
	if len(pTrain) != 4000 || len(pDev) != 500 || len(pTest) != 500 {
		t.Errorf("POS train/dev/test %d/%d/%d sentences, want 4000/500/500", len(pTrain), len(pDev), len(pTest))
	}
	subset(t, taggedKey, WebPOSTrain, readTagged(t, WebPOSTrain), POSTrain, pTrain)
	subset(t, taggedKey, WebPOSTest, readTagged(t, WebPOSTest), POSTest, pTest)
}

// The loaders work on what this build embeds.
func TestLoad(t *testing.T) {
	docs, err := LoadDocuments(WebPretrain)
	if err != nil || len(docs) == 0 {
		t.Fatalf("LoadDocuments: %d documents, %v", len(docs), err)
	}
	ex, err := LoadClassification(WebSentimentTrain)
	if err != nil || len(ex) == 0 {
		t.Fatalf("LoadClassification: %d examples, %v", len(ex), err)
	}
	s, err := LoadTagged(WebPOSTest)
	if err != nil || len(s) == 0 {
		t.Fatalf("LoadTagged: %d sentences, %v", len(s), err)
	}
	if _, err := LoadTagged("pos/nope.conll"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := LoadTagged(WebSentimentTrain); err == nil {
		t.Error("LoadTagged of a TSV file: no error")
	}
	if fullData {
		if _, err := LoadDocuments(PretrainHeldout); err != nil {
			t.Errorf("LoadDocuments(%s): %v", PretrainHeldout, err)
		}
	} else if _, err := LoadDocuments(PretrainTrain); !errors.Is(err, ErrNotEmbedded) {
		t.Errorf("LoadDocuments(%s) in the browser build: %v, want ErrNotEmbedded", PretrainTrain, err)
	}
}
