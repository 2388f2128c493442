package ui

import (
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/pipeline"
)

func preds(kv ...any) pipeline.MaskResult {
	var m pipeline.MaskResult
	for i := 0; i < len(kv); i += 2 {
		m.Predictions = append(m.Predictions, pipeline.Prediction{Token: kv[i].(string), Score: kv[i+1].(float64)})
	}
	return m
}

func TestCompareRows(t *testing.T) {
	tests := []struct {
		name   string
		m1, m2 pipeline.MaskResult
		k      int
		want   []CompareRow
	}{
		{
			name: "union of both top 2, sorted by |p2-p1|",
			m1:   preds("cat", 0.5, "dog", 0.3, "man", 0.1, "car", 0.05),
			m2:   preds("dog", 0.6, "car", 0.2, "cat", 0.1, "man", 0.05),
			k:    2,
			// cat -0.4, dog +0.3, car +0.15
			want: []CompareRow{{Token: "cat", P1: 0.5, P2: 0.1}, {Token: "dog", P1: 0.3, P2: 0.6}, {Token: "car", P1: 0.05, P2: 0.2}},
		},
		{
			name: "a candidate beyond the other's list has its last probability as a bound",
			m1:   preds("a", 0.7, "b", 0.2),
			m2:   preds("c", 0.9, "a", 0.05),
			k:    1,
			// a: 0.7 -> 0.05 (-0.65); c: <=0.2 -> 0.9 (+0.7)
			want: []CompareRow{{Token: "c", P1: 0.2, P2: 0.9, Below1: true}, {Token: "a", P1: 0.7, P2: 0.05}},
		},
		{
			name: "equal changes are ordered by token",
			m1:   preds("y", 0.375, "x", 0.375),
			m2:   preds("x", 0.5, "y", 0.25),
			k:    2,
			want: []CompareRow{{Token: "x", P1: 0.375, P2: 0.5}, {Token: "y", P1: 0.375, P2: 0.25}},
		},
		{name: "no predictions", k: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compareRows(tt.m1, tt.m2, tt.k)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d rows %+v, want %d %+v", len(got), got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Token != w.Token || g.P1 != w.P1 || g.P2 != w.P2 || g.Below1 != w.Below1 || g.Below2 != w.Below2 {
					t.Errorf("row %d: got %+v, want %+v", i, g, w)
				}
				if math.Abs(g.Diff()-(w.P2-w.P1)) > 1e-15 {
					t.Errorf("row %d: diff %g, want %g", i, g.Diff(), w.P2-w.P1)
				}
			}
		})
	}
}

func TestAttentionDiff(t *testing.T) {
	a := [][]float32{{0.25, 0.75}, {1, 0}}
	b := [][]float32{{0.5, 0.5}, {0.125, 0.875}}
	d, ok := attentionDiff(a, b)
	want := [][]float64{{0.25, -0.25}, {-0.875, 0.875}}
	if !ok {
		t.Fatal("same shapes: want a difference")
	}
	for i := range want {
		for j := range want[i] {
			if d[i][j] != want[i][j] {
				t.Errorf("d[%d][%d] = %g, want %g", i, j, d[i][j], want[i][j])
			}
		}
	}
	for _, c := range [][][]float32{{{1}}, {{0.5, 0.5}, {1}}} {
		if _, ok := attentionDiff(a, c); ok {
			t.Errorf("shapes %d and %d: want no difference", len(a), len(c))
		}
	}
}

func TestCompareRoute(t *testing.T) {
	r := Route{View: ViewCompare, Text: "The cat sat.", Masks: []int{1}, Compare: "The [MASK] ran away.", Layer: 1, Head: 2}
	h := r.Hash()
	if want := "#compare?text=The%20cat%20sat.&masks=1&c=The%20%5BMASK%5D%20ran%20away.&layer=1&head=2"; h != want {
		t.Errorf("hash %s, want %s", h, want)
	}
	got, ok := ParseRoute(h)
	if !ok || got.View != ViewCompare || got.Compare != r.Compare || got.Layer != 1 || got.Head != 2 || got.Text != r.Text {
		t.Errorf("parsed %+v", got)
	}
	// Sentence 2 is the compare view's own: other views do not write it.
	r.View = ViewWhy
	if h := r.Hash(); h != "#why?text=The%20cat%20sat.&masks=1" {
		t.Errorf("why hash %s", h)
	}
	if got, _ := ParseRoute("#compare?text=x&c=%20%20a%20%20b%20"); got.Compare != "a b" {
		t.Errorf("sentence 2 %q, want blanks collapsed", got.Compare)
	}
}
