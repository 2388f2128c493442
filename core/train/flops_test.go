package train

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestForwardFLOPs checks the count on configs small enough to add up by hand.
func TestForwardFLOPs(t *testing.T) {
	base := bert.DefaultConfig()
	base.VocabSize, base.HiddenSize, base.IntermediateSize, base.NumAttentionHeads, base.NumHiddenLayers = 10, 4, 8, 2, 2
	albert := base
	albert.Family, albert.EmbeddingSize, albert.NumHiddenGroups = bert.FamilyALBERT, 2, 1
	deberta := base
	deberta.Family, deberta.Disentangled = bert.FamilyDeBERTaV2, &bert.Disentangled{C2P: true, P2C: true, Relative: true, PositionBuckets: 2}
	for _, tc := range []struct {
		name          string
		c             bert.Config
		B, S, nPred   int
		sentence      bool
		want          float64
		wantWithTrain float64
	}{
		// Per block: 4·2·3·16 (projections) + 2·2·9·4 (scores, context) + 2·2·3·4·8 (feed-forward)
		// = 384 + 144 + 384 = 912, two blocks 1824; MLM 1·(2·4·4 + 2·4·10) = 112; pooler and
		// sentence head 2·16 + 2·2·4 = 48.
		{"bert", base, 1, 3, 1, true, 1824 + 112 + 48, 3 * (1824 + 112 + 48)},
		{"bert no sentence, two predictions", base, 1, 3, 2, false, 1824 + 224, 3 * (1824 + 224)},
		// ALBERT: the projection 2·3·2·4 = 48, the same blocks (one shared layer run twice), the
		// MLM head 2·4·2 + 2·2·10 = 56.
		{"albert", albert, 1, 3, 1, true, 48 + 1824 + 56 + 48, 0},
		// DeBERTa, span 2 (4 relative rows): each block adds, for c2p and p2c each, the map of
		// the rows 2·4·16 = 128 and the products with them 2·3·4·4 = 96.
		{"deberta", deberta, 1, 3, 1, false, 1824 + 2*2*(128+96) + 112, 0},
		// Two sequences of 5: every term scales with B, the attention terms with S².
		{"bert B=2 S=5", base, 2, 5, 0, false, 2 * 2 * (4*2*5*16 + 2*2*25*4 + 2*2*5*4*8), 0},
	} {
		if got := ForwardFLOPs(tc.c, tc.B, tc.S, tc.nPred, tc.sentence); got != tc.want {
			t.Errorf("%s: %g FLOPs, want %g", tc.name, got, tc.want)
		}
		if tc.wantWithTrain == 0 {
			continue
		}
		labels := make([]int, tc.B*tc.S)
		for i := range labels {
			labels[i] = bert.IgnoreIndex
			if i < tc.nPred {
				labels[i] = 5
			}
		}
		b := PretrainBatch{Batch: bert.Batch{B: tc.B, S: tc.S}, MLMLabels: labels}
		if tc.sentence {
			b.NSPLabels = make([]int, tc.B)
		}
		if got := TrainFLOPs(tc.c, b); got != tc.wantWithTrain {
			t.Errorf("%s: training step %g FLOPs, want %g", tc.name, got, tc.wantWithTrain)
		}
	}
}

// TestElectraStepFLOPs adds up ELECTRA's step by hand: the generator (H 4, I 8, E 4 projected
// to 4, two blocks) run once for samples and trained once, the discriminator trained on every
// position with its head.
func TestElectraStepFLOPs(t *testing.T) {
	disc := bert.DefaultConfig()
	disc.Family, disc.VocabSize, disc.HiddenSize, disc.IntermediateSize, disc.NumAttentionHeads, disc.NumHiddenLayers = bert.FamilyELECTRA, 10, 16, 32, 4, 2
	disc.EmbeddingSize = 16
	gen := GeneratorConfig(disc)
	if gen.HiddenSize != 4 || gen.IntermediateSize != 8 || gen.NumAttentionHeads != 1 || gen.EmbDim() != 16 {
		t.Fatalf("generator %+v", gen)
	}
	labels := []int{bert.IgnoreIndex, 5, bert.IgnoreIndex} // B 1, S 3, one prediction
	b := PretrainBatch{Batch: bert.Batch{B: 1, S: 3}, MLMLabels: labels}
	// Generator forward: projection 2·3·16·4 = 384; per block 4·2·3·16 + 2·2·9·4 + 2·2·3·4·8 =
	// 384 + 144 + 384 = 912, two 1824; MLM head 2·4·16 + 2·16·10 = 448. Sum 2656, four times.
	// Discriminator: per block 4·2·3·256 + 2·2·9·16 + 2·2·3·16·32 = 6144 + 576 + 6144 = 12864,
	// two 25728; head 3·(2·256 + 2·16) = 1632; three times 27360.
	want := 4*2656.0 + 3*(25728+1632.0)
	if got := ElectraStepFLOPs(disc, gen, b); got != want {
		t.Errorf("%g FLOPs, want %g", got, want)
	}
	if got := StepFLOPs(disc, b); got != want {
		t.Errorf("StepFLOPs: %g, want %g", got, want)
	}
}
