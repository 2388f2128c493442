package ui

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestMaskViewFamilies opens the mask view on the RoBERTa (byte-level BPE) and ALBERT
// (SentencePiece) fixtures with a word masked by the page's [MASK]: the predictions are the
// PyTorch reference's for the family's own mask token, the cards show readable words (no "Ġ"
// or "▁"), and the Models view names the tokenizer.
func TestMaskViewFamilies(t *testing.T) {
	for _, c := range []struct{ family, kind, mask, hint string }{
		{"roberta", "byte-level BPE, mask <mask>", "<mask>", "Ġ is the space before a piece"},
		{"albert", "SentencePiece Unigram, mask [MASK]", "[MASK]", "▁ starts a word"},
	} {
		t.Run(c.family, func(t *testing.T) {
			fx, err := familyfixture.Read(c.family)
			if err != nil {
				t.Fatal(err)
			}
			e, err := engine.Open(os.DirFS(familyfixture.Dir(c.family)), c.family)
			if err != nil {
				t.Fatal(err)
			}
			eng := &nativeEngine{e: e, m: e.Model()}
			a := &App{Eng: eng, OnRoute: func(string) {}}
			// "The man went to the mat." with its sixth word (mat) masked.
			a.Start(ParseRoute("#mask?text=The%20man%20went%20to%20the%20mat.&masks=5"))
			if a.Err != "" || !a.Loaded {
				t.Fatalf("start: loaded %v, err %q", a.Loaded, a.Err)
			}
			if a.MaskedText != "The man went to the [MASK]." {
				t.Fatalf("masked text %q", a.MaskedText)
			}
			b, _ := json.Marshal(pipeline.FillMaskResult{Masks: []pipeline.MaskResult{{Position: fx.Items[0].Masks[0].Position, Predictions: a.Preds[5]}}})
			if err := familyfixture.Compare(b, fx.Items[0]); err != nil {
				t.Error(err)
			}
			page := html.UnescapeString(renderRoot(t, a))
			for _, p := range a.Preds[5] {
				if !strings.Contains(page, `<span class="ptok">`+p.Word+`</span>`) {
					t.Errorf("the card of %q should show %q", p.Token, p.Word)
				}
			}
			if strings.Contains(page, `<span class="ptok">Ġ`) || strings.Contains(page, `<span class="ptok">▁`) {
				t.Errorf("a card shows a tokenizer mark:\n%s", page)
			}
			if !strings.Contains(page, `<span class="piece mask"><span>`+c.mask+`</span><sub>`) || !strings.Contains(page, c.hint) {
				t.Errorf("the masked word should read %s and the hint explain %q:\n%s", c.mask, c.hint, page)
			}
			info, err := eng.Load(ModelRef{})
			if err != nil {
				t.Fatal(err)
			}
			a.Info, a.View = info, "models"
			if page := html.UnescapeString(renderRoot(t, a)); !strings.Contains(page, c.kind) {
				t.Errorf("the Models view should say %q", c.kind)
			}
		})
	}
}

// TestPairWordsSentencePiece: Metaspace words ("▁ma t ." is one) give the page BERT's words:
// punctuation apart, the leading space out of the text, later ids moved up.
func TestPairWordsSentencePiece(t *testing.T) {
	text := "the mat. u.s. ..."
	tok := &Tokens{
		Tokens:  []string{"[CLS]", "▁the", "▁ma", "t", ".", "▁u", ".", "s", ".", "▁", "...", "[SEP]"},
		WordIDs: []int{-1, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, -1},
		Offsets: [][2]int{{0, 0}, {0, 3}, {3, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}, {13, 14}, {14, 17}, {0, 0}},
		Special: []bool{true, false, false, false, false, false, false, false, false, false, false, true},
		TypeIDs: make([]int, 12),
	}
	var got []string
	for _, w := range PairWords(tok, text, "") {
		got = append(got, fmt.Sprintf("%d:%s", w.ID, w.Text))
	}
	want := "-1: 0:the 1:mat 2:. 3:u 4:. 5:s 6:. 7:... -1:"
	if strings.Join(got, " ") != want {
		t.Errorf("words %q, want %q", strings.Join(got, " "), want)
	}
}
