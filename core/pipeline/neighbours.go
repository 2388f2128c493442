package pipeline

import (
	"fmt"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// NeighbourShare is how much of a head's attention goes to a query's neighbours, averaged over
// the query tokens that have that neighbour: what makes a "previous-token" or "next-token" head
// (Clark et al. 2019, "What Does BERT Look At?").
type NeighbourShare struct {
	Layer, Head int
	Prev, Next  float64 // mean attention weight on the token before / after the query
}

// NeighbourShares measures every head's NeighbourShare from traced attentions of one sequence
// of S tokens: att[l] is layer l's probabilities [1, A, S, S]. Special tokens count as tokens.
func NeighbourShares(att []*tensor.Tensor, A, S int) []NeighbourShare {
	var out []NeighbourShare
	for l, t := range att {
		for h := range A {
			s := NeighbourShare{Layer: l, Head: h}
			p := t.Data[h*S*S : (h+1)*S*S]
			for i := 1; i < S; i++ {
				s.Prev += float64(p[i*S+i-1])
			}
			for i := 0; i < S-1; i++ {
				s.Next += float64(p[i*S+i+1])
			}
			if S > 1 {
				s.Prev /= float64(S - 1)
				s.Next /= float64(S - 1)
			}
			out = append(out, s)
		}
	}
	return out
}

// NeighbourHeads runs m on each text (as one segment, cut to the model's positions) and
// averages NeighbourShares over them, each text weighing as much as its neighbour pairs.
func NeighbourHeads(m *bert.Model, tok tokenizer.Encoder, texts []string) ([]NeighbourShare, error) {
	c := m.Config
	var sum []NeighbourShare
	pairs := 0
	for _, text := range texts {
		enc, out, err := traced(m, tok, text, nil)
		if err != nil {
			return nil, fmt.Errorf("neighbour heads: %w", err)
		}
		S := enc.Len()
		if S < 2 {
			continue
		}
		shares := NeighbourShares(out.Trace.Attentions, c.NumAttentionHeads, S)
		if sum == nil {
			sum = make([]NeighbourShare, len(shares))
		}
		for i, s := range shares {
			sum[i].Layer, sum[i].Head = s.Layer, s.Head
			sum[i].Prev += s.Prev * float64(S-1)
			sum[i].Next += s.Next * float64(S-1)
		}
		pairs += S - 1
	}
	if pairs == 0 {
		return nil, fmt.Errorf("neighbour heads: no text of two tokens or more")
	}
	for i := range sum {
		sum[i].Prev /= float64(pairs)
		sum[i].Next /= float64(pairs)
	}
	return sum, nil
}
