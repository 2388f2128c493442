package ui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/pipeline"
)

// ViewCompare is "Compare": #compare?text=...&masks=3&c=...&layer=1&head=0. Sentence 1 is the
// page's sentence (its masked words as [MASK]), sentence 2 the view's own box (with [MASK]
// typed); it shows the same masks' predictions side by side with their probability
// differences, and the attention difference of one head.
const ViewCompare = "compare"

// compareTopK is how many predictions per mask each sentence contributes to the comparison.
const compareTopK = 5

// CompareLab is the state of the "Compare" view and the engine's answers for it.
type CompareLab struct {
	Text  string // sentence 2, as committed
	Draft string // sentence 2's box as typed

	Fill1, Fill2 *pipeline.FillMaskResult // pipeline.MaxTopK predictions per mask
	Att1, Att2   []pipeline.AttentionResult

	key string // the inputs asked for last
	req int
	gen int // bumped with every new answer: the canvases redraw
	Err string
}

// CompareRow is one candidate of a mask in the comparison: its probability in sentence 1 and 2.
// A candidate beyond a sentence's pipeline.MaxTopK predictions has only an upper bound there (the
// last listed probability): Below1 or Below2 says so, and P1 or P2 is that bound.
type CompareRow struct {
	Token          string
	P1, P2         float64
	Below1, Below2 bool
}

// Diff is p2 − p1.
func (r CompareRow) Diff() float64 { return r.P2 - r.P1 }

// compareRows joins the top k predictions of one mask in each sentence: every candidate in
// either top k, with its probability in both (looked up in the longer lists m1, m2, sorted by
// score as FillMask returns them), sorted by |p2 − p1|, largest first (ties by token).
func compareRows(m1, m2 pipeline.MaskResult, k int) []CompareRow {
	lookup := func(m pipeline.MaskResult, tok string) (float64, bool) {
		for _, p := range m.Predictions {
			if p.Token == tok {
				return p.Score, false
			}
		}
		if n := len(m.Predictions); n > 0 {
			return m.Predictions[n-1].Score, true
		}
		return 0, true
	}
	var rows []CompareRow
	seen := map[string]bool{}
	for _, m := range []pipeline.MaskResult{m1, m2} {
		for i, p := range m.Predictions {
			if i >= k || seen[p.Token] {
				continue
			}
			seen[p.Token] = true
			r := CompareRow{Token: p.Token}
			r.P1, r.Below1 = lookup(m1, p.Token)
			r.P2, r.Below2 = lookup(m2, p.Token)
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(a, b CompareRow) int {
		if c := cmp.Compare(math.Abs(b.Diff()), math.Abs(a.Diff())); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
	return rows
}

// attentionDiff is b − a elementwise for two heads' attention of the same shape ([S, S]); ok is
// false when the shapes differ (the sentences have different numbers of tokens).
func attentionDiff(a, b [][]float32) (d [][]float64, ok bool) {
	if len(a) != len(b) {
		return nil, false
	}
	d = make([][]float64, len(a))
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return nil, false
		}
		d[i] = make([]float64, len(a[i]))
		for j := range a[i] {
			d[i][j] = float64(b[i][j]) - float64(a[i][j])
		}
	}
	return d, true
}

func (c *CompareLab) setRoute(r Route) {
	if r.View != ViewCompare {
		return
	}
	c.Text, c.Draft = r.Compare, r.Compare
}

// route puts the view's state into r when the view is shown.
func (c *CompareLab) route(r *Route) {
	if r.View != ViewCompare {
		return
	}
	r.Compare = c.Text
}

// compareKey names the inputs of the view (and the model).
func (a *App) compareKey() string {
	return fmt.Sprintf("%p|%q|%q", a.Info, a.MaskedText, a.Compare.Text)
}

// fetchCompare asks the engine for both sentences' predictions and attention, unless they are
// shown. Called with the render lock held, after the text was tokenized.
func (a *App) fetchCompare() {
	c := &a.Compare
	if !a.Loaded || a.View != ViewCompare || a.Tok == nil {
		return
	}
	key := a.compareKey()
	if c.key == key {
		return
	}
	c.key, c.Err = key, ""
	c.req++
	req := c.req
	s1, s2 := a.MaskedText, c.Text
	if strings.TrimSpace(s1) == "" || strings.TrimSpace(s2) == "" {
		c.Fill1, c.Fill2, c.Att1, c.Att2 = nil, nil, nil, nil
		c.Err = "Type sentence 2 below (write [MASK] where BERT should guess a word) to compare it with the sentence above."
		return
	}
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		var f1, f2 *pipeline.FillMaskResult
		var at1, at2 []pipeline.AttentionResult
		err := func() error {
			var err error
			if at1, err = a.Eng.Attention(s1, ""); err != nil {
				return fmt.Errorf("sentence 1: %w", err)
			}
			if at2, err = a.Eng.Attention(s2, ""); err != nil {
				return fmt.Errorf("sentence 2: %w", err)
			}
			if strings.Contains(s1, "[MASK]") {
				if f1, err = a.Eng.FillMask(s1, "", pipeline.MaxTopK); err != nil {
					return fmt.Errorf("sentence 1: %w", err)
				}
			}
			if strings.Contains(s2, "[MASK]") {
				if f2, err = a.Eng.FillMask(s2, "", pipeline.MaxTopK); err != nil {
					return fmt.Errorf("sentence 2: %w", err)
				}
			}
			return nil
		}()
		a.Do(func() {
			if req != c.req {
				return
			}
			if err != nil {
				c.Err = err.Error()
				return
			}
			c.Fill1, c.Fill2, c.Att1, c.Att2 = f1, f2, at1, at2
			c.gen++
		})
	})
}

// TypedCompare takes sentence 2's box as the user types.
func (a *App) TypedCompare(text string) { a.Compare.Draft = text }

// CommitCompare makes sentence 2's box the compared sentence (Enter, a change, or the button).
func (a *App) CommitCompare() {
	c := &a.Compare
	c.Draft = cleanSentence(c.Draft)
	if c.Draft == c.Text {
		return
	}
	c.Text = c.Draft
	a.writeRoute()
	a.fetchCompare()
}

// SetCompareHead picks the layer and head whose attention difference is drawn.
func (a *App) SetCompareHead(layer, head int) {
	a.Layer, a.Head = layer, head
	a.Compare.gen++
	a.writeRoute()
}
