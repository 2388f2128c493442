package engine

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/internal/familyfixture"
)

// labsStub is a Labs whose mask lab answers errReached.
type labsStub struct{ Labs }

var errReached = errors.New("the lab was asked")

func (labsStub) MaskLab(*tokenizer.Tokenizer, string, int, uint64, bool) (*MaskLabResult, error) {
	return nil, errReached
}

// TestFamilyFillMask opens each family's fixture folder in an engine: ModelInfo names the
// tokenizer and its mask token, fill-mask answers the PyTorch reference's top 5, BERT's
// [MASK] stands for RoBERTa's <mask>, and the labs refuse a tokenizer that is not WordPiece.
func TestFamilyFillMask(t *testing.T) {
	want := map[string][2]string{"distilbert": {"wordpiece", "[MASK]"}, "electra": {"wordpiece", "[MASK]"},
		"roberta": {"bpe", "<mask>"}, "albert": {"unigram", "[MASK]"}, "deberta": {"unigram", "[MASK]"}}
	for _, family := range familyfixture.Families {
		t.Run(family, func(t *testing.T) {
			fx, err := familyfixture.Read(family)
			if err != nil {
				t.Fatal(err)
			}
			e, err := Open(os.DirFS(familyfixture.Dir(family)), family)
			if err != nil {
				t.Fatal(err)
			}
			info := e.Info()
			if info.Tokenizer != want[family][0] || info.MaskToken != want[family][1] || info.Specials.Mask != info.MaskToken {
				t.Errorf("info: tokenizer %q, mask %q, specials %+v", info.Tokenizer, info.MaskToken, info.Specials)
			}
			for _, it := range fx.Items {
				res, err := e.FillMask(it.Text, nil, 5)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(res)
				if err := familyfixture.Compare(b, it); err != nil {
					t.Error(err)
				}
				bert := strings.ReplaceAll(it.Text, info.MaskToken, "[MASK]")
				res2, err := e.FillMask(bert, nil, 5)
				if err != nil {
					t.Fatal(err)
				}
				if b2, _ := json.Marshal(res2); string(b2) != string(b) {
					t.Errorf("%q: %s, with %q: %s", bert, b2, it.Text, b)
				}
			}
			e.Labs = labsStub{}
			_, err = e.MaskLab("a b c", 1, false)
			if wp := want[family][0] == "wordpiece"; wp && !errors.Is(err, errReached) || !wp && !errors.Is(err, ErrLabsWordPiece) {
				t.Errorf("mask lab on %s: %v", want[family][0], err)
			}
		})
	}
}
