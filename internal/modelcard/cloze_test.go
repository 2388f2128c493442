package modelcard

import (
	"testing"

	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/pipeline"
)

// A sentence counts when an acceptable word, in any case, is among its predictions; the share
// counts only the sentences that have acceptable words.
func TestClozeScore(t *testing.T) {
	preds := func(toks ...string) []pipeline.Prediction {
		var ps []pipeline.Prediction
		for _, s := range toks {
			ps = append(ps, pipeline.Prediction{Token: s})
		}
		return ps
	}
	rs := []clozeResult{
		scoreCloze(dataset.Cloze{Text: "a [MASK]", Accept: []string{"water", "milk"}}, preds("the", "Milk", "tea")),
		scoreCloze(dataset.Cloze{Text: "b [MASK]", Accept: []string{"paris"}}, preds("london", "rome")),
		scoreCloze(dataset.Cloze{Text: "c [MASK]"}, preds("x")),
		scoreCloze(dataset.Cloze{Text: "d [MASK]", Accept: []string{"door"}}, preds("##door", "door")),
	}
	if !rs[0].Hit || rs[1].Hit || rs[2].Hit || !rs[3].Hit {
		t.Errorf("hits %v %v %v %v, want true false false true", rs[0].Hit, rs[1].Hit, rs[2].Hit, rs[3].Hit)
	}
	if share, n := clozeShare(rs); n != 3 || share != 2.0/3 {
		t.Errorf("share %v of %d, want 2/3 of 3", share, n)
	}
	if share, n := clozeShare(rs[2:3]); n != 0 || share != 0 {
		t.Errorf("without acceptable words: %v of %d", share, n)
	}
}
