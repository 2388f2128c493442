package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxSQuADBytes bounds a SQuAD file (SQuAD v1.1's training set is 30 MB).
const MaxSQuADBytes = 512 << 20

// SQuADExample is one question of a SQuAD v1.1 file with its paragraph.
type SQuADExample struct {
	ID       string
	Title    string
	Context  string
	Question string
	Answers  []SQuADAnswer // the first is the one trained on; all count in evaluation
}

// SQuADAnswer is an answer span of the context.
type SQuADAnswer struct {
	Text  string
	Start int // answer_start: offset in the context in Unicode code points (Python's str index)
}

// squadFile is the JSON layout of SQuAD v1.1.
type squadFile struct {
	Version string `json:"version"`
	Data    *[]struct {
		Title      string `json:"title"`
		Paragraphs []struct {
			Context string `json:"context"`
			QAs     []struct {
				ID           string `json:"id"`
				Question     string `json:"question"`
				IsImpossible bool   `json:"is_impossible"`
				Answers      []struct {
					Text  string `json:"text"`
					Start *int   `json:"answer_start"`
				} `json:"answers"`
			} `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

// ParseSQuAD reads a SQuAD v1.1 JSON file ({"data": [{"title", "paragraphs": [{"context",
// "qas": [{"id", "question", "answers": [{"text", "answer_start"}]}]}]}]}). Every question needs
// an id (unique), a question, and at least one answer whose text is the context's at
// answer_start (counted in code points, as Python does). Errors name the place: the line and
// column of a JSON syntax error, or the path (data[i].paragraphs[j].qas[k]) and id of a
// question. SQuAD v2's unanswerable questions are refused.
func ParseSQuAD(r io.Reader) ([]SQuADExample, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxSQuADBytes+1))
	if err != nil {
		return nil, fmt.Errorf("squad: read: %w", err)
	}
	if len(raw) > MaxSQuADBytes {
		return nil, fmt.Errorf("squad: larger than %d bytes", MaxSQuADBytes)
	}
	var f squadFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, jsonError(raw, err)
	}
	if f.Data == nil {
		return nil, fmt.Errorf("squad: no \"data\" list (want SQuAD v1.1: {\"version\": ..., \"data\": [...]})")
	}
	var out []SQuADExample
	seen := map[string]string{}
	for i, art := range *f.Data {
		for j, par := range art.Paragraphs {
			where := fmt.Sprintf("data[%d].paragraphs[%d]", i, j)
			if strings.TrimSpace(par.Context) == "" {
				return nil, fmt.Errorf("squad: %s: empty context", where)
			}
			// starts[c] is the byte offset of code point c (and len at the end).
			starts := make([]int, 0, len(par.Context)+1)
			for b := range par.Context {
				starts = append(starts, b)
			}
			starts = append(starts, len(par.Context))
			for k, qa := range par.QAs {
				at := fmt.Sprintf("%s.qas[%d]", where, k)
				if qa.ID == "" {
					return nil, fmt.Errorf("squad: %s: no id", at)
				}
				at += fmt.Sprintf(" (id %q)", qa.ID)
				if prev, dup := seen[qa.ID]; dup {
					return nil, fmt.Errorf("squad: %s: id already used at %s", at, prev)
				}
				seen[qa.ID] = at
				switch {
				case strings.TrimSpace(qa.Question) == "":
					return nil, fmt.Errorf("squad: %s: empty question", at)
				case qa.IsImpossible:
					return nil, fmt.Errorf("squad: %s: is_impossible: SQuAD v2 unanswerable questions are not supported", at)
				case len(qa.Answers) == 0:
					return nil, fmt.Errorf("squad: %s: no answers", at)
				}
				ex := SQuADExample{ID: qa.ID, Title: art.Title, Context: par.Context, Question: qa.Question}
				for a, ans := range qa.Answers {
					switch {
					case ans.Start == nil:
						return nil, fmt.Errorf("squad: %s: answer %d: no answer_start", at, a)
					case ans.Text == "":
						return nil, fmt.Errorf("squad: %s: answer %d: empty text", at, a)
					}
					s, n := *ans.Start, utf8.RuneCountInString(ans.Text)
					if s < 0 || s+n > len(starts)-1 {
						return nil, fmt.Errorf("squad: %s: answer %d: answer_start %d and %d characters of text go past the context's %d characters", at, a, s, n, len(starts)-1)
					}
					if got := par.Context[starts[s]:starts[s+n]]; got != ans.Text {
						return nil, fmt.Errorf("squad: %s: answer %d: text %q is not the context's %q at answer_start %d", at, a, oneLineQA(ans.Text), oneLineQA(got), s)
					}
					ex.Answers = append(ex.Answers, SQuADAnswer{Text: ans.Text, Start: s})
				}
				out = append(out, ex)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("squad: no questions")
	}
	return out, nil
}

// jsonError places a JSON decoding error at its line and column.
func jsonError(raw []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
		err = fmt.Errorf("%s: want %s, got JSON %s", typ.Field, typ.Type, typ.Value)
	}
	if off < 0 || off > int64(len(raw)) {
		return fmt.Errorf("squad: %w", err)
	}
	before := raw[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return fmt.Errorf("squad: line %d, column %d: %w", line, col, err)
}

func oneLineQA(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if utf8.RuneCountInString(s) > 60 {
		return string([]rune(s)[:57]) + "..."
	}
	return s
}
