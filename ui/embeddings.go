package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/pipeline"
)

// DefaultEmbSentences are the embeddings view's sentences until the user writes their own: one
// word in different senses, so that the map shows context at work ("bank" starts in one place at
// layer 0, where a token is its own embedding plus its position, and drifts apart).
var DefaultEmbSentences = []string{
	"the bank of the river was muddy.",
	"the bank raised its interest rates.",
	"she deposited the money at the bank.",
}

// DefaultEmbWord is the word the default sentences follow.
const DefaultEmbWord = "bank"

// EmbLab is the state of the embeddings view: its sentences, the layer shown, and the engine's
// maps of every layer (so that the slider needs no request).
type EmbLab struct {
	Sentences []string
	// Layer 0 is the embedding output, l the output of encoder layer l.
	Layer int
	// Hide leaves [CLS], [SEP] and punctuation out of the map and of its PCA ("&special=0").
	Hide bool
	// Word is the token whose points are joined across sentences ("" for none).
	Word string
	// Draft is the "add a sentence" box.
	Draft string

	Maps []pipeline.EmbeddingMapResult // by layer, 0 to L
	key  string                        // the sentences, options and model Maps are for
	req  int
	gen  int // bumped with every new Maps: the canvas redraws when it changes
	Err  string
}

func (e *EmbLab) setRoute(r Route) {
	switch {
	case len(r.Sentences) > 0:
		e.Sentences, e.Word = slices.Clone(r.Sentences), r.Word
	case len(e.Sentences) == 0:
		e.Sentences, e.Word = slices.Clone(DefaultEmbSentences), DefaultEmbWord
	}
	if r.View == ViewEmbeddings {
		e.Layer, e.Hide = r.Layer, r.HideSpecial
	}
}

// route puts the view's state into r when the view is shown.
func (e *EmbLab) route(r *Route) {
	if r.View != ViewEmbeddings {
		return
	}
	r.Sentences, r.Layer, r.HideSpecial, r.Word = e.Sentences, e.Layer, e.Hide, e.Word
}

// fetchEmbeddings asks the engine for the maps of the current sentences, unless they are shown.
// Called with the render lock held.
func (a *App) fetchEmbeddings() {
	e := &a.Emb
	if !a.Loaded || a.View != ViewEmbeddings {
		return
	}
	if len(e.Sentences) == 0 {
		e.Maps, e.key, e.Err = nil, "", "Add a sentence to map its tokens."
		e.gen++
		return
	}
	sentences, opts := slices.Clone(e.Sentences), pipeline.EmbeddingMapOptions{HideSpecial: e.Hide}
	// The model is part of the key: a newly loaded one (a new Info) maps again.
	key := fmt.Sprintf("%p|%t|%s", a.Info, e.Hide, strings.Join(sentences, "\x00"))
	if e.key == key {
		return
	}
	e.req++
	n := e.req
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		maps, err := a.Eng.Embeddings(sentences, opts)
		a.Do(func() {
			if n != e.req {
				return
			}
			e.key = key
			e.gen++
			if err != nil {
				e.Maps, e.Err = nil, err.Error()
				return
			}
			e.Maps, e.Err = maps, ""
			e.Layer = min(max(e.Layer, 0), len(maps)-1)
		})
	})
}

// SetEmbLayer shows layer l of the maps (0 is the embedding output).
func (a *App) SetEmbLayer(l int) {
	e := &a.Emb
	top := a.numLayers()
	if len(e.Maps) > 0 {
		top = len(e.Maps) - 1
	}
	e.Layer = min(max(l, 0), top)
	a.writeRoute()
}

// EmbLayerBy moves the embeddings view by d layers, stopping at either end.
func (a *App) EmbLayerBy(d int) { a.SetEmbLayer(a.Emb.Layer + d) }

// SetEmbHide shows or hides [CLS], [SEP] and punctuation (the map is fitted again).
func (a *App) SetEmbHide(hide bool) {
	a.Emb.Hide = hide
	a.writeRoute()
	a.fetchEmbeddings()
}

// SetEmbWord joins the points of token w across sentences; the same word again unpins it.
func (a *App) SetEmbWord(w string) {
	if a.Emb.Word == w {
		w = ""
	}
	a.Emb.Word = w
	a.writeRoute()
}

// SetSentence replaces sentence i; an emptied sentence is removed.
func (a *App) SetSentence(i int, text string) {
	e := &a.Emb
	if i < 0 || i >= len(e.Sentences) {
		return
	}
	text = cleanSentence(text)
	if text == "" {
		a.RemoveSentence(i)
		return
	}
	if text == e.Sentences[i] {
		return
	}
	e.Sentences = slices.Clone(e.Sentences)
	e.Sentences[i] = text
	a.writeRoute()
	a.fetchEmbeddings()
}

// RemoveSentence removes sentence i.
func (a *App) RemoveSentence(i int) {
	e := &a.Emb
	if i < 0 || i >= len(e.Sentences) {
		return
	}
	e.Sentences = slices.Delete(slices.Clone(e.Sentences), i, i+1)
	a.writeRoute()
	a.fetchEmbeddings()
}

// EmbTyped takes the "add a sentence" box's value as the user types.
func (a *App) EmbTyped(text string) { a.Emb.Draft = text }

// AddSentence adds the "add a sentence" box's text to the map (at most
// pipeline.MaxEmbeddingSentences sentences).
func (a *App) AddSentence() {
	e := &a.Emb
	text := cleanSentence(e.Draft)
	if text == "" || len(e.Sentences) >= pipeline.MaxEmbeddingSentences {
		return
	}
	e.Sentences = append(slices.Clone(e.Sentences), text)
	e.Draft = ""
	a.writeRoute()
	a.fetchEmbeddings()
}

// cleanSentence is a sentence as the map takes it: one line, no surrounding spaces.
func cleanSentence(s string) string {
	return strings.TrimSpace(strings.Join(strings.Fields(s), " "))
}

// embKey handles the arrow keys in the embeddings view: every arrow steps the layer.
func (a *App) embKey(key string) bool {
	switch key {
	case "ArrowLeft", "ArrowUp":
		a.EmbLayerBy(-1)
	case "ArrowRight", "ArrowDown":
		a.EmbLayerBy(1)
	default:
		return false
	}
	return true
}
