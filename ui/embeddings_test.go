package ui

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/bertlab/bertlab/core/pipeline"
)

func TestEmbeddingsRoute(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Route
	}{
		{"sentences, layer, word", Route{View: ViewEmbeddings, Text: "x", Sentences: []string{"the bank, & more+", "é 中文?"}, Layer: 2, Word: "bank"}},
		{"hidden specials, no word", Route{View: ViewEmbeddings, Sentences: []string{"a"}, HideSpecial: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := ParseRoute(tc.r.Hash())
			if got.View != ViewEmbeddings || !slices.Equal(got.Sentences, tc.r.Sentences) || got.Layer != tc.r.Layer ||
				got.Word != tc.r.Word || got.HideSpecial != tc.r.HideSpecial || got.Text != tc.r.Text {
				t.Errorf("%+v -> %q -> %+v", tc.r, tc.r.Hash(), got)
			}
		})
	}
	// Blank sentences are dropped, and at most MaxEmbeddingSentences kept.
	got, _ := ParseRoute("#embeddings?s=a&s=%20%20&s=b" + strings.Repeat("&s=c", 10))
	if len(got.Sentences) != pipeline.MaxEmbeddingSentences || got.Sentences[0] != "a" || got.Sentences[1] != "b" {
		t.Errorf("sentences %q", got.Sentences)
	}
	// Other views do not carry the sentences.
	if h := (Route{View: ViewMask, Text: "t", Sentences: []string{"a"}}).Hash(); strings.Contains(h, "s=a") {
		t.Errorf("mask view hash %q", h)
	}
}

// TestEmbeddingsApp drives the view's state as the page does, with the engine run natively.
func TestEmbeddingsApp(t *testing.T) {
	eng := newNativeEngine(t)
	var hash string
	a := &App{Eng: eng, OnRoute: func(h string) { hash = h }}
	a.Start(ParseRoute("#embeddings"))
	if a.Err != "" || a.Emb.Err != "" || !a.Loaded {
		t.Fatalf("start: loaded %v, err %q %q", a.Loaded, a.Err, a.Emb.Err)
	}
	L := eng.m.Config.NumHiddenLayers
	if !slices.Equal(a.Emb.Sentences, DefaultEmbSentences) || a.Emb.Word != DefaultEmbWord || len(a.Emb.Maps) != L+1 {
		t.Fatalf("defaults: %q word %q, %d maps", a.Emb.Sentences, a.Emb.Word, len(a.Emb.Maps))
	}
	want, err := pipeline.EmbeddingLayers(eng.m, eng.tok, DefaultEmbSentences, pipeline.EmbeddingMapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for l := range want {
		if !slices.Equal(a.Emb.Maps[l].Points, want[l].Points) {
			t.Fatalf("layer %d: the app's map differs from the pipeline's", l)
		}
	}

	a.Key("ArrowRight")
	a.Key("ArrowRight")
	a.Key("ArrowRight") // stops at the last layer
	if a.Emb.Layer != L || !strings.Contains(hash, "layer=2") || !strings.Contains(hash, "word=bank") || !strings.Contains(hash, "s=the%20bank%20of") {
		t.Errorf("after three steps: layer %d, hash %q", a.Emb.Layer, hash)
	}
	a.Key("ArrowLeft")
	a.SetEmbWord("bank") // the same word again lets go
	if a.Emb.Layer != L-1 || a.Emb.Word != "" || strings.Contains(hash, "word=") {
		t.Errorf("layer %d word %q hash %q", a.Emb.Layer, a.Emb.Word, hash)
	}

	a.EmbTyped("  a  fourth\nsentence ")
	a.AddSentence()
	if len(a.Emb.Sentences) != 4 || a.Emb.Sentences[3] != "a fourth sentence" || a.Emb.Draft != "" {
		t.Fatalf("after adding: %q draft %q", a.Emb.Sentences, a.Emb.Draft)
	}
	if n := len(a.Emb.Maps[0].Points); n != len(want[0].Points)+5 { // [CLS] a fourth sentence [SEP]
		t.Errorf("%d points after adding, want %d", n, len(want[0].Points)+5)
	}
	a.SetSentence(0, "   ") // emptied: removed
	if len(a.Emb.Sentences) != 3 || a.Emb.Sentences[0] != DefaultEmbSentences[1] {
		t.Errorf("after emptying the first: %q", a.Emb.Sentences)
	}
	a.SetEmbHide(true)
	for _, p := range a.Emb.Maps[a.Emb.Layer].Points {
		if p.Special || p.Punct {
			t.Fatalf("hidden, yet %+v is in the map", p)
		}
	}
	if !strings.Contains(hash, "special=0") {
		t.Errorf("hash %q", hash)
	}
	for len(a.Emb.Sentences) < pipeline.MaxEmbeddingSentences {
		a.EmbTyped("more")
		a.AddSentence()
	}
	a.EmbTyped("one too many")
	a.AddSentence()
	if len(a.Emb.Sentences) != pipeline.MaxEmbeddingSentences || a.Emb.Err != "" {
		t.Errorf("%d sentences, err %q", len(a.Emb.Sentences), a.Emb.Err)
	}
	for range pipeline.MaxEmbeddingSentences {
		a.RemoveSentence(0)
	}
	if a.Emb.Maps != nil || a.Emb.Err == "" {
		t.Errorf("no sentences: %d maps, err %q", len(a.Emb.Maps), a.Emb.Err)
	}

	// A shared link restores the view, and it renders without a browser.
	b := &App{Eng: eng}
	b.Start(ParseRoute("#embeddings?s=cats%20purr&s=dogs%20bark&layer=1&word=cats"))
	if !slices.Equal(b.Emb.Sentences, []string{"cats purr", "dogs bark"}) || b.Emb.Layer != 1 || b.Emb.Word != "cats" || len(b.Emb.Maps) != L+1 {
		t.Fatalf("shared link: %+v", b.Emb)
	}
	var buf bytes.Buffer
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: b})); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	points := fmt.Sprintf(`data-points="%d"`, len(b.Emb.Maps[1].Points))
	for _, s := range []string{`data-view="embeddings"`, `data-tab="embeddings"`, points, `data-role="emb-map"`, "layer 1 of 2", `data-sentence="1"`} {
		if !strings.Contains(html, s) {
			t.Errorf("static render lacks %s", s)
		}
	}
}
