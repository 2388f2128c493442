package pipeline

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// ReplacedResult is ELECTRA's discriminator on one text (or pair): for every token, the
// probability that it was replaced rather than original. What the replaced-token view draws.
type ReplacedResult struct {
	Tokens []string `json:"tokens"`
	// Special marks the added tokens ([CLS], [SEP]); WordIDs are the tokens' words as the
	// tokenizer numbers them (-1 for the added tokens), TypeIDs their segments.
	Special []bool `json:"special"`
	WordIDs []int  `json:"word_ids"`
	TypeIDs []int  `json:"token_type_ids"`
	// Logits are the discriminator's outputs, one a token (ElectraForPreTraining's logits).
	Logits []float32 `json:"logits"`
	// Replaced[i] is sigmoid(Logits[i]): the model's probability that token i was replaced.
	Replaced []float32 `json:"replaced"`
	// Truncated reports that the text was cut to the model's positions.
	Truncated bool `json:"truncated"`
}

// ReplacedTokens runs an ELECTRA discriminator (a model with the replaced-token head) on text and
// the optional second segment pair, truncated to the model's positions.
func ReplacedTokens(m *bert.Model, tok tokenizer.Encoder, text string, pair *string) (*ReplacedResult, error) {
	if m.RTD == nil {
		return nil, fmt.Errorf("replaced tokens: the model has no replaced-token head (an ELECTRA discriminator, ElectraForPreTraining)")
	}
	enc, err := Encode(tok, text, pair, m.Config.MaxSequenceLength())
	if err != nil {
		return nil, fmt.Errorf("replaced tokens: %w", err)
	}
	out, err := m.Forward(bert.Batch{B: 1, S: enc.Len(), InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, bert.Options{RTD: true})
	if err != nil {
		return nil, fmt.Errorf("replaced tokens: %w", err)
	}
	res := &ReplacedResult{Tokens: enc.Tokens, Special: enc.Special, WordIDs: enc.WordIDs, TypeIDs: enc.TypeIDs, Logits: out.RTDLogits.Data, Replaced: make([]float32, enc.Len()), Truncated: enc.Truncated}
	for i, z := range res.Logits {
		res.Replaced[i] = float32(1 / (1 + math.Exp(-float64(z))))
	}
	return res, nil
}
