package train

import "github.com/bertlab/bertlab/core/bert"

// ForwardFLOPs counts the floating-point operations of the matrix products of one training
// forward pass of a model of config c over a padded batch [B, S] (every position computed, as
// the encoder computes padding too), predicting nPred masked positions (only those go through the
// MLM head), with the pooler and sentence head when sentence is set. A product of [m, k] by
// [k, n] counts 2·m·k·n:
//   - the embedding projection (ALBERT, ELECTRA): 2·B·S·E·H;
//   - each of the num_hidden_layers blocks (shared layers cost as much as their own:
//     sharing saves parameters, not compute): query, key, value and output 4·2·B·S·H², the
//     scores Q·Kᵀ and the context P·V 2·2·B·S²·H, the feed-forward 2·2·B·S·H·I;
//   - DeBERTa's c2p and p2c terms, each a block: the map of the 2·span relative embeddings
//     2·2span·H² and the products with them 2·B·S·2span·H;
//   - the MLM head: nPred·(2·H·E + 2·E·V);
//   - the pooler and the two-way sentence head: B·(2·H² + 2·2·H).
//
// LayerNorm, softmax, activations and the embedding lookup (O(B·S·H) each) are left out, as
// Kaplan et al. (2020) leave them out.
func ForwardFLOPs(c bert.Config, B, S, nPred int, sentence bool) float64 {
	b, s, p := float64(B), float64(S), float64(nPred)
	H, I, E, V := float64(c.HiddenSize), float64(c.IntermediateSize), float64(c.EmbDim()), float64(c.VocabSize)
	n := 0.0
	if c.HasEmbProj() {
		n += 2 * b * s * E * H
	}
	block := 4*2*b*s*H*H + 2*2*b*s*s*H + 2*2*b*s*H*I
	if d := c.Disentangled; d != nil && d.Relative {
		// Each of c2p and p2c: the layer's map of the 2·span relative embeddings, 2·W·H², and
		// every query's (key's) products with them, 2·B·S·W·H.
		W := float64(2 * d.Span())
		block += float64(d.ScaleFactor()-1) * (2*W*H*H + 2*b*s*W*H)
	}
	n += float64(c.NumHiddenLayers) * block
	n += p * (2*H*E + 2*E*V)
	if sentence {
		n += b * (2*H*H + 2*2*H)
	}
	return n
}

// TrainFLOPs counts a training step's matrix products on the batch: the forward pass
// (ForwardFLOPs) and the backward pass, which for every product of the forward computes two of
// the same size (the gradient with respect to each factor): three times the forward.
func TrainFLOPs(c bert.Config, b PretrainBatch) float64 {
	nPred := 0
	for _, y := range b.MLMLabels {
		if y != bert.IgnoreIndex {
			nPred++
		}
	}
	return 3 * ForwardFLOPs(c, b.B, b.S, nPred, b.NSPLabels != nil)
}

// ElectraStepFLOPs counts an ELECTRA training step's matrix products on the batch (masked as
// the generator sees it): the generator's forward for its samples and its training step at the
// masked positions (ForwardFLOPs without a sentence head, 1 + 3 times), and the
// discriminator's training step over every position with its head, a dense H×H and the one
// logit a token: 3·(ForwardFLOPs with no prediction + B·S·(2H² + 2H)).
func ElectraStepFLOPs(disc, gen bert.Config, b PretrainBatch) float64 {
	nPred := 0
	for _, y := range b.MLMLabels {
		if y != bert.IgnoreIndex {
			nPred++
		}
	}
	H, n := float64(disc.HiddenSize), float64(b.B*b.S)
	g := ForwardFLOPs(gen, b.B, b.S, nPred, false)
	return 4*g + 3*(ForwardFLOPs(disc, b.B, b.S, 0, false)+n*(2*H*H+2*H))
}

// StepFLOPs counts a training step of a family's recipe on the batch: ElectraStepFLOPs (with
// GeneratorConfig's generator) for ELECTRA, TrainFLOPs for the others.
func StepFLOPs(c bert.Config, b PretrainBatch) float64 {
	if c.Family.Is(bert.FamilyELECTRA) {
		return ElectraStepFLOPs(c, GeneratorConfig(c), b)
	}
	return TrainFLOPs(c, b)
}
