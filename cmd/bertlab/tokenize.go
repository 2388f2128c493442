package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer/auto"
)

func init() {
	commands["tokenize"] = command{"tokenize stdin, one text (or JSON object) per line", runTokenize}
}

// maxLine bounds one input line so that a runaway input fails with a message, not with memory.
const maxLine = 4 << 20

type tokenizeIn struct {
	Text *string         `json:"text"`
	Pair *string         `json:"pair"`
	ID   json.RawMessage `json:"id"`
}

type tokenizeOut struct {
	ID           json.RawMessage `json:"id"`
	InputIDs     []int           `json:"input_ids"`
	Tokens       []string        `json:"tokens"`
	TokenTypeIDs []int           `json:"token_type_ids"`
	Offsets      [][2]int        `json:"offsets"`
	Truncated    bool            `json:"truncated,omitempty"`
}

func runTokenize(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	model := fs.String("model", defaultModel(), "model folder with its tokenizer's files (vocab.txt, tokenizer.json, vocab.json+merges.txt, spiece.model, spm.model)")
	jsonl := fs.Bool("jsonl", false, `input lines are JSON objects {"text":...,"pair":...,"id":...}`)
	maxLen := fs.Int("max-length", 0, "truncate to this many tokens, specials included (0: no truncation)")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("tokenize reads its texts from standard input (got argument %q)", oneLine(pos[0]))
	}
	if *model == "" {
		return usageErr("pass --model DIR (a folder with vocab.txt)")
	}
	tok, err := auto.LoadFS(os.DirFS(*model), *model) // any family's tokenizer files
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		in := tokenizeIn{Text: &text}
		if *jsonl {
			if strings.TrimSpace(text) == "" {
				continue
			}
			in = tokenizeIn{}
			if err := json.Unmarshal([]byte(text), &in); err != nil {
				return fmt.Errorf("stdin line %d: %w", line, err)
			}
			if in.Text == nil {
				return fmt.Errorf("stdin line %d: no \"text\" field", line)
			}
		}
		id := in.ID
		if id == nil {
			id = json.RawMessage(fmt.Sprint(line))
		}
		e, err := pipeline.Encode(tok, *in.Text, in.Pair, *maxLen)
		if err != nil {
			return fmt.Errorf("stdin line %d: %w", line, err)
		}
		if err := enc.Encode(tokenizeOut{ID: id, InputIDs: e.IDs, Tokens: e.Tokens, TokenTypeIDs: e.TypeIDs, Offsets: e.CharOffsets, Truncated: e.Truncated}); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("stdin line %d: longer than %d bytes", line+1, maxLine)
	}
	if sc.Err() != nil {
		return fmt.Errorf("stdin line %d: %w", line+1, sc.Err())
	}
	return nil
}
