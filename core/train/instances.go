package train

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// TokenDocument is a document of the pre-training corpus as token ids: its sentences in order, each
// a non-empty list of WordPiece ids without [CLS] or [SEP].
type TokenDocument [][]int

// TokenizeDocuments turns documents of sentences (one string a sentence) into token ids.
// Sentences that give no token and documents left without sentences are dropped, as
// create_pretraining_data.py drops them.
func TokenizeDocuments(tok *tokenizer.Tokenizer, docs [][]string) []TokenDocument {
	var out []TokenDocument
	for _, d := range docs {
		var doc TokenDocument
		for _, s := range d {
			ts := tok.Tokenize(s)
			if len(ts) == 0 {
				continue
			}
			ids := make([]int, len(ts))
			for i, t := range ts {
				ids[i] = t.ID
			}
			doc = append(doc, ids)
		}
		if len(doc) > 0 {
			out = append(out, doc)
		}
	}
	return out
}

// HeldoutInstances reads held-out pre-training text and masks it once, as dc masks the
// training text (PretrainData.Fixed): the examples a run is evaluated on.
func HeldoutInstances(path string, tok *tokenizer.Tokenizer, dc DataConfig) ([]Instance, error) {
	docs, err := ReadDocumentsFile(path, tok)
	if err != nil {
		return nil, err
	}
	d, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d.Fixed(), nil
}

// ReadDocumentsFiles reads the pre-training text files in order (ReadDocumentsFile) and
// returns their documents one file after the other. A path given twice counts twice, which is
// how a recipe weighs the parts of a corpus; each file is read and tokenized once.
func ReadDocumentsFiles(paths []string, tok *tokenizer.Tokenizer) ([]TokenDocument, error) {
	read := map[string][]TokenDocument{}
	var out []TokenDocument
	for _, p := range paths {
		docs, ok := read[p]
		if !ok {
			var err error
			if docs, err = ReadDocumentsFile(p, tok); err != nil {
				return nil, err
			}
			read[p] = docs
		}
		out = append(out, docs...)
	}
	return out, nil
}

// ReadDocumentsFile reads a pre-training text file (core/dataset's format: one sentence a line,
// a blank line between documents) and tokenizes it with TokenizeDocuments. A path ending in
// ".gz" is read through gzip (tinydata/corpus/prose.txt.gz). Errors name the file, and the line
// for a parse error.
func ReadDocumentsFile(path string, tok *tokenizer.Tokenizer) ([]TokenDocument, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	docs, err := dataset.ParsePretrain(r)
	if err != nil {
		var pe *dataset.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s (fatal)", path, pe.Line, pe.Msg)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	texts := make([][]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Sentences
	}
	out := TokenizeDocuments(tok, texts)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no text", path)
	}
	return out, nil
}

// SentenceTask is the sentence-level objective trained beside the masked LM.
type SentenceTask int

const (
	// NextSentence is BERT's next-sentence prediction: segment B follows A in its document
	// (label 0, IsNext) or comes from another document (label 1, NotNext), half and half.
	NextSentence SentenceTask = iota
	// SentenceOrder is ALBERT's sentence-order prediction: A and B are consecutive text of one
	// document, in order (label 0) or swapped (label 1), half and half.
	SentenceOrder
	// NoSentenceTask is RoBERTa's FULL-SENTENCES input without NSP: one segment of consecutive
	// sentences packed up to the length, crossing document ends with an extra [SEP]; the
	// next-sentence label is bert.IgnoreIndex.
	NoSentenceTask
)

func (t SentenceTask) String() string {
	switch t {
	case NextSentence:
		return "next-sentence"
	case SentenceOrder:
		return "sentence-order"
	case NoSentenceTask:
		return "none"
	}
	return fmt.Sprintf("SentenceTask(%d)", int(t))
}

// InstanceConfig are the settings of create_instances_from_document.
type InstanceConfig struct {
	// MaxSeqLength is max_seq_length: the length of an instance with [CLS] and [SEP]s (128).
	MaxSeqLength int
	// ShortSeqProb is short_seq_prob: the probability that an instance aims at a random shorter
	// length, so that the model also sees short inputs (0.1).
	ShortSeqProb float64
	// Task is the sentence-level objective.
	Task SentenceTask
}

