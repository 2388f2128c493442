// Package shareddata reads the text that only public repositories carry (the project's
// ../shared/data, or a folder the user names) and turns it into the built-in model's everyday
// pre-training corpus and its evaluation sets. Those files are never committed to the project:
// this package checks each one's SHA-256 against the table below, says where a missing one
// comes from, and writes what it makes under build/ (cmd/corpus-build).
package shareddata

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Source is one file of the shared data: its name as stored, what it is, where it came from
// (repository@commit:path), its licence and the SHA-256 of its uncompressed bytes.
type Source struct {
	File, What, Origin, Licence, SHA256 string
}

// The files, as listed in shared/data/README.md.
var (
	SimpleWiki = Source{"simplewiki-paragraphs.txt.gz", "Simple English Wikipedia (about Jan 2022), one paragraph a line",
		"taminemelissa/quiz-generator@d21d03334ce88c194f8b55317bf8091e7b836f83:data/wikipedia/*/wiki_*",
		"CC BY-SA (Wikipedia contributors, Simple English Wikipedia)", "b0329bf216c147eb36e8013e2bca6c6159cd7593b793a78f82eabf093d22e054"}
	Dialogues = Source{"sgd-dialogues.txt.gz", "Schema-Guided Dialogue (DSTC8), one dialogue a line",
		"google-research-datasets/dstc8-schema-guided-dialogue@e852981ae34990f4358979625854259302feaa78:{train,dev,test}/dialogues_*.json",
		"CC BY-SA 4.0", "216194b6222089760f015f84d774db0e523621d8ebe0243a300015da4cea438c"}
	Tatoeba = Source{"tatoeba-eng-sentences.txt.gz", "Tatoeba English sentences (manythings.org fra-eng, 2019-04-07)",
		"modelexlab/data@adddaf33ac35572bcfeb421efec29435e7ea9332:fra-eng.zip",
		"CC BY 2.0 FR (Tatoeba)", "95720f98f5329d9de3fa8b1795840ada66b185a0146173fd2ed833b43044e4da"}
	OneStop = Source{"onestopenglish-docs.tsv.gz", "OneStopEnglish corpus: level<TAB>document",
		"nishkalavallabhi/OneStopEnglishCorpus@37f8db3945cd2f3cc0caafe45674147b224349be:Texts-SeparatedByReadingLevel",
		"CC BY-SA 4.0", "e0c71620967d1f4d0e225d9483dfdd713534caa7fb049ffa8b3f518c8bb3cd2e"}
	Reviews = Source{"pang-lee-polarity-v2-docs.tsv.gz", "Pang & Lee movie review polarity v2.0: label<TAB>review",
		"nltk/nltk_data@5db857e6f7df11eabb5e5665836db9ec8df07e28:packages/corpora/movie_reviews.zip",
		"CC BY 4.0", "946164be7f704254c15fcd08ab9b44aaa69c5ae51e0dbbb236ff7390f91259d7"}
	RTPolarity = Source{"rt-polarity.tsv", "Pang & Lee sentence polarity v1.0: label<TAB>sentence",
		"nltk/nltk_data@5db857e6f7df11eabb5e5665836db9ec8df07e28:packages/corpora/sentence_polarity.zip",
		"CC BY 4.0", "779b73d2daa2ff176c639de03e78520c9a55528b61e4e161a49016a27aa01440"}
	EWTTrain = Source{"ud-ewt-pos-train.tsv", "UD English-EWT train: sentence<TAB>UPOS tags",
		"UniversalDependencies/UD_English-EWT@15d613d8447b3478787d4c278730a1e48a945efb", "CC BY-SA 4.0",
		"54598d94387bf701d608c580a8c7f61e6662b0e07f69982397d68c610ec8b54e"}
	EWTDev = Source{"ud-ewt-pos-dev.tsv", "UD English-EWT dev: sentence<TAB>UPOS tags",
		"UniversalDependencies/UD_English-EWT@15d613d8447b3478787d4c278730a1e48a945efb", "CC BY-SA 4.0",
		"5b2869970519131d2d6e0a5cc9b9d37f3e4a62c8fb55e6f1db89d984ecf1d8fc"}
	EWTTest = Source{"ud-ewt-pos-test.tsv", "UD English-EWT test: sentence<TAB>UPOS tags",
		"UniversalDependencies/UD_English-EWT@15d613d8447b3478787d4c278730a1e48a945efb", "CC BY-SA 4.0",
		"66f5616e74b8e927876e3ac6677540dbd6107558471269da2eaf7747540b1545"}
)

// All lists every source Build reads.
var All = []Source{SimpleWiki, Dialogues, Tatoeba, OneStop, Reviews, RTPolarity, EWTTrain, EWTDev, EWTTest}

// ErrMissing is wrapped by the error of a source file that is not in the data folder.
var ErrMissing = errors.New("missing")

// Open opens src in dir (gzip-decompressed when its name ends in .gz). A missing file's error
// says where it comes from.
func Open(dir string, src Source) (io.ReadCloser, error) {
	path := filepath.Join(dir, src.File)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w: it is %s, from %s (%s); place it in %s or name another folder", path, ErrMissing, src.What, src.Origin, src.Licence, dir)
	}
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(src.File, ".gz") {
		return f, nil
	}
	z, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{z, f}, nil
}

// Read returns src's uncompressed bytes after checking their SHA-256 against the table.
func Read(dir string, src Source) ([]byte, error) {
	r, err := Open(dir, src)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, src.File), err)
	}
	if err := checkSum(src, b); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, src.File), err)
	}
	return b, nil
}

func checkSum(src Source, b []byte) error {
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != src.SHA256 {
		return fmt.Errorf("sha256 of the uncompressed bytes is %s, want %s (%s)", got, src.SHA256, src.Origin)
	}
	return nil
}

// Missing reports every source that is not in dir, each with where it comes from, in one
// error (nil when all are there).
func Missing(dir string) error {
	var errs []error
	for _, s := range All {
		path := filepath.Join(dir, s.File)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: %w: it is %s, from %s (%s)", path, ErrMissing, s.What, s.Origin, s.Licence))
		}
	}
	if len(errs) > 0 {
		errs = append(errs, fmt.Errorf("place the files in %s or name another folder", dir))
	}
	return errors.Join(errs...)
}

// Check verifies that every source is in dir with the right SHA-256, reporting all that are
// missing or differ in one error.
func Check(dir string) error {
	var errs []error
	for _, s := range All {
		if _, err := Read(dir, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
