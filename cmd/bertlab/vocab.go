package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bertlab/bertlab/core/tokenizer"
)

func init() {
	commands["vocab"] = command{"train a WordPiece vocabulary on text (vocab.txt + tokenizer_config.json)", runVocab}
}

const vocabUsage = "bertlab vocab --data FILE [--data FILE ...] --size N --out DIR [--min-frequency 2] [--cased] [--model-max-length 512]"

// maxVocabLine bounds one line of the training text, so that a file without line breaks
// cannot make the reader hold it whole.
const maxVocabLine = 1 << 20

func runVocab(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vocab", flag.ContinueOnError)
	var data stringList
	fs.Var(&data, "data", "training text, read line by line (repeat for several files; files may also follow the flags)")
	size := fs.Int("size", 8000, "tokens in the vocabulary, special tokens and the alphabet included")
	minFreq := fs.Int("min-frequency", 2, "occurrences a character needs to be in the alphabet, and a pair to be merged")
	cased := fs.Bool("cased", false, "keep case and accents (a cased model); the default lowercases and strips accents")
	maxLen := fs.Int("model-max-length", 512, "model_max_length written to tokenizer_config.json (0: none)")
	out := fs.String("out", "", "folder to write vocab.txt and tokenizer_config.json to")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	data = append(data, pos...)
	switch {
	case len(data) == 0 || *out == "":
		return usageErr("%s", vocabUsage)
	case *size < 1 || *minFreq < 1 || *maxLen < 0:
		return usageErr("--size %d, --min-frequency %d, --model-max-length %d: want positive numbers", *size, *minFreq, *maxLen)
	}
	c := tokenizer.DefaultTrainer(*size)
	c.MinFrequency = *minFreq
	c.Tokenizer.ModelMaxLength = *maxLen
	if *cased {
		c.Tokenizer.DoLowerCase = false
	}
	tr, err := tokenizer.NewTrainer(c)
	if err != nil {
		return err
	}
	var lines []string
	for _, path := range data {
		ls, err := readLines(path)
		if err != nil {
			return err
		}
		for _, l := range ls {
			tr.Add(l)
		}
		lines = append(lines, ls...)
	}
	tok, err := tr.Train()
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(data, ", "), err)
	}
	if err := tok.SaveDir(*out); err != nil {
		return err
	}
	// How well the vocabulary fits its own corpus: pieces per word and unknown words.
	words, pieces, unk := tok.Coverage(lines)
	fmt.Fprintf(stdout, "read %d lines, %d distinct words; wrote %d tokens to %s\n", len(lines), tr.Words(), tok.Vocab().Len(), *out)
	if words > 0 {
		fmt.Fprintf(stdout, "on this text: %.3f tokens a word, %d of %d words unknown ([UNK])\n", float64(pieces)/float64(words), unk, words)
	}
	if tok.Vocab().Len() < *size {
		fmt.Fprintf(stdout, "note: no pair occurs %d times any more: the vocabulary is smaller than --size %d\n", *minFreq, *size)
	}
	return nil
}

// readLines reads the non-blank lines of a text file.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxVocabLine)
	n := 0
	for sc.Scan() {
		n++
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
	}
	return lines, nil
}