// DefaultInstances is the reference's recipe: short_seq_prob 0.1, next-sentence pairs.
func DefaultInstances(seqLen int) InstanceConfig {
	return InstanceConfig{MaxSeqLength: seqLen, ShortSeqProb: 0.1, Task: NextSentence}
}

// Validate checks the settings.
func (c InstanceConfig) Validate() error {
	minLen := 5 // [CLS] a [SEP] b [SEP]
	if c.Task == NoSentenceTask {
		minLen = 3
	}
	if c.MaxSeqLength < minLen {
		return fmt.Errorf("instances: max sequence length %d < %d", c.MaxSeqLength, minLen)
	}
	if !(c.ShortSeqProb >= 0 && c.ShortSeqProb <= 1) {
		return fmt.Errorf("instances: short sequence probability %g outside [0, 1]", c.ShortSeqProb)
	}
	if c.Task < NextSentence || c.Task > NoSentenceTask {
		return fmt.Errorf("instances: unknown sentence task %d", int(c.Task))
	}
	return nil
}

// Instance is one pre-training sequence: [CLS] A [SEP] B [SEP] (or [CLS] A [SEP] without a
// sentence task), unpadded.
type Instance struct {
	InputIDs     []int // [S]; corrupted by masking when Labels is set
	TokenTypeIDs []int // [S]: 0 for [CLS] A [SEP], 1 for B [SEP]
	// Labels are the masked-LM labels [S] (bert.IgnoreIndex where nothing is predicted); nil
	// before masking.
	Labels []int
	// NextSentenceLabel is 0 when B follows A, 1 when B is random (NSP) or A and B are swapped
	// (SOP), bert.IgnoreIndex without a sentence task.
	NextSentenceLabel int
}

// Masked returns a copy of in with masks drawn by m from rng.
func (in Instance) Masked(m *Masker, rng *rand.Rand) Instance {
	out := in
	out.InputIDs, out.Labels = m.Mask(in.InputIDs, rng)
	return out
}

// CreateInstances makes the instances of every document, in order, with one generator, as
// create_pretraining_data.py does for one round of its dupe factor (without masking; see
// Masker). cls and sep are the ids of [CLS] and [SEP].
func CreateInstances(docs []TokenDocument, c InstanceConfig, cls, sep int, rng *rand.Rand) ([]Instance, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Task == NoSentenceTask {
		return createFullSentences(docs, c, cls, sep, rng), nil
	}
	var out []Instance
	for i := range docs {
		out = append(out, CreateInstancesFromDocument(docs, i, c, cls, sep, rng)...)
	}
	return out, nil
}

// CreateInstancesFromDocument is create_instances_from_document for a pair task (NextSentence
// or SentenceOrder): it gathers sentences of document docIndex until a target length is
// reached, splits them at a random sentence into A and B, and for a random next (NSP) takes B
// from another document instead and puts the unused sentences back for the next instance.
// ALBERT's rule for SOP: a chunk of one sentence still takes a random B (label 1).
func CreateInstancesFromDocument(docs []TokenDocument, docIndex int, c InstanceConfig, cls, sep int, rng *rand.Rand) []Instance {
	doc := docs[docIndex]
	maxTokens := c.MaxSeqLength - 3 // [CLS], [SEP], [SEP]
	target := maxTokens
	if rng.Float64() < c.ShortSeqProb {
		target = 2 + rng.IntN(maxTokens-1) // randint(2, max_num_tokens)
	}
	var out []Instance
	var chunk [][]int
	length := 0
	for i := 0; i < len(doc); i++ {
		chunk = append(chunk, doc[i])
		length += len(doc[i])
		if i != len(doc)-1 && length < target {
			continue
		}
		aEnd := 1
		if len(chunk) >= 2 {
			aEnd = 1 + rng.IntN(len(chunk)-1) // randint(1, len(chunk)-1)
		}
		var a, b []int
		for _, s := range chunk[:aEnd] {
			a = append(a, s...)
		}
		label := 0
		switch {
		case len(docs) > 1 && (len(chunk) == 1 || c.Task == NextSentence && rng.Float64() < 0.5):
			label = 1
			targetB := target - len(a)
			other := docIndex
			for range 10 {
				if other = rng.IntN(len(docs)); other != docIndex {
					break
				}
			}
			od := docs[other]
			for j := rng.IntN(len(od)); j < len(od); j++ {
				b = append(b, od[j]...)
				if len(b) >= targetB {
					break
				}
			}
			// The sentences of the chunk after A are not used: put them back.
			i -= len(chunk) - aEnd
		case c.Task == SentenceOrder && rng.Float64() < 0.5:
			label = 1
			for _, s := range chunk[aEnd:] {
				b = append(b, s...)
			}
			a, b = b, a
		default:
			for _, s := range chunk[aEnd:] {
				b = append(b, s...)
			}
		}
		chunk, length = nil, 0
		if len(b) == 0 {
			// A one-sentence chunk of a corpus of one document: no B to be had. The reference
			// asserts here; skipping the chunk loses one sentence of a degenerate corpus.
			continue
		}
		truncateSeqPair(&a, &b, maxTokens, rng)
		out = append(out, pairInstance(a, b, label, cls, sep))
	}
	return out
}

