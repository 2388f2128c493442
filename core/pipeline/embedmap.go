// The embeddings view's maps: the hidden states of a few sentences' tokens projected to 2-D by
// a PCA (gonum's EigenSym) of every layer's states.

package pipeline

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// EmbeddingMap runs the model on each sentence and returns layer's hidden states of all their
// tokens projected onto their first two principal axes.
func EmbeddingMap(m *bert.Model, tok tokenizer.Encoder, sentences []string, layer int, opts EmbeddingMapOptions) (*EmbeddingMapResult, error) {
	if L := m.Config.NumHiddenLayers; layer < 0 || layer > L {
		return nil, fmt.Errorf("embedding map: layer %d outside [0, %d] (0 is the embedding output)", layer, L)
	}
	st, err := hiddenStates(m, tok, sentences, opts)
	if err != nil {
		return nil, err
	}
	return st.project(layer)
}

// EmbeddingLayers is EmbeddingMap for every layer, 0 to NumHiddenLayers, from one forward
// pass per sentence: element l is layer l.
func EmbeddingLayers(m *bert.Model, tok tokenizer.Encoder, sentences []string, opts EmbeddingMapOptions) ([]EmbeddingMapResult, error) {
	st, err := hiddenStates(m, tok, sentences, opts)
	if err != nil {
		return nil, err
	}
	out := make([]EmbeddingMapResult, m.Config.NumHiddenLayers+1)
	for l := range out {
		r, err := st.project(l)
		if err != nil {
			return nil, err
		}
		out[l] = *r
	}
	return out, nil
}

// mapStates are the kept tokens of an embedding map and their hidden states at every layer.
type mapStates struct {
	numLayers int
	points    []EmbeddingPoint // coordinates not yet set
	vecs      [][][]float32    // [L+1][N][H]
	truncated []bool
}

func hiddenStates(m *bert.Model, tok tokenizer.Encoder, sentences []string, opts EmbeddingMapOptions) (*mapStates, error) {
	switch {
	case len(sentences) == 0:
		return nil, fmt.Errorf("embedding map: no sentences")
	case len(sentences) > MaxEmbeddingSentences:
		return nil, fmt.Errorf("embedding map: %d sentences; at most %d", len(sentences), MaxEmbeddingSentences)
	}
	L, H := m.Config.NumHiddenLayers, m.Config.HiddenSize
	st := &mapStates{numLayers: L, vecs: make([][][]float32, L+1), truncated: make([]bool, len(sentences))}
	for s, text := range sentences {
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("embedding map: sentence %d is empty", s+1)
		}
		enc, err := tok.Encode(text, min(MaxEmbeddingTokens, m.Config.MaxSequenceLength()))
		if err != nil {
			return nil, fmt.Errorf("embedding map: sentence %d: %w", s+1, err)
		}
		S := enc.Len()
		out, err := m.Forward(bert.Batch{B: 1, S: S, InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, bert.Options{Trace: true})
		if err != nil {
			return nil, fmt.Errorf("embedding map: sentence %d: %w", s+1, err)
		}
		st.truncated[s] = enc.Truncated
		for i, t := range enc.Tokens {
			p := EmbeddingPoint{Sentence: s, Token: t, Position: i, Special: enc.Special[i], Punct: isPunct(t)}
			if opts.HideSpecial && (p.Special || p.Punct) {
				continue
			}
			st.points = append(st.points, p)
			for l, h := range out.Trace.HiddenStates {
				st.vecs[l] = append(st.vecs[l], h.Data[i*H:(i+1)*H:(i+1)*H]) // row i of [1, S, H]
			}
		}
	}
	if len(st.points) == 0 {
		return nil, fmt.Errorf("embedding map: no token left to show once [CLS], [SEP] and punctuation are hidden")
	}
	return st, nil
}

// project fits layer's PCA and places the points.
func (st *mapStates) project(layer int) (*EmbeddingMapResult, error) {
	rows := make([][]float64, len(st.vecs[layer]))
	for i, v := range st.vecs[layer] {
		rows[i] = make([]float64, len(v))
		for j, x := range v {
			rows[i][j] = float64(x)
		}
	}
	pca, err := FitPCA(rows, 2)
	if err != nil {
		return nil, fmt.Errorf("embedding map: layer %d: %w", layer, err)
	}
	res := &EmbeddingMapResult{Layer: layer, NumLayers: st.numLayers, Points: make([]EmbeddingPoint, len(st.points)),
		Explained: [2]float64{pca.Explained[0], pca.Explained[1]}, Truncated: st.truncated}
	for i, p := range st.points {
		p.X, p.Y = pca.Projected[i][0], pca.Projected[i][1]
		res.Points[i] = p
	}
	return res, nil
}

// isPunct reports whether a token is punctuation or symbols only (the basic tokenizer splits
// them into tokens of their own).
func isPunct(t string) bool {
	if t == "" {
		return false
	}
	for _, r := range t {
		if !unicode.IsPunct(r) && !unicode.IsSymbol(r) {
			return false
		}
	}
	return true
}
