package shareddata

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bertlab/bertlab/internal/tinydatabuild"
)

// Part is one source's share of the everyday corpus: the training file Build writes for it and
// the permille of its documents held out.
type Part struct {
	Name    string // the training file is Name + ".txt"
	Source  Source
	Permill int
}

// Parts are the pre-training sources in the order Build writes them.
var Parts = []Part{
	{"wiki", SimpleWiki, 2},
	{"dialogue", Dialogues, 5},
	{"tatoeba", Tatoeba, 10},
	{"news", OneStop, 10},
	{"reviews", Reviews, 5},
}

// The files Build writes besides each Part's training text.
const (
	HeldoutFile   = "heldout.txt"           // the held-out documents of every part
	RTTrainFile   = "rt-polarity-train.tsv" // rt-polarity less its dev and test splits: label<TAB>sentence
	RTDevFile     = "rt-polarity-dev.tsv"   // 10% of the rest, to choose epochs on
	RTTestFile    = "rt-polarity-test.tsv"  // a fixed 10% of rt-polarity, never trained on
	EWTTrainFile  = "ewt-train.conll"       // UD English-EWT as word<TAB>UPOS, blank line between sentences
	EWTDevFile    = "ewt-dev.conll"
	EWTTestFile   = "ewt-test.conll"
	SourcesFile   = "SOURCES.md" // the sources, their licences and sizes: for the model card
	tatoebaDocLen = 10           // sentences of a Tatoeba document (the sentences are unrelated)
	rtTestPermill = 100
)

// Count is the size of a set of documents.
type Count struct {
	Documents, Sentences, Words int
}

func (c *Count) add(docs []Document) {
	for _, d := range docs {
		c.Documents++
		c.Sentences += len(d.Sentences)
		for _, s := range d.Sentences {
			c.Words += len(strings.Fields(s))
		}
	}
}

// PartStats are the training and held-out sizes of one part.
type PartStats struct {
	Part           Part
	Train, Heldout Count
}

// Stats describe what Build wrote.
type Stats struct {
	Parts                     []PartStats
	RTTrain, RTDev, RTTest    int // sentences
	EWTTrain, EWTDev, EWTTest int
}

// rank is a stable pseudo-random number for key in the named set: the held-out splits depend
// only on the text.
func rank(set, key string) uint64 {
	h := sha256.Sum256([]byte("bertlab-shareddata\x00" + set + "\x00" + key))
	return binary.BigEndian.Uint64(h[:8])
}

func heldOut(set, key string, permill int) bool { return rank(set, key)%1000 < uint64(permill) }

// split puts each document in train or held-out by its key's rank, keeping their order.
func split(set string, docs []Document, permill int) (train, heldout []Document) {
	for _, d := range docs {
		if heldOut(set, d.Key, permill) {
			heldout = append(heldout, d)
		} else {
			train = append(train, d)
		}
	}
	return train, heldout
}

// documents reads part's source in dir as pre-training documents.
func documents(dir string, p Part) ([]Document, error) {
	b, err := Read(dir, p.Source)
	if err != nil {
		return nil, err
	}
	wrap := func(err error) error { return fmt.Errorf("%s: %w", filepath.Join(dir, p.Source.File), err) }
	switch p.Source {
	case SimpleWiki, Dialogues:
		docs, err := ParseParagraphs(b)
		if err != nil {
			return nil, wrap(err)
		}
		return docs, nil
	case Tatoeba:
		lines, err := ParseLines(b)
		if err != nil {
			return nil, wrap(err)
		}
		// The file is sorted; documents of sentences in rank order mix its topics.
		sort.SliceStable(lines, func(i, j int) bool { return rank("tatoeba-order", lines[i]) < rank("tatoeba-order", lines[j]) })
		var docs []Document
		for i := 0; i < len(lines); i += tatoebaDocLen {
			s := lines[i:min(i+tatoebaDocLen, len(lines))]
			docs = append(docs, Document{Key: s[0], Sentences: s})
		}
		return docs, nil
	case OneStop, Reviews:
		ls, err := ParseLabelled(b)
		if err != nil {
			return nil, wrap(err)
		}
		docs := make([]Document, len(ls))
		for i, l := range ls {
			sents := tinydatabuild.SplitSentences(l.Text)
			if p.Source == Reviews {
				sents = SplitLowercase(l.Text)
			}
			docs[i] = Document{Key: l.Label + "\t" + l.Text, Sentences: sents}
		}
		return docs, nil
	}
	return nil, fmt.Errorf("shareddata: no reader for %s", p.Source.File)
}

