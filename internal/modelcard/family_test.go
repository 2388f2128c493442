package modelcard

import (
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestFamilyOf: the card names each recipe's family, its folder's class and what sets it apart.
func TestFamilyOf(t *testing.T) {
	base, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	base.VocabSize = 50
	for _, tc := range []struct {
		fam                bert.Family
		arch, name, inDesc string
	}{
		{"", "BertForPreTraining", "BERT", "post-LayerNorm"},
		{bert.FamilyRoBERTa, "RobertaForMaskedLM", "RoBERTa", "pad_token_id+1"},
		{bert.FamilyALBERT, "AlbertForPreTraining", "ALBERT", "2 blocks sharing 1 layer(s)"},
		{bert.FamilyELECTRA, "ElectraForPreTraining", "ELECTRA", "replaced-token detection"},
		{bert.FamilyDistilBERT, "DistilBertForMaskedLM", "DistilBERT", "no token types"},
		{bert.FamilyDeBERTaV2, "DebertaV2ForMaskedLM", "DeBERTa-v2", "disentangled"},
	} {
		c := base
		c.Family, c.Extra = tc.fam, nil
		if tc.fam.Is(bert.FamilyALBERT) {
			c.EmbeddingSize, c.NumHiddenGroups = 32, 1
		}
		if tc.fam != "" {
			if err := c.SetExtra("architectures", []string{tc.arch}); err != nil {
				t.Fatal(err)
			}
		}
		fw := familyOf(&bert.Model{Config: c})
		if fw.name != tc.name || fw.arch != tc.arch || !strings.Contains(fw.desc, tc.inDesc) {
			t.Errorf("%s: %+v, want %s, %s, a description with %q", tc.fam.Name(), fw, tc.name, tc.arch, tc.inDesc)
		}
	}
}