// pairInstance assembles [CLS] a [SEP] b [SEP] and its token types.
func pairInstance(a, b []int, label, cls, sep int) Instance {
	n := len(a) + len(b) + 3
	ids := make([]int, 0, n)
	ids = append(append(append(append(append(ids, cls), a...), sep), b...), sep)
	types := make([]int, n)
	for i := len(a) + 2; i < n; i++ {
		types[i] = 1
	}
	return Instance{InputIDs: ids, TokenTypeIDs: types, NextSentenceLabel: label}
}

// truncateSeqPair is the reference's truncate_seq_pair: while the pair is longer than maxTokens,
// drop a token from the longer of the two (b when equal), from its front or its back with equal
// probability, so that the model does not learn that texts always end at a sentence end.
func truncateSeqPair(a, b *[]int, maxTokens int, rng *rand.Rand) {
	for len(*a)+len(*b) > maxTokens {
		t := b
		if len(*a) > len(*b) {
			t = a
		}
		if rng.Float64() < 0.5 {
			*t = (*t)[1:]
		} else {
			*t = (*t)[:len(*t)-1]
		}
	}
}

// createFullSentences packs consecutive sentences of the whole corpus into single segments of
// up to the target length (RoBERTa's FULL-SENTENCES), with an extra [SEP] where a document ends
// inside a segment. A sentence longer than a whole segment is cut into pieces.
func createFullSentences(docs []TokenDocument, c InstanceConfig, cls, sep int, rng *rand.Rand) []Instance {
	maxTokens := c.MaxSeqLength - 2 // [CLS], [SEP]
	newTarget := func() int {
		if rng.Float64() < c.ShortSeqProb {
			return 1 + rng.IntN(maxTokens) // randint(1, max_num_tokens)
		}
		return maxTokens
	}
	var out []Instance
	var cur []int
	target := newTarget()
	flush := func() {
		for len(cur) > 0 && cur[len(cur)-1] == sep {
			cur = cur[:len(cur)-1] // a document end right before the final [SEP]
		}
		if len(cur) > 0 {
			ids := append(append([]int{cls}, cur...), sep)
			out = append(out, Instance{InputIDs: ids, TokenTypeIDs: make([]int, len(ids)), NextSentenceLabel: bert.IgnoreIndex})
		}
		cur = nil
		target = newTarget()
	}
	for _, d := range docs {
		for _, s := range d {
			for len(s) > 0 {
				if room := target - len(cur); len(s) <= room {
					cur = append(cur, s...)
					break
				}
				if len(cur) == 0 { // longer than a whole segment: cut
					cur = append(cur, s[:target]...)
					s = s[target:]
				}
				flush()
			}
		}
		if len(cur) > 0 {
			if len(cur) < target {
				cur = append(cur, sep)
			} else {
				flush()
			}
		}
	}
	flush()
	return out
}
