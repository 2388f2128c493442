package pipeline

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestFillMaskFamilies runs fill-mask on every family's fixture folder (its own tokenizer:
// WordPiece, byte-level BPE from vocab.json and merges.txt, Unigram from spiece.model and from
// tokenizer.json) and compares the ids with HuggingFace tokenizers' and the top-5 ids and
// scores with the PyTorch reference (scripts/familyref/fillmask.py).
func TestFillMaskFamilies(t *testing.T) {
	kinds := map[string]string{"distilbert": "wordpiece", "electra": "wordpiece", "roberta": "bpe", "albert": "unigram", "deberta": "unigram"}
	for _, family := range familyfixture.Families {
		t.Run(family, func(t *testing.T) {
			fx, err := familyfixture.Read(family)
			if err != nil {
				t.Fatal(err)
			}
			f, err := hf.LoadFolder(familyfixture.Dir(family))
			if err != nil {
				t.Fatal(err)
			}
			if f.Encoder == nil || f.Encoder.Kind() != kinds[family] {
				t.Fatalf("encoder %v, want %s", f.Encoder, kinds[family])
			}
			for _, it := range fx.Items {
				enc, err := Encode(f.Encoder, it.Text, nil, f.Model.Config.MaxSequenceLength())
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(enc.IDs, it.IDs) {
					t.Errorf("%q: ids %v, HF %v", it.Text, enc.IDs, it.IDs)
				}
				res, err := FillMask(f.Model, f.Encoder, it.Text, nil, 5)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(res)
				if err := familyfixture.Compare(b, it); err != nil {
					t.Error(err)
				}
				for _, m := range res.Masks {
					for _, p := range m.Predictions {
						if p.Word != f.Encoder.Word(p.ID) || p.Token != f.Encoder.Token(p.ID) {
							t.Errorf("prediction %+v", p)
						}
					}
				}
			}
			t.Logf("%s: %q -> %q %.4f", family, fx.Items[0].Text, firstWord(t, f, fx.Items[0].Text), fx.Items[0].Masks[0].Scores[0])
		})
	}
}

func firstWord(t *testing.T, f *hf.Folder, text string) string {
	res, err := FillMask(f.Model, f.Encoder, text, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	return res.Masks[0].Predictions[0].Word
}
