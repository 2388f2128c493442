// Package familyfixture reads the fill-mask fixtures of BERT's family (core/pipeline/testdata/
// fillmask, made by scripts/familyref/fillmask.py from PyTorch and HuggingFace tokenizers) and
// compares an answer with them, for the tests of every layer that answers fill-mask (pipeline,
// engine, hf, the API, the command line, the page). It imports nothing of ours: answers are
// compared in their JSON form.
package familyfixture

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
)

// Families are the fixture folders: one per family with an MLM head, each with a different
// tokenizer file (vocab.txt, vocab.json+merges.txt, spiece.model, tokenizer.json).
var Families = []string{"distilbert", "roberta", "albert", "electra", "deberta"}

// Tolerances of the scores (softmax probabilities): DESIGN.md's for activations.
const (
	ATol = 1e-5
	RTol = 1e-4
)

// Dir is the folder of the fixtures of family, found from this source file, so that a test of
// any package can open it.
func Dir(family string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "core", "pipeline", "testdata", "fillmask", family)
}

// Mask is the reference's answer at one mask.
type Mask struct {
	Position int       `json:"position"`
	TopIDs   []int     `json:"top_ids"`
	Scores   []float64 `json:"scores"`
}

// Item is one sentence: its text, HuggingFace's input_ids and the answer at each mask.
type Item struct {
	Text  string `json:"text"`
	IDs   []int  `json:"ids"`
	Masks []Mask `json:"masks"`
}

// Fixture is a family's fillmask.json.
type Fixture struct {
	Family string `json:"family"`
	Items  []Item `json:"items"`
}

// Read reads the fillmask.json of family.
func Read(family string) (*Fixture, error) {
	b, err := os.ReadFile(filepath.Join(Dir(family), "fillmask.json"))
	if err != nil {
		return nil, err
	}
	var f Fixture
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", family, err)
	}
	return &f, nil
}

// answer is the JSON of pipeline.FillMaskResult, as the API and `bertlab fill-mask --json` write it.
type answer struct {
	Masks []struct {
		Position    int `json:"position"`
		Predictions []struct {
			ID    int     `json:"id"`
			Score float64 `json:"score"`
			Word  string  `json:"word"`
		} `json:"predictions"`
	} `json:"masks"`
}

// Compare checks a fill-mask answer in JSON against the item: the same mask positions, and at
// each the reference's top ids in order with their scores within the tolerances, every
// prediction with a word.
func Compare(gotJSON []byte, want Item) error {
	var got answer
	if err := json.Unmarshal(gotJSON, &got); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	if len(got.Masks) != len(want.Masks) {
		return fmt.Errorf("%q: %d masks, want %d", want.Text, len(got.Masks), len(want.Masks))
	}
	for i, w := range want.Masks {
		g := got.Masks[i]
		if g.Position != w.Position {
			return fmt.Errorf("%q mask %d: position %d, want %d", want.Text, i, g.Position, w.Position)
		}
		if len(g.Predictions) < len(w.TopIDs) {
			return fmt.Errorf("%q mask %d: %d predictions, want %d", want.Text, i, len(g.Predictions), len(w.TopIDs))
		}
		for k, id := range w.TopIDs {
			p := g.Predictions[k]
			if p.ID != id || math.Abs(p.Score-w.Scores[k]) > ATol+RTol*math.Abs(w.Scores[k]) {
				return fmt.Errorf("%q mask %d prediction %d: id %d score %.8f, want id %d score %.8f", want.Text, i, k, p.ID, p.Score, id, w.Scores[k])
			}
			if p.Word == "" {
				return fmt.Errorf("%q mask %d prediction %d: id %d has no word", want.Text, i, k, p.ID)
			}
		}
	}
	return nil
}
