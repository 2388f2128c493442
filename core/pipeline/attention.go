package pipeline

import (
	"fmt"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// AttentionResult is one layer's attention probabilities for one text (or pair): what the
// attention view draws and what `POST /api/attention` answers.
type AttentionResult struct {
	Layer     int      `json:"layer"`
	NumLayers int      `json:"num_layers"`
	NumHeads  int      `json:"num_heads"`
	Tokens    []string `json:"tokens"`
	// TypeIDs are the tokens' segments (token_type_ids): 0 for [CLS], the first text and its
	// [SEP], 1 for the second text and the last [SEP].
	TypeIDs []int `json:"token_type_ids"`
	// Attentions[h][i][j] is how much token i attends to token j in head h (softmax over j, so
	// every row sums to 1): HF's output_attentions[layer][0].
	Attentions [][][]float32 `json:"attentions"` // [A, S, S]
	// Truncated reports that the text was cut to the model's max_position_embeddings tokens.
	Truncated bool `json:"truncated"`
}

// Attention runs the model on text (and the optional second segment pair), truncated to the
// model's positions, and returns layer's attention probabilities.
func Attention(m *bert.Model, tok tokenizer.Encoder, text string, pair *string, layer int) (*AttentionResult, error) {
	if L := m.Config.NumHiddenLayers; layer < 0 || layer >= L {
		return nil, fmt.Errorf("attention: layer %d outside [0, %d]", layer, L-1)
	}
	enc, out, err := traced(m, tok, text, pair)
	if err != nil {
		return nil, err
	}
	res := attentionOf(m, enc, out, layer)
	return &res, nil
}

// AttentionLayers is Attention for every layer at once, from one forward pass (a view that
// draws all layers needs no more): element l is layer l.
func AttentionLayers(m *bert.Model, tok tokenizer.Encoder, text string, pair *string) ([]AttentionResult, error) {
	enc, out, err := traced(m, tok, text, pair)
	if err != nil {
		return nil, err
	}
	layers := make([]AttentionResult, m.Config.NumHiddenLayers)
	for l := range layers {
		layers[l] = attentionOf(m, enc, out, l)
	}
	return layers, nil
}

// traced encodes text (and pair), truncated to the model's positions, and runs the model with
// the trace, which holds every layer's probabilities: the forward pass has no way to stop early.
func traced(m *bert.Model, tok tokenizer.Encoder, text string, pair *string) (tokenizer.Encoding, *bert.Output, error) {
	enc, err := Encode(tok, text, pair, m.Config.MaxSequenceLength())
	if err != nil {
		return enc, nil, fmt.Errorf("attention: %w", err)
	}
	b := bert.Batch{B: 1, S: enc.Len(), InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}
	out, err := m.Forward(b, bert.Options{Trace: true})
	if err != nil {
		return enc, nil, fmt.Errorf("attention: %w", err)
	}
	return enc, out, nil
}

// attentionOf views layer's probabilities [1, A, S, S] of a traced pass as [A][S][S] rows
// (no copy).
func attentionOf(m *bert.Model, enc tokenizer.Encoding, out *bert.Output, layer int) AttentionResult {
	probs := out.Trace.Attentions[layer].Data
	A, S := m.Config.NumAttentionHeads, enc.Len()
	att := make([][][]float32, A)
	for h := range att {
		att[h] = make([][]float32, S)
		for i := range att[h] {
			off := (h*S + i) * S
			att[h][i] = probs[off : off+S : off+S]
		}
	}
	return AttentionResult{Layer: layer, NumLayers: m.Config.NumHiddenLayers, NumHeads: A, Tokens: enc.Tokens, TypeIDs: enc.TypeIDs, Attentions: att, Truncated: enc.Truncated}
}
