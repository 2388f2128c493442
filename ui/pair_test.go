package ui

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"
)

func TestPairWords(t *testing.T) {
	eng := newNativeEngine(t)
	type word struct {
		ID   int
		Seg  int
		Text string
	}
	B := PairWordBase
	for _, tc := range []struct {
		text, pair string
		want       []word
	}{
		{"The cat.", "", []word{{-1, 0, ""}, {0, 0, "The"}, {1, 0, "cat"}, {2, 0, "."}, {-1, 0, ""}}},
		{"The cat.", "It sléépt!", []word{{-1, 0, ""}, {0, 0, "The"}, {1, 0, "cat"}, {2, 0, "."}, {-1, 0, ""},
			{B, 1, "It"}, {B + 1, 1, "sléépt"}, {B + 2, 1, "!"}, {-1, 1, ""}}},
		{"a", "[MASK] b", []word{{-1, 0, ""}, {0, 0, "a"}, {-1, 0, ""}, {B, 1, "[MASK]"}, {B + 1, 1, "b"}, {-1, 1, ""}}},
	} {
		tok, err := eng.Tokenize(tc.text, tc.pair)
		if err != nil {
			t.Fatal(err)
		}
		var got []word
		for _, w := range PairWords(tok, tc.text, tc.pair) {
			got = append(got, word{w.ID, w.Seg, w.Text})
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q / %q: words %v, want %v", tc.text, tc.pair, got, tc.want)
		}
	}
}

func TestParsePairRoute(t *testing.T) {
	for _, tc := range []struct {
		hash      string
		pair      string
		pairMasks []int
		seg       string
		rehash    string
	}{
		{"#mask?text=a&b=c%20d&bmasks=1,x,0,1", "c d", []int{0, 1}, "", "#mask?text=a&b=c%20d&bmasks=0,1"},
		{"#mask?text=a&bmasks=1", "", nil, "", "#mask?text=a"},
		{"#attention?text=a&b=c&seg=ab&show=lines", "c", nil, SegAB, "#attention?text=a&b=c&layer=0&head=0&seg=ab&show=lines"},
		{"#attention?text=a&b=c&seg=xy", "c", nil, "", "#attention?text=a&b=c&layer=0&head=0"},
		{"#attention?text=a&seg=ba", "", nil, SegBA, "#attention?text=a&layer=0&head=0"}, // no pair: no filter to write
	} {
		r, ok := ParseRoute(tc.hash)
		if !ok || r.Pair != tc.pair || !slices.Equal(r.PairMasks, tc.pairMasks) || r.Seg != tc.seg || r.Hash() != tc.rehash {
			t.Errorf("%q -> %+v -> %q, want pair %q masks %v seg %q hash %q", tc.hash, r, r.Hash(), tc.pair, tc.pairMasks, tc.seg, tc.rehash)
		}
	}
}

func renderRoot(t *testing.T, a *App) string {
	t.Helper()
	var buf bytes.Buffer
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
		t.Fatalf("render %s: %v", a.View, err)
	}
	return buf.String()
}

