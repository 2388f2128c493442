package pipeline

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// Vector is one vector a step shows: a row of numbers the model computed for the chosen token.
type Vector struct {
	Name   string    `json:"name"`
	Values []float32 `json:"values"`
	// Heads, when above 1, says that the vector is the concatenation of that many attention
	// heads of equal width (drawn with a gap between them).
	Heads int `json:"heads,omitempty"`
	// Labels name the elements (the tokens, for a row of scores or probabilities); nil for a
	// hidden vector, whose elements are just its dimensions.
	Labels []string `json:"labels,omitempty"`
	// Max, when above 0, is the fixed magnitude the vector is drawn against (1 for
	// probabilities); else its own largest magnitude.
	Max float32 `json:"max,omitempty"`
}

// Step is one operation of the model, with the numbers that went in and came out.
type Step struct {
	ID      string   `json:"id"`      // stable name, e.g. "softmax"
	Title   string   `json:"title"`   // short heading
	Formula string   `json:"formula"` // what is computed, in plain notation
	What    string   `json:"what"`    // one line on what the step does
	Vectors []Vector `json:"vectors"`
}

// Vector returns the step's vector named name, or nil.
func (s *Step) Vector(name string) []float32 {
	for _, v := range s.Vectors {
		if v.Name == name {
			return v.Values
		}
	}
	return nil
}

// StepsResult is the walk through one layer for one token: what the "Inside a layer" view shows.
type StepsResult struct {
	Layer     int      `json:"layer"`
	NumLayers int      `json:"num_layers"`
	NumHeads  int      `json:"num_heads"`
	HeadDim   int      `json:"head_dim"`
	Token     int      `json:"token"` // position of the chosen token ([CLS] is 0)
	Tokens    []string `json:"tokens"`
	Act       string   `json:"act"` // the feed-forward activation (config hidden_act)
	Steps     []Step   `json:"steps"`
	Truncated bool     `json:"truncated"`
}

// Step returns the step with id, or nil.
func (r *StepsResult) Step(id string) *Step {
	for i := range r.Steps {
		if r.Steps[i].ID == id {
			return &r.Steps[i]
		}
	}
	return nil
}

