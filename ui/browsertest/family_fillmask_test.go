//go:build !js

package browsertest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestFamilyFolders picks each family's fixture folder in the Models view (RoBERTa's vocab.json
// and merges.txt, ALBERT's spiece.model, DeBERTa's tokenizer.json, DistilBERT's and ELECTRA's
// vocab.txt), which names its tokenizer, then masks a word in the mask view: the page's [MASK]
// is the family's mask token, the predictions are the PyTorch reference's top 5 (scores within
// the fixture's tolerance) and the cards show readable words, not byte-level or SentencePiece
// tokens.
func TestFamilyFolders(t *testing.T) {
	_, _, url, ctx := tinyPage(t)
	tokenizers := map[string]string{"distilbert": "WordPiece, mask [MASK]", "electra": "WordPiece, mask [MASK]",
		"roberta": "byte-level BPE, mask <mask>", "albert": "SentencePiece Unigram, mask [MASK]", "deberta": "SentencePiece Unigram, mask [MASK]"}
	do(t, ctx, 30*time.Second, "opening the mask view", chromedp.Navigate(url+"#mask?text=The%20man%20went%20to%20the%20mat.&masks=5"))
	wait(t, ctx, 60*time.Second, "the default model's predictions",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card[data-mask="5"] .pred').length === 5`)
	for _, family := range familyfixture.Families {
		fx, err := familyfixture.Read(family)
		if err != nil {
			t.Fatal(err)
		}
		want := fx.Items[0] // "The man went to the [MASK]." with the family's mask token
		do(t, ctx, 10*time.Second, "the models view", chromedp.Click(chromedp.CSS(`button[data-tab="models"]`)))
		wait(t, ctx, 10*time.Second, "the folder picker", `document.querySelector('input[data-role="pick-folder"]')`)
		do(t, ctx, 10*time.Second, "picking the "+family+" folder",
			chromedp.SetUploadFiles(chromedp.CSS(`input[data-role="pick-folder"]`), []string{familyfixture.Dir(family)}))
		wait(t, ctx, 60*time.Second, "the "+family+" folder loaded", settled+` && document.querySelector('[data-role="load-ok"]') && document.querySelector('.modelcard h2').textContent === '`+family+` (yours)'`)
		if tk := eval[string](t, ctx, `(document.querySelector('.cfg dd[data-key="tokenizer"]') || {}).textContent || ''`); tk != tokenizers[family] {
			t.Errorf("%s: the Models view's tokenizer row %q, want %q", family, tk, tokenizers[family])
		}
		screenshot(t, ctx, family+"-models")

		do(t, ctx, 10*time.Second, "the mask view", chromedp.Click(chromedp.CSS(`button[data-tab="mask"]`)))
		wait(t, ctx, 60*time.Second, family+"'s predictions", settled+` && document.querySelectorAll('.card[data-mask="5"]:not(.stale) .pred').length === 5`)
		got := eval[[]pagePred](t, ctx, predsJS("5"))
		words := eval[[]string](t, ctx, `[...document.querySelectorAll('.card[data-mask="5"] .pred .ptok')].map(s => s.textContent)`)
		if len(got) != 5 || len(words) != 5 {
			t.Fatalf("%s: predictions %v, words %v", family, got, words)
		}
		m := want.Masks[0]
		for i := range got {
			if got[i].ID != m.TopIDs[i] || math.Abs(got[i].Score-m.Scores[i]) > familyfixture.ATol+familyfixture.RTol*m.Scores[i] {
				t.Errorf("%s prediction %d: page %+v, reference id %d score %g", family, i, got[i], m.TopIDs[i], m.Scores[i])
			}
			if strings.ContainsAny(words[i], "ĠĊ▁") || words[i] == "" {
				t.Errorf("%s prediction %d (%q) shows %q", family, i, got[i].Token, words[i])
			}
		}
		t.Logf("%s's words for %q: %q", family, want.Text, words)
		screenshot(t, ctx, family+"-mask")
	}
}