// TestAppPair walks the mask and attention views through sentence B: its words masked by
// click, the predictions and the next-sentence prediction on the pair, filling a word of B, and
// the URL.
func TestAppPair(t *testing.T) {
	eng := newNativeEngine(t)
	var hash string
	a := &App{Eng: eng, OnRoute: func(h string) { hash = h }}
	a.Start(ParseRoute("#mask?text=The%20cat%20sat.&masks=1&b=It%20slept%20on%20the%20mat.&bmasks=1"))
	if a.Err != "" || !a.Loaded {
		t.Fatalf("start: loaded %v, err %q", a.Loaded, a.Err)
	}
	B := PairWordBase
	if a.MaskedText != "The [MASK] sat." || a.MaskedB != "It [MASK] on the mat." || !slices.Equal(a.Order, []int{1, B + 1}) {
		t.Fatalf("masked %q / %q, order %v", a.MaskedText, a.MaskedB, a.Order)
	}
	pair := a.MaskedB
	want, err := pipeline.FillMask(eng.m, eng.tok, a.MaskedText, &pair, DefaultTopK)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Masks) != 2 || a.Preds[1][0] != want.Masks[0].Predictions[0] || a.Preds[B+1][0] != want.Masks[1].Predictions[0] {
		t.Errorf("predictions %+v, want %+v", a.Preds, want.Masks)
	}
	if a.PairNSP == nil || want.NSP == nil || *a.PairNSP != *want.NSP || a.PairNSPKey != a.InputKey() {
		t.Fatalf("NSP %+v for %q, want %+v", a.PairNSP, a.PairNSPKey, want.NSP)
	}
	html := renderRoot(t, a)
	if !strings.Contains(html, `data-isnext="`+scoreAttr(want.NSP.IsNext)+`"`) || !strings.Contains(html, "seg-b") || !strings.Contains(html, `id="textb"`) {
		t.Errorf("the mask view should show the NSP probability and B's words:\n%s", html)
	}

	// Filling B's word keeps A's mask; the URL carries both sentences and both masks.
	a.Fill(B+1, "lay")
	if a.TextB != "It lay on the mat." || a.DraftB != a.TextB || !slices.Equal(a.Masks, []int{1}) || hash != "#mask?text=The%20cat%20sat.&masks=1&b=It%20lay%20on%20the%20mat." {
		t.Errorf("after filling B: %q, masks %v, hash %q", a.TextB, a.Masks, hash)
	}
	// A "##" piece into A shifts A's later masks only.
	a.ToggleMask(B + 3) // "the" in B
	a.ToggleMask(2)     // "sat"
	a.Fill(1, "##s")
	if a.Text != "Thes sat." || !slices.Equal(a.Masks, []int{1, B + 3}) || a.MaskedB != "It lay on [MASK] mat." {
		t.Errorf("after a ## fill in A: %q masks %v, B %q", a.Text, a.Masks, a.MaskedB)
	}

	// Without masks the NSP comes from NextSentence.
	a.ToggleMask(1)
	a.ToggleMask(B + 3)
	nsp, err := pipeline.NextSentence(eng.m, eng.tok, "Thes sat.", "It lay on the mat.")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Order) != 0 || a.PairNSP == nil || math.Abs(a.PairNSP.IsNext-nsp.IsNext) > 0 || a.PairNSPKey != a.InputKey() {
		t.Errorf("no masks: NSP %+v, want %+v", a.PairNSP, nsp)
	}

	// The attention view reads the pair and filters by segment.
	a.SetView(ViewAttention)
	if len(a.Att) == 0 || a.AttText != a.InputKey() || !slices.Contains(a.Att[0].TypeIDs, 1) {
		t.Fatalf("attention for %q: %d layers", a.AttText, len(a.Att))
	}
	a.SetSeg(SegAB)
	a.SetHeadView(true)
	v := &AttentionView{App: a}
	rows, cols := v.rows(0), v.cols(0)
	m := v.shownHead(0, 0)
	nA, nB := 0, 0
	for _, ty := range a.Att[0].TypeIDs {
		if ty == 0 {
			nA++
		} else {
			nB++
		}
	}
	if len(rows) != nA || len(cols) != nB || len(m) != nA || len(m[0]) != nB || m[1][2] != a.Att[0].Attentions[0][rows[1]][cols[2]] {
		t.Errorf("A->B: rows %v cols %v, %d x %d, want %d x %d", rows, cols, len(m), len(m[0]), nA, nB)
	}
	if !strings.HasSuffix(hash, "&seg=ab&show=lines") || !strings.Contains(renderRoot(t, a), `data-role="headview"`) {
		t.Errorf("head view: hash %q", hash)
	}

	// Emptying sentence B leaves one sentence: no pair, no NSP, no filter.
	a.SetView(ViewMask)
	a.TypedB("  \n")
	if a.Pair() != "" || a.MaskedB != "" || a.PairNSP != nil || strings.Contains(hash, "&b=") {
		t.Errorf("empty B: pair %q masked %q NSP %v hash %q", a.Pair(), a.MaskedB, a.PairNSP, hash)
	}

	// A model without the NSP head says so instead of a probability.
	a.Info.Heads = []string{"pooler", "mlm"}
	a.TypedB("It slept.")
	if a.PairNSP != nil {
		t.Errorf("NSP %+v from a model without the head", a.PairNSP)
	}
	if html := renderRoot(t, a); !strings.Contains(html, `data-role="no-nsp"`) {
		t.Errorf("no note about the missing NSP head:\n%s", html)
	}
}

func TestUseExamplePairs(t *testing.T) {
	eng := newNativeEngine(t)
	a := &App{Eng: eng}
	a.Start(ParseRoute("#mask?text=The%20cat%20sat.&b=It%20slept."))
	if a.Err != "" || !a.Loaded {
		t.Fatalf("start: loaded %v, err %q", a.Loaded, a.Err)
	}
	for i, ex := range Examples {
		a.UseExample(i)
		if a.Text != ex.Text || a.TextB != ex.B || a.DraftB != ex.B {
			t.Errorf("example %d: text %q, B %q (box %q); want %q, %q", i, a.Text, a.TextB, a.DraftB, ex.Text, ex.B)
		}
		if a.Err != "" {
			t.Errorf("example %d: %s", i, a.Err)
		}
		// Every mask of the example is a word, and each became [MASK] in its own sentence.
		if n := strings.Count(a.MaskedText, "[MASK]") + strings.Count(a.MaskedB, "[MASK]"); n != len(ex.Masks)+len(ex.MasksB) || n != len(a.Order) {
			t.Errorf("example %d: %q / %q has %d masks, order %v; want %d", i, a.MaskedText, a.MaskedB, n, a.Order, len(ex.Masks)+len(ex.MasksB))
		}
		if ex.B == "" && (a.MaskedB != "" || a.PairNSP != nil) {
			t.Errorf("example %d is one sentence, but B %q and NSP %+v remain", i, a.MaskedB, a.PairNSP)
		}
		if ex.B != "" && (a.PairNSP == nil || a.PairNSPKey != a.InputKey()) {
			t.Errorf("example %d (%s) has no NSP probability", i, ex.Label())
		}
	}
	// The paper's two pairs: "the man went to [MASK] store / he bought a gallon [MASK] milk".
	a.UseExample(5)
	if a.MaskedText != "The man went to [MASK] store." || a.MaskedB != "He bought a gallon [MASK] milk." {
		t.Errorf("the IsNext pair reads %q / %q", a.MaskedText, a.MaskedB)
	}
}
