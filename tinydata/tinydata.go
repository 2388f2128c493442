// Package tinydata holds bertlab's small datasets, embedded, and helpers that parse them with
// core/dataset's parsers (which hold the formats, for files a user brings as well).
//
// The data (see SOURCES.md for origin, licence and how each file was made; `make tinydata`
// rebuilds it) is embedded: in the browser build (GOOS=js) only the small sample under web/ and
// SOURCES.md, to keep the page small; natively also the full pre-training corpus, sentiment and
// part-of-speech splits. Code that only parses data imports core/dataset, not this package, so
// that it does not link the data.
package tinydata

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/bertlab/bertlab/core/dataset"
)

// The files, by path inside FS.
const (
	PretrainTrain   = "pretrain/train.txt"
	PretrainHeldout = "pretrain/heldout.txt"
	SentimentTrain  = "sentiment/train.tsv"
	SentimentDev    = "sentiment/dev.tsv"
	SentimentTest   = "sentiment/test.tsv"
	POSTrain        = "pos/train.conll"
	POSDev          = "pos/dev.conll"
	POSTest         = "pos/test.conll"

	// The browser's sample, embedded in every build.
	WebPretrain       = "web/pretrain.txt"
	WebSentimentTrain = "web/sentiment-train.tsv"
	WebSentimentTest  = "web/sentiment-test.tsv"
	WebPOSTrain       = "web/pos-train.conll"
	WebPOSTest        = "web/pos-test.conll"

	// EverydayCloze are the built-in model card's cloze sentences with their acceptable words
	// (written for bertlab; natively only).
	EverydayCloze = "cloze/everyday.tsv"
	// FactsCloze are simple-fact cloze sentences (capitals, colours, animals, numbers,
	// opposites) with their accepted words (issue 25).
	FactsCloze = "cloze/facts.tsv"
)

// SentimentLabels are the labels of the sentiment files, sorted.
var SentimentLabels = []string{"negative", "positive"}

// ErrNotEmbedded is returned for a file of the full data in the browser build, which carries only
// web/.
var ErrNotEmbedded = errors.New("not embedded in the browser build (GOOS=js carries only web/)")

// FS returns the embedded data files: web/ in every build, natively also pretrain/, sentiment/
// and pos/.
func FS() fs.FS { return embedded }

//go:embed SOURCES.md
var sources string

// Sources returns SOURCES.md: origin, licences and notices of the data. The WordNet licence asks
// that its notice go with every copy, so a program that shows or ships the data should offer this.
func Sources() string { return sources }

// open opens an embedded file, telling a file that this build left out from one that does not
// exist.
func open(name string) (fs.File, error) {
	f, err := embedded.Open(name)
	if errors.Is(err, fs.ErrNotExist) && !fullData && fullFiles[name] {
		err = ErrNotEmbedded
	}
	if err != nil {
		return nil, fmt.Errorf("tinydata: %s: %w", name, err)
	}
	return f, nil
}

var fullFiles = map[string]bool{
	PretrainTrain: true, PretrainHeldout: true,
	SentimentTrain: true, SentimentDev: true, SentimentTest: true,
	POSTrain: true, POSDev: true, POSTest: true,
}

// LoadDocuments parses an embedded pre-training file, e.g. PretrainTrain or WebPretrain.
func LoadDocuments(name string) ([]dataset.Document, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	docs, err := dataset.ParsePretrain(f)
	if err != nil {
		return nil, fmt.Errorf("tinydata: %s: %w", name, err)
	}
	return docs, nil
}

// LoadCloze parses an embedded file of cloze sentences, e.g. EverydayCloze.
func LoadCloze(name string) ([]dataset.Cloze, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cs, err := dataset.ParseCloze(f)
	if err != nil {
		return nil, fmt.Errorf("tinydata: %s: %w", name, err)
	}
	return cs, nil
}

// LoadClassification parses an embedded classification file, e.g. SentimentTrain.
func LoadClassification(name string) ([]dataset.Example, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ex, err := dataset.ParseClassification(f)
	if err != nil {
		return nil, fmt.Errorf("tinydata: %s: %w", name, err)
	}
	return ex, nil
}

// LoadTagged parses an embedded CoNLL file, e.g. POSTrain.
func LoadTagged(name string) ([]dataset.TaggedSentence, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := dataset.ParseCoNLL(f)
	if err != nil {
		return nil, fmt.Errorf("tinydata: %s: %w", name, err)
	}
	return s, nil
}