// Steps runs the model on text (truncated to the model's positions) with the trace and returns,
// for token position token and layer layer, every operation in the order the model does them:
// the embedding sum and its LayerNorm, then the layer's Q/K/V, scores, mask, softmax, context,
// output projection with residual and LayerNorm, the feed-forward with its activation, and the
// second residual and LayerNorm. Every number is the model's own (from bert.Trace), except the
// feed-forward's value before the activation, which the trace does not keep and is recomputed
// from the layer's weights.
func Steps(m *bert.Model, tok tokenizer.Encoder, text string, pair *string, layer, token int) (*StepsResult, error) {
	m.EnsureRaw() // linearRow reads the raw weights
	c := m.Config
	if layer < 0 || layer >= c.NumHiddenLayers {
		return nil, fmt.Errorf("steps: layer %d outside [0, %d]", layer, c.NumHiddenLayers-1)
	}
	enc, out, err := traced(m, tok, text, pair)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	S, H, A, D := enc.Len(), c.HiddenSize, c.NumAttentionHeads, c.HeadDim()
	if token < 0 || token >= S {
		return nil, fmt.Errorf("steps: token %d outside [0, %d]", token, S-1)
	}
	tr := out.Trace
	lt := tr.Layers[layer]
	tokRow := func(data []float32, width int) []float32 { return clone(data[token*width : (token+1)*width]) }
	// headRows returns, for every head, row token of a [A, S, S] tensor.
	headRows := func(data []float32) [][]float32 {
		rows := make([][]float32, A)
		for h := range rows {
			off := (h*S + token) * S
			rows[h] = clone(data[off : off+S])
		}
		return rows
	}
	perHead := func(name string, rows [][]float32, labels []string) []Vector {
		vs := make([]Vector, len(rows))
		for h, r := range rows {
			vs[h] = Vector{Name: fmt.Sprintf("%s head %d", name, h), Values: r, Labels: labels}
		}
		return vs
	}

	E := c.EmbDim() // the embeddings' width: H but for ALBERT
	word, pos, typ, sum := tokRow(tr.WordEmb.Data, E), tokRow(tr.PosEmb.Data, E), tokRow(tr.TypeEmb.Data, E), tokRow(tr.EmbSum.Data, E)
	emb := tokRow(tr.HiddenStates[0].Data, H)
	x := tokRow(tr.HiddenStates[layer].Data, H)
	q, k, v := tokRow(lt.Query.Data, H), tokRow(lt.Key.Data, H), tokRow(lt.Value.Data, H)
	scores := headRows(lt.Scores.Data)
	probs := headRows(tr.Attentions[layer].Data)
	// A single text or pair has no padding: every key is attended and the mask adds 0.
	mask := make([]float32, S)
	masked := make([][]float32, A)
	for h := range masked {
		masked[h] = make([]float32, S)
		for j := range masked[h] {
			masked[h][j] = scores[h][j] + mask[j]
		}
	}
	ctx := tokRow(lt.Context.Data, H)
	proj := tokRow(lt.AttnProj.Data, H)
	resid1 := make([]float32, H)
	for i := range resid1 {
		resid1[i] = proj[i] + x[i]
	}
	attnOut := tokRow(lt.AttentionOutput.Data, H)
	I := c.IntermediateSize
	pre := linearRow(m.Block(layer).Inter, attnOut)
	inter := tokRow(lt.Intermediate.Data, I)
	ffn := tokRow(lt.FFNOut.Data, H)
	resid2 := make([]float32, H)
	for i := range resid2 {
		resid2[i] = ffn[i] + attnOut[i]
	}
	hOut := tokRow(tr.HiddenStates[layer+1].Data, H)

	t := enc.Tokens[token]
	inName := "x = embedding output"
	if layer > 0 {
		inName = fmt.Sprintf("x = output of layer %d", layer-1)
	}
	sqrtD := math.Sqrt(float64(D))
	res := &StepsResult{Layer: layer, NumLayers: c.NumHiddenLayers, NumHeads: A, HeadDim: D, Token: token, Tokens: enc.Tokens,
		Act: c.HiddenAct, Truncated: enc.Truncated}
	qkv := []Vector{{Name: inName, Values: x}, {Name: "q", Values: q, Heads: A}, {Name: "k", Values: k, Heads: A}, {Name: "v", Values: v, Heads: A}}
	ctxV := []Vector{{Name: "context", Values: ctx, Heads: A}}
	embed := Step{ID: "embed", Title: "Embedding sum",
		Formula: fmt.Sprintf("e = word[%q] + position[%d] + type[%d]", t, token, enc.TypeIDs[token]),
		What:    "The token's vector starts as the sum of three learned rows: one for the word piece, one for its position, one for its segment.",
		Vectors: []Vector{{Name: "word", Values: word}, {Name: "position", Values: pos}, {Name: "type", Values: typ}, {Name: "sum", Values: sum}}}
	scoreFormula := fmt.Sprintf("score[j] = q · k_j / √%d = q · k_j / %.3g", D, sqrtD)
	scoreWhat := fmt.Sprintf("Each head compares the query of “%s” with the key of every token: a large dot product means a good match. Dividing by √d keeps the scores in a range where softmax still spreads.", t)
	switch {
	case c.Disentangled != nil:
		// DeBERTa: the rows the model has, and the disentangled scores.
		formula, vecs, parts := fmt.Sprintf("e = word[%q]", t), []Vector{{Name: "word", Values: word}}, "one for the word piece"
		if m.PosEmb != nil {
			formula += fmt.Sprintf(" + position[%d]", token)
			vecs, parts = append(vecs, Vector{Name: "position", Values: pos}), parts+", one for its position"
		}
		if c.HasTokenTypes() {
			formula += fmt.Sprintf(" + type[%d]", enc.TypeIDs[token])
			vecs, parts = append(vecs, Vector{Name: "type", Values: typ}), parts+", one for its segment"
		}
		embed.Formula, embed.Vectors = formula, append(vecs, Vector{Name: "sum", Values: sum})
		embed.What = "The token's vector starts as the sum of its rows (" + parts + "). DeBERTa's positions enter the attention scores instead, as relative distances."
		if d := c.Disentangled; d.Relative {
			scoreFormula = fmt.Sprintf("score[j] = (q · k_j%s%s) / √(%d·%d), r = relative embeddings, δ = bucketed distance",
				map[bool]string{true: " + q · W_K r[δ(i−j)]"}[d.C2P], map[bool]string{true: " + k_j · W_Q r[−δ(j−i)]"}[d.P2C], D, d.ScaleFactor())
			scoreWhat += " DeBERTa adds content-to-position and position-to-content terms: how well the query matches the key's distance, and the key the query's, through the layer's own query and key maps."
		}
	case !c.HasTokenTypes():
		// DistilBERT: no segment row.
		embed.Formula = fmt.Sprintf("e = word[%q] + position[%d]", t, token)
		embed.What = "The token's vector starts as the sum of two rows: one for the word piece and one for its position. This model has no segment (token type) embeddings."
		embed.Vectors = []Vector{{Name: "word", Values: word}, {Name: "position", Values: pos}, {Name: "sum", Values: sum}}
	case c.FamilyOf() == bert.FamilyRoBERTa:
		// RoBERTa counts positions from pad_token_id+1 over the non-pad tokens.
		ids := make([]int, len(enc.IDs))
		c.PositionIDs(ids, enc.IDs, len(enc.IDs))
		embed.Formula = fmt.Sprintf("e = word[%q] + position[%d] + type[%d]", t, ids[token], enc.TypeIDs[token])
		embed.What = fmt.Sprintf("The token's vector starts as the sum of three learned rows: one for the word piece, one for its position, one for its segment. RoBERTa numbers positions from %d (the padding id plus one), so token %d uses row %d.", c.PadTokenID+1, token, ids[token])
	}
	if c.Relative() {
		// Relative positions: no position row in the sum; the distance enters every score.
		embed.Formula = fmt.Sprintf("e = word[%q] + type[%d]", t, enc.TypeIDs[token])
		embed.What = "The token's vector starts as the sum of two learned rows: one for the word piece and one for its segment. This model adds no position here: each layer's attention scores carry the distance between tokens instead (relative positions)."
		embed.Vectors = []Vector{{Name: "word", Values: word}, {Name: "type", Values: typ}, {Name: "sum", Values: sum}}
		scoreFormula = fmt.Sprintf("score[j] = (q · k_j + q · r[i−j] + k_j · r[i−j]) / √%d, r = the layer's distance embedding", D)
		if c.PositionEmbeddingType == bert.PositionRelativeKey {
			scoreFormula = fmt.Sprintf("score[j] = (q · k_j + q · r[i−j]) / √%d, r = the layer's distance embedding", D)
		}
		scoreWhat += " This model also adds terms that depend only on the distance i−j between the two tokens, so a head can learn to look at the previous or the next word."
	}
	embedLN := Step{ID: "embed-ln", Title: "Embedding LayerNorm",
		Formula: "LayerNorm(e) = γ · (e − mean(e)) / √(var(e) + ε) + β",
		What:    "LayerNorm rescales the sum to mean 0 and variance 1 across its dimensions, then applies a learned scale γ and shift β. This is the input of layer 0.",
		Vectors: []Vector{{Name: "sum", Values: sum}, {Name: "embedding output", Values: emb}}}
	if tr.Embeddings != nil {
		// ALBERT, ELECTRA: the LayerNorm's output is E wide; a linear map takes it to the hidden size.
		embedLN.Formula += fmt.Sprintf(", then x = LayerNorm(e)·W_embᵀ + b_emb, %d → %d dimensions", E, H)
		embedLN.What = fmt.Sprintf("LayerNorm rescales the sum to mean 0 and variance 1 across its dimensions, then applies a learned scale γ and shift β. This model keeps its embeddings small (%d numbers a token) and one linear map (ALBERT's embedding_hidden_mapping_in, ELECTRA's embeddings_project) widens them to the %d of the layers: that is the input of layer 0.", E, H)
		embedLN.Vectors = []Vector{{Name: "sum", Values: sum}, {Name: "LayerNorm output", Values: tokRow(tr.Embeddings.Data, E)}, {Name: "embedding output", Values: emb}}
	}
	res.Steps = []Step{
		embed,
		embedLN,
		{ID: "qkv", Title: "Query, key and value",
			Formula: fmt.Sprintf("q = x·W_Qᵀ + b_Q, k = x·W_Kᵀ + b_K, v = x·W_Vᵀ + b_V, each split into %d heads of %d", A, D),
			What:    "Three linear maps turn the token's vector into a query (what it looks for), a key (what it offers) and a value (what it passes on), each cut into one slice per head.",
			Vectors: qkv},
		{ID: "scores", Title: "Scores",
			Formula: scoreFormula,
			What:    scoreWhat,
			Vectors: perHead("scores", scores, enc.Tokens)},
		{ID: "mask", Title: "Attention mask",
			Formula: "score[j] + mask[j], mask[j] = 0 for a real token, −3.4e38 for padding",
			What:    "The mask pushes padding keys to minus infinity so that softmax gives them nothing. One sentence has no padding: the mask adds 0 everywhere.",
			Vectors: append([]Vector{{Name: "mask", Values: mask, Labels: enc.Tokens}}, perHead("masked scores", masked, enc.Tokens)...)},
		{ID: "softmax", Title: "Softmax",
			Formula: "p[j] = exp(s[j] − max s) / Σₖ exp(s[k] − max s)",
			What:    "Softmax turns each head's scores into attention weights: positive and summing to 1 over the tokens (the row of the attention view).",
			Vectors: probVectors(perHead("attention", probs, enc.Tokens))},
		{ID: "context", Title: "Context",
			Formula: "context_h = Σⱼ p_h[j] · v_h[j], heads concatenated",
			What:    "Each head takes the weighted average of the tokens' value slices with its attention weights; the heads' results are put side by side.",
			Vectors: ctxV},
		{ID: "attn-out", Title: "Output projection, residual, LayerNorm",
			Formula: "a = LayerNorm(context·W_Oᵀ + b_O + x)",
			What:    "A linear map mixes the heads back together; the layer's input is added back (the residual connection) and LayerNorm rescales the sum.",
			Vectors: []Vector{{Name: "projection", Values: proj}, {Name: "projection + x", Values: resid1}, {Name: "attention output a", Values: attnOut}}},
		{ID: "ffn", Title: "Feed-forward with " + actName(c.HiddenAct),
			Formula: fmt.Sprintf("f = %s(a·W_1ᵀ + b_1), %d → %d dimensions", actName(c.HiddenAct), H, I),
			What:    fmt.Sprintf("Each token on its own goes through a wider layer (%d units); %s lets small and negative values through only softly, which makes the network non-linear.", I, actName(c.HiddenAct)),
			Vectors: []Vector{{Name: "a·W_1ᵀ + b_1", Values: pre}, {Name: actName(c.HiddenAct) + " output f", Values: inter}}},
		{ID: "ffn-out", Title: "Feed-forward output, residual, LayerNorm",
			Formula: "y = LayerNorm(f·W_2ᵀ + b_2 + a)",
			What:    fmt.Sprintf("A second linear map brings the vector back to %d dimensions; the attention output is added back and LayerNorm gives the layer's output, the input of the next layer.", H),
			Vectors: []Vector{{Name: "f·W_2ᵀ + b_2", Values: ffn}, {Name: "f·W_2ᵀ + b_2 + a", Values: resid2}, {Name: fmt.Sprintf("output of layer %d", layer), Values: hOut}}},
	}
	return res, nil
}

// probVectors marks vectors of probabilities, drawn on a fixed 0-to-1 scale.
func probVectors(vs []Vector) []Vector {
	for i := range vs {
		vs[i].Max = 1
	}
	return vs
}

func actName(act string) string {
	switch act {
	case "", "gelu":
		return "GELU"
	case "gelu_new", "gelu_pytorch_tanh":
		return "GELU (tanh)"
	}
	return act
}

// linearRow is x·Wᵀ + b for one row x.
func linearRow(l bert.Linear, x []float32) []float32 {
	out, in := l.W.Shape[0], l.W.Shape[1]
	y := make([]float32, out)
	for o := range y {
		w := l.W.Data[o*in : (o+1)*in]
		var s float64
		for i, xi := range x {
			s += float64(w[i]) * float64(xi)
		}
		if l.B != nil {
			s += float64(l.B.Data[o])
		}
		y[o] = float32(s)
	}
	return y
}

func clone(s []float32) []float32 { return append([]float32(nil), s...) }