// Build reads the sources in dir, checks their SHA-256, and writes into out: each part's
// training documents (NAME.txt: one sentence a line, a blank line between documents, as
// `bertlab pretrain --data` reads), the held-out documents of all parts (heldout.txt), the
// rt-polarity sentences split into train, dev (10% of the rest) and a fixed 10% test split, and UD English-EWT as
// CoNLL files for `bertlab finetune --task tag`. Files are written to a temporary name and
// renamed.
func Build(dir, out string) (Stats, error) {
	var st Stats
	if err := Missing(dir); err != nil {
		return st, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return st, err
	}
	var heldout []Document
	for _, p := range Parts {
		docs, err := documents(dir, p)
		if err != nil {
			return st, err
		}
		train, held := split(p.Name, docs, p.Permill)
		ps := PartStats{Part: p}
		ps.Train.add(train)
		ps.Heldout.add(held)
		st.Parts = append(st.Parts, ps)
		heldout = append(heldout, held...)
		if err := writeFile(filepath.Join(out, p.Name+".txt"), tinydatabuild.RenderDocs(train)); err != nil {
			return st, err
		}
	}
	if err := writeFile(filepath.Join(out, HeldoutFile), tinydatabuild.RenderDocs(heldout)); err != nil {
		return st, err
	}

	b, err := Read(dir, RTPolarity)
	if err != nil {
		return st, err
	}
	rt, err := ParseLabelled(b)
	if err != nil {
		return st, fmt.Errorf("%s: %w", filepath.Join(dir, RTPolarity.File), err)
	}
	var rtTrain, rtDev, rtTest bytes.Buffer
	for i, l := range rt {
		label, ok := map[string]string{"0": "negative", "1": "positive"}[l.Label]
		if !ok {
			return st, fmt.Errorf("%s: sentence %d: label %q, want 0 or 1", filepath.Join(dir, RTPolarity.File), i+1, l.Label)
		}
		w := &rtTrain
		switch {
		case heldOut("rt-polarity", l.Text, rtTestPermill):
			w, st.RTTest = &rtTest, st.RTTest+1
		case heldOut("rt-polarity-dev", l.Text, rtTestPermill):
			w, st.RTDev = &rtDev, st.RTDev+1
		default:
			st.RTTrain++
		}
		fmt.Fprintf(w, "%s\t%s\n", label, l.Text)
	}
	if err := writeFile(filepath.Join(out, RTTrainFile), rtTrain.Bytes()); err != nil {
		return st, err
	}
	if err := writeFile(filepath.Join(out, RTDevFile), rtDev.Bytes()); err != nil {
		return st, err
	}
	if err := writeFile(filepath.Join(out, RTTestFile), rtTest.Bytes()); err != nil {
		return st, err
	}

	for _, e := range []struct {
		src  Source
		file string
		n    *int
	}{{EWTTrain, EWTTrainFile, &st.EWTTrain}, {EWTDev, EWTDevFile, &st.EWTDev}, {EWTTest, EWTTestFile, &st.EWTTest}} {
		b, err := Read(dir, e.src)
		if err != nil {
			return st, err
		}
		sents, err := ParseTagged(b)
		if err != nil {
			return st, fmt.Errorf("%s: %w", filepath.Join(dir, e.src.File), err)
		}
		*e.n = len(sents)
		if err := writeFile(filepath.Join(out, e.file), renderCoNLL(sents)); err != nil {
			return st, err
		}
	}
	if err := writeFile(filepath.Join(out, SourcesFile), []byte(st.Attribution())); err != nil {
		return st, err
	}
	return st, nil
}

func renderCoNLL(sents []Tagged) []byte {
	var b bytes.Buffer
	for _, s := range sents {
		for i, w := range s.Words {
			fmt.Fprintf(&b, "%s\t%s\n", w, s.Tags[i])
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// writeFile writes b to path through a temporary file in the same folder and a rename.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Markdown is a table of the sizes, for scripts/PRETRAIN.md and the model card.
func (st Stats) Markdown() string {
	var b strings.Builder
	b.WriteString("| part | source | licence | train documents | train sentences | train words | held-out documents | held-out words |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, p := range st.Parts {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d | %d |\n", p.Part.Name, p.Part.Source.File, p.Part.Source.Licence,
			p.Train.Documents, p.Train.Sentences, p.Train.Words, p.Heldout.Documents, p.Heldout.Words)
	}
	fmt.Fprintf(&b, "\nrt-polarity: %d / %d / %d sentences (train / dev / test); UD English-EWT: %d / %d / %d sentences (train / dev / test)\n",
		st.RTTrain, st.RTDev, st.RTTest, st.EWTTrain, st.EWTDev, st.EWTTest)
	return b.String()
}

// Attribution is the card's section on the text the model was trained and evaluated on: every
// source with its origin and licence, and the licence that follows for the weights.
func (st Stats) Attribution() string {
	var b strings.Builder
	b.WriteString("## Sources and licences\n\n")
	b.WriteString("The everyday text was read from files of public repositories (not part of bertlab; `go run\n")
	b.WriteString("./cmd/corpus-build` checks each one's sha256):\n\n")
	b.WriteString("| source | origin | licence |\n|---|---|---|\n")
	for _, s := range All {
		what := strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", "\\|").Replace(s.What) // <TAB> is not an HTML tag
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s |\n", what, s.File, s.Origin, s.Licence)
	}
	b.WriteString("\nAttribution: Simple English Wikipedia text by Wikipedia contributors (CC BY-SA); the\n")
	b.WriteString("Schema-Guided Dialogue dataset by Rastogi et al. (Google Research); sentences from Tatoeba\n")
	b.WriteString("(tatoeba.org, via manythings.org); the OneStopEnglish corpus by Vajjala and Lučić; movie reviews\n")
	b.WriteString("and sentences by Pang and Lee; Universal Dependencies English Web Treebank. Because the model was\n")
	b.WriteString("trained on CC BY-SA text, **its weights are released under CC BY-SA 4.0**. The mix's `prose` part\n")
	b.WriteString("(Austen, WordNet, the Brown corpus, the State of the Union addresses) is bertlab's own\n")
	b.WriteString("`tinydata/corpus/prose.txt.gz`, described in `tinydata/SOURCES.md`.\n\n")
	b.WriteString(st.Markdown())
	return b.String()
}
