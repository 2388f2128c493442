package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestMapStates: the vectors an embedding map is fitted to are the hidden states of
// bert.Forward's trace (layer 0 its embedding output, the last layer last_hidden_state), token
// by token, and each layer's points are those vectors projected by FitPCA.
func TestMapStates(t *testing.T) {
	f := loadFixture(t)
	m, tok := f.Model, f.Tokenizer
	sentences := []string{"the bank of the river was muddy.", "the bank raised its interest rates"}
	L, H := m.Config.NumHiddenLayers, m.Config.HiddenSize
	for _, hide := range []bool{false, true} {
		opts := EmbeddingMapOptions{HideSpecial: hide}
		st, err := hiddenStates(m, tok, sentences, opts)
		if err != nil {
			t.Fatal(err)
		}
		// The tokens kept, and their vectors, from a traced forward pass of each sentence.
		var want []EmbeddingPoint
		wantVecs := make([][][]float32, L+1)
		for s, text := range sentences {
			enc, err := tok.Encode(text, 0)
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.Forward(bert.Batch{B: 1, S: enc.Len(), InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, bert.Options{Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Trace.HiddenStates) != L+1 {
				t.Fatalf("trace has %d hidden states, want %d", len(out.Trace.HiddenStates), L+1)
			}
			for i, tk := range enc.Tokens {
				special := i == 0 || i == enc.Len()-1
				punct := tk == "."
				if hide && (special || punct) {
					continue
				}
				want = append(want, EmbeddingPoint{Sentence: s, Token: tk, Position: i, Special: special, Punct: punct})
				for l := 0; l <= L; l++ {
					wantVecs[l] = append(wantVecs[l], out.Trace.HiddenStates[l].Data[i*H:(i+1)*H])
				}
				// The last hidden state is the model's output.
				for j := range H {
					if wantVecs[L][len(wantVecs[L])-1][j] != out.Hidden.Data[i*H+j] {
						t.Fatalf("sentence %d token %d: hidden_states[%d] is not last_hidden_state", s, i, L)
					}
				}
			}
		}
		if len(st.points) != len(want) {
			t.Fatalf("hide=%v: %d points, want %d", hide, len(st.points), len(want))
		}
		for i, p := range st.points {
			if p != want[i] {
				t.Errorf("hide=%v: point %d is %+v, want %+v", hide, i, p, want[i])
			}
		}
		for l := 0; l <= L; l++ {
			for i := range want {
				for j := range H {
					if st.vecs[l][i][j] != wantVecs[l][i][j] {
						t.Fatalf("hide=%v layer %d point %d dim %d: %v, trace %v", hide, l, i, j, st.vecs[l][i][j], wantVecs[l][i][j])
					}
				}
			}
		}

		all, err := EmbeddingLayers(m, tok, sentences, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != L+1 {
			t.Fatalf("%d layers, want %d", len(all), L+1)
		}
		for l := 0; l <= L; l++ {
			rows := make([][]float64, len(want))
			for i, v := range wantVecs[l] {
				for _, x := range v {
					rows[i] = append(rows[i], float64(x))
				}
			}
			pca, err := FitPCA(rows, 2)
			if err != nil {
				t.Fatal(err)
			}
			one, err := EmbeddingMap(m, tok, sentences, l, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []*EmbeddingMapResult{&all[l], one} {
				if r.Layer != l || r.NumLayers != L || len(r.Points) != len(want) || len(r.Truncated) != 2 || r.Truncated[0] || r.Truncated[1] {
					t.Fatalf("layer %d: header %d %d %d %v", l, r.Layer, r.NumLayers, len(r.Points), r.Truncated)
				}
				if r.Explained[0] != pca.Explained[0] || r.Explained[1] != pca.Explained[1] || r.Explained[0] < r.Explained[1] {
					t.Errorf("layer %d: explained %v, want %v", l, r.Explained, pca.Explained[:2])
				}
				for i, p := range r.Points {
					if p.X != pca.Projected[i][0] || p.Y != pca.Projected[i][1] || p.Token != want[i].Token || p.Sentence != want[i].Sentence {
						t.Fatalf("layer %d point %d: %+v, want %s at %v", l, i, p, want[i].Token, pca.Projected[i])
					}
				}
				// A projection onto two orthonormal axes never lengthens a distance.
				for i := range r.Points {
					for j := range i {
						d2 := math.Hypot(r.Points[i].X-r.Points[j].X, r.Points[i].Y-r.Points[j].Y)
						if dH := dist(rows[i], rows[j]); d2 > dH*(1+1e-9)+1e-9 {
							t.Fatalf("layer %d: points %d and %d are %v apart in 2-D, %v in %d-D", l, i, j, d2, dH, H)
						}
					}
				}
			}
		}
	}
}

// TestMapBadInput: every way the page or a caller can get it wrong is an error, not a
// panic.
func TestMapBadInput(t *testing.T) {
	f := loadFixture(t)
	m, tok := f.Model, f.Tokenizer
	L := m.Config.NumHiddenLayers
	nine := make([]string, MaxEmbeddingSentences+1)
	for i := range nine {
		nine[i] = "a sentence"
	}
	for _, tc := range []struct {
		name      string
		sentences []string
		layer     int
		hide      bool
		err       string
	}{
		{"no sentences", nil, 0, false, "no sentences"},
		{"too many sentences", nine, 0, false, "at most 8"},
		{"an empty sentence", []string{"a cat", "  "}, 0, false, "sentence 2 is empty"},
		{"layer below 0", []string{"a cat"}, -1, false, "layer -1 outside"},
		{"layer past the last", []string{"a cat"}, L + 1, false, "outside [0, 2]"},
		{"nothing left once hidden", []string{"!", "?."}, 0, true, "no token left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EmbeddingMap(m, tok, tc.sentences, tc.layer, EmbeddingMapOptions{HideSpecial: tc.hide})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
	// A long sentence is cut, and says so; one sentence of one word still maps (3 points).
	r, err := EmbeddingMap(m, tok, []string{strings.Repeat("word ", 100), "cat"}, L, EmbeddingMapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keep := min(MaxEmbeddingTokens, m.Config.MaxPositionEmbeddings)
	if !r.Truncated[0] || r.Truncated[1] || len(r.Points) != keep+3 {
		t.Errorf("truncated %v, %d points, want [true false] and %d", r.Truncated, len(r.Points), keep+3)
	}
	for _, p := range r.Points {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) {
			t.Fatalf("point %+v", p)
		}
	}
}
