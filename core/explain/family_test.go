package explain

import (
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestExplainFamilies asks for attributions and the logit lens on the RoBERTa and ALBERT fixtures with the page's
// [MASK]: the default target is the PyTorch reference's top token at the family's mask, and a
// target word is the token a reader means ("the" is RoBERTa's "Ġthe", ALBERT's "▁the").
func TestExplainFamilies(t *testing.T) {
	for _, c := range []struct{ family, the string }{{"roberta", "Ġthe"}, {"albert", "▁the"}} {
		t.Run(c.family, func(t *testing.T) {
			fx, err := familyfixture.Read(c.family)
			if err != nil {
				t.Fatal(err)
			}
			f, err := hf.LoadFolder(familyfixture.Dir(c.family))
			if err != nil {
				t.Fatal(err)
			}
			e := &Explainer{Model: PreTraining(f.Model), Tok: f.Encoder}
			const text = "The man went to the [MASK]."
			rep, err := e.Attribute(Request{Text: text})
			if err != nil {
				t.Fatal(err)
			}
			want := fx.Items[0].Masks[0]
			if rep.Target == nil || rep.Target.Target.Index != want.TopIDs[0] || rep.Target.Target.Position != want.Position {
				t.Errorf("default target %+v, want id %d at %d", rep.Target, want.TopIDs[0], want.Position)
			}
			rep, err = e.Lens(Request{Text: text, Target: "the"})
			if err != nil {
				t.Fatal(err)
			}
			if id, _ := f.Encoder.TokenID(c.the); rep.Target.Target.Index != id {
				t.Errorf("target \"the\": id %d, want %d (%s)", rep.Target.Target.Index, id, c.the)
			}
		})
	}
}
