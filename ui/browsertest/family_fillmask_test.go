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

// TestRobertaFolder picks the RoBERTa fixture folder (vocab.json and merges.txt, no vocab.txt)
// in the Models view, which names its tokenizer, then masks a word in the mask view: the page's
// [MASK] is RoBERTa's <mask>, the predictions are the PyTorch reference's top 5 (scores within
// the fixture's tolerance) and the cards show readable words, not byte-level tokens.
func TestRobertaFolder(t *testing.T) {
	_, _, url, ctx := tinyPage(t)
	fx, err := familyfixture.Read("roberta")
	if err != nil {
		t.Fatal(err)
	}
	want := fx.Items[0] // "The man went to the <mask>."
	do(t, ctx, 30*time.Second, "opening the mask view", chromedp.Navigate(url+"#mask?text=The%20man%20went%20to%20the%20mat.&masks=5"))
	wait(t, ctx, 60*time.Second, "the default model's predictions",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card[data-mask="5"] .pred').length === 5`)

	do(t, ctx, 10*time.Second, "the models view", chromedp.Click(chromedp.CSS(`button[data-tab="models"]`)))
	wait(t, ctx, 10*time.Second, "the folder picker", `document.querySelector('input[data-role="pick-folder"]')`)
	do(t, ctx, 10*time.Second, "picking the RoBERTa folder",
		chromedp.SetUploadFiles(chromedp.CSS(`input[data-role="pick-folder"]`), []string{familyfixture.Dir("roberta")}))
	wait(t, ctx, 60*time.Second, "the folder loaded", settled+` && document.querySelector('[data-role="load-ok"]')`)
	if tk := eval[string](t, ctx, `(document.querySelector('.cfg dd[data-key="tokenizer"]') || {}).textContent || ''`); tk != "byte-level BPE, mask <mask>" {
		t.Errorf("the Models view's tokenizer row: %q", tk)
	}
	screenshot(t, ctx, "roberta-models")

	do(t, ctx, 10*time.Second, "the mask view", chromedp.Click(chromedp.CSS(`button[data-tab="mask"]`)))
	wait(t, ctx, 60*time.Second, "RoBERTa's predictions", settled+` && document.querySelectorAll('.card[data-mask="5"]:not(.stale) .pred').length === 5`)
	got := eval[[]pagePred](t, ctx, predsJS("5"))
	words := eval[[]string](t, ctx, `[...document.querySelectorAll('.card[data-mask="5"] .pred .ptok')].map(s => s.textContent)`)
	if len(got) != 5 || len(words) != 5 {
		t.Fatalf("predictions %v, words %v", got, words)
	}
	m := want.Masks[0]
	for i := range got {
		if got[i].ID != m.TopIDs[i] || math.Abs(got[i].Score-m.Scores[i]) > familyfixture.ATol+familyfixture.RTol*m.Scores[i] {
			t.Errorf("prediction %d: page %+v, reference id %d score %g", i, got[i], m.TopIDs[i], m.Scores[i])
		}
		if strings.ContainsAny(words[i], "ĠĊ") || words[i] == "" {
			t.Errorf("prediction %d (%q) shows %q", i, got[i].Token, words[i])
		}
	}
	t.Logf("RoBERTa's words for %q: %q", want.Text, words)
	screenshot(t, ctx, "roberta-mask")
}
