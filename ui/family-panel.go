package ui

import (
	"fmt"

	"github.com/bertlab/bertlab/core/engine"
)

// FamilyPanel is the Models view's family card: which member of BERT's family the loaded model
// is, its sizes, what its weights share, its positions and its pre-training heads
// (engine.DescribeFamily).
type FamilyPanel struct {
	Card *FamilyCard
}

func (c *FamilyPanel) sizes() string {
	E, H := c.Card.EmbeddingSize, c.Card.HiddenSize
	switch {
	case c.Card.EmbeddingProjection && E != H:
		V := int64(c.Card.VocabSize)
		return fmt.Sprintf("E %d → H %d: each token's embedding has %d numbers, and a linear layer maps them up to the hidden size. The vocabulary's table holds %s numbers (V×E) where V×H would be %s.",
			E, H, E, groupDigits(V*int64(E)), groupDigits(V*int64(H)))
	case c.Card.EmbeddingProjection:
		return fmt.Sprintf("E = H = %d, still through a linear layer (as this family always has)", H)
	}
	return fmt.Sprintf("E = H = %d: the embeddings are as wide as the hidden states", H)
}

func (c *FamilyPanel) layers() string {
	n, d := c.Card.Blocks, c.Card.DistinctLayers
	switch {
	case d == 1 && n > 1:
		return fmt.Sprintf("%d, all running one set of weights", n)
	case d < n:
		return fmt.Sprintf("%d, running %d sets of weights", n, d)
	}
	return fmt.Sprintf("%d, each with its own weights", n)
}

func (c *FamilyPanel) headClass(h engine.FamilyHead) string {
	if h.Present {
		return "famhead present"
	}
	return "famhead absent"
}

func (c *FamilyPanel) present(h engine.FamilyHead) string {
	if h.Present {
		return "1"
	}
	return "0"
}

func (c *FamilyPanel) headLabel(h engine.FamilyHead) string {
	if h.Present {
		return "✓ " + h.Name
	}
	return "✗ " + h.Name
}
