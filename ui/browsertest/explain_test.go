//go:build !js

package browsertest

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
)

// closeTo compares a number the page computed (pure-Go kernels in the browser) with the native
// one (assembly kernels): float32 rounding differs.
func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 1e-4+1e-3*math.Abs(want)
}

// pageShift is an ablation row of the page.
type pageShift struct {
	Token  string  `json:"token"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

const (
	attrScoresJS = `[...document.querySelectorAll('.attr')].map(e => parseFloat(e.dataset.score))`
	lensJS       = `[...document.querySelectorAll('.lens tr')].map(r => [...r.querySelectorAll('td')].map(d => d.dataset.token + '=' + d.dataset.prob))`
)

func ablJS(role string) string {
	return `[...document.querySelectorAll('[data-role="` + role + `"] .pred')].map(e => ({token: e.dataset.token, before: parseFloat(e.dataset.before), after: parseFloat(e.dataset.after)}))`
}

// TestExplainView opens "Why?" on a masked word and checks each of its parts against the native
// engine's answers: the attributions (gradient x input, then integrated gradients with other
// steps and baseline), the logit lens's table and chart, the predictions with heads switched
// off, and the heads' importance; then exports the chart.
func TestExplainView(t *testing.T) {
	_, model, url, ctx := tinyPage(t)
	eng, err := engine.New("tiny-random", model.Model, model.Tok)
	if err != nil {
		t.Fatal(err)
	}
	const masked = "The [MASK] sat on the mat."
	native := func(what string, f func(explain.Request) (*explain.Report, error), r explain.Request) *explain.Report {
		t.Helper()
		r.Text = masked
		rep, err := f(r)
		if err != nil {
			t.Fatalf("native %s: %v", what, err)
		}
		return rep
	}
	checkScores := func(what string, want *explain.Report) {
		t.Helper()
		got := eval[[]float64](t, ctx, attrScoresJS)
		ws := want.Attribution.Scores
		if len(got) != len(ws) {
			t.Fatalf("%s: the page coloured %d tokens, the native report has %d", what, len(got), len(ws))
		}
		for i := range ws {
			if !closeTo(got[i], ws[i]) {
				t.Errorf("%s: token %d (%s): page %g, native %g", what, i, want.Tokens[i], got[i], ws[i])
			}
		}
	}

	// From the mask view's first card to "Why?".
	do(t, ctx, 30*time.Second, "opening the mask view", chromedp.Navigate(url+"#mask?text=The%20cat%20sat%20on%20the%20mat.&masks=1"))
	wait(t, ctx, 60*time.Second, "the predictions", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('[data-role="why-link"]')`)
	click(t, ctx, `[data-role="why-link"]`)
	wait(t, ctx, 90*time.Second, "the explanation", `location.hash.startsWith('#why?text=The%20cat%20sat%20on%20the%20mat.&masks=1') && `+settled+` && document.querySelectorAll('.attr').length > 0 && document.querySelector('.lenschart canvas') && document.querySelectorAll('[data-role="abl-after"] .pred').length > 0`)

	// The model's own answer is explained: the native default target.
	gxi := native("gradient x input", eng.Attributions, explain.Request{})
	if label := eval[string](t, ctx, `document.querySelector('[data-role="why-label"]').textContent`); label != gxi.Target.Label {
		t.Errorf("the page explains %s, the native default target is %s", label, gxi.Target.Label)
	}
	checkScores("gradient x input", gxi)
	word := model.Tok.Vocab().Token(gxi.Target.Index)

	// The lens: the table's top 5 per layer and the chart's probability of the answer.
	lens := native("lens", eng.Lens, explain.Request{Target: word})
	gotLens := eval[[][]string](t, ctx, lensJS)
	layers := lens.Lens.Positions[0].Layers
	if len(gotLens) != len(layers) {
		t.Fatalf("lens: the page has %d rows, native %d layers", len(gotLens), len(layers))
	}
	var probs []string
	for l, ly := range layers {
		for i, p := range ly.Top {
			tok, prob, _ := strings.Cut(gotLens[l][i], "=")
			pv, _ := strconv.ParseFloat(prob, 64)
			if tok != p.Token || !closeTo(pv, p.Prob) {
				t.Errorf("lens layer %d rank %d: page %s, native %s=%g", ly.Layer, i, gotLens[l][i], p.Token, p.Prob)
			}
		}
		probs = append(probs, strconv.FormatFloat(ly.Candidates[0], 'g', -1, 64))
	}
	chart := strings.Split(eval[string](t, ctx, `document.querySelector('.lenschart canvas').bertlabProbs`), ",")
	for i := range probs {
		g, _ := strconv.ParseFloat(chart[i], 64)
		w, _ := strconv.ParseFloat(probs[i], 64)
		if !closeTo(g, w) {
			t.Errorf("lens chart layer %d: page %s, native %s", i, chart[i], probs[i])
		}
	}

	// Integrated gradients with 16 steps from the [PAD] baseline; the settings go into the URL.
	click(t, ctx, `button[data-method="ig"]`)
	wait(t, ctx, 60*time.Second, "integrated gradients", settled+` && location.hash.includes('method=ig')`)
	click(t, ctx, `button[data-steps="16"]`)
	wait(t, ctx, 60*time.Second, "16 steps", settled+` && location.hash.includes('igsteps=16')`)
	click(t, ctx, `button[data-baseline="pad"]`)
	wait(t, ctx, 60*time.Second, "the [PAD] baseline", settled+` && location.hash.includes('baseline=pad') && document.querySelector('[data-role="attr-sum"]').textContent.includes('[PAD]')`)
	ig := native("integrated gradients", eng.Attributions, explain.Request{Target: word, Method: explain.MethodIG, Steps: 16, Baseline: "pad"})
	checkScores("integrated gradients", ig)
	if sum := eval[string](t, ctx, `document.querySelector('[data-role="attr-sum"]').textContent`); !strings.Contains(sum, "16 steps") || !strings.Contains(sum, "Completeness gap") {
		t.Errorf("the IG summary says %q", sum)
	}
	screenshot(t, ctx, "why-attributions")

	// Two heads off: the predictions after equal the native ablation.
	click(t, ctx, `button.hcell[data-layer="0"][data-head="1"]`)
	wait(t, ctx, 60*time.Second, "head 0.1 off", settled+` && location.hash.includes('off=0.1')`)
	click(t, ctx, `button.hcell[data-layer="1"][data-head="1"]`)
	wait(t, ctx, 60*time.Second, "heads 0.1 and 1.1 off", settled+` && location.hash.includes('off=0.1,1.1') && document.querySelectorAll('button.hcell.off').length === 2`)
	off := []explain.Head{{Layer: 0, Head: 1}, {Layer: 1, Head: 1}}
	abl := native("ablation", eng.Ablation, explain.Request{Ablate: off}).Ablation.Positions[0]
	for role, want := range map[string][]explain.Shift{"abl-before": abl.Before, "abl-after": abl.After} {
		got := eval[[]pageShift](t, ctx, ablJS(role))
		if len(got) != len(want) {
			t.Fatalf("%s: page %d rows, native %d", role, len(got), len(want))
		}
		for i, w := range want {
			if got[i].Token != w.Token || !closeTo(got[i].Before, w.Before) || !closeTo(got[i].After, w.After) {
				t.Errorf("%s row %d: page %+v, native %+v", role, i, got[i], w)
			}
		}
	}
	// The heads matter to this input, or the comparison could not tell ablation from nothing.
	changed := false
	for _, sh := range abl.Before {
		changed = changed || math.Abs(sh.After-sh.Before) > 1e-3*sh.Before
	}
	if !changed {
		t.Fatalf("switching heads %v off moved no top prediction by 0.1%%: pick other heads", off)
	}

	// Rank heads: the grid's importance is the native one.
	click(t, ctx, `button[data-role="rank-heads"]`)
	wait(t, ctx, 60*time.Second, "the heads' importance", settled+` && document.querySelector('button.hcell').dataset.importance`)
	imp := native("importance", eng.Importance, explain.Request{Target: word}).Importance
	got := eval[[]float64](t, ctx, `[...document.querySelectorAll('button.hcell')].map(b => parseFloat(b.dataset.importance))`)
	A := model.Model.Config.NumAttentionHeads
	for l, row := range imp.Raw {
		for h, v := range row {
			if !closeTo(got[l*A+h], v) {
				t.Errorf("importance of head %d.%d: page %g, native %g", l, h, got[l*A+h], v)
			}
		}
	}
	screenshot(t, ctx, "why-heads")

	// The state is in the URL: a reload shows the same.
	hash := eval[string](t, ctx, `location.hash`)
	do(t, ctx, 30*time.Second, "reloading", chromedp.Reload())
	wait(t, ctx, 90*time.Second, "the explanation after a reload", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.attr').length > 0 && document.querySelectorAll('button.hcell.off').length === 2`)
	if h := eval[string](t, ctx, `location.hash`); h != hash {
		t.Errorf("after a reload the URL is %s, was %s", h, hash)
	}
	checkScores("integrated gradients after a reload", ig)

	// Another candidate: its attribution.
	second := lens.Lens.Positions[0].Layers[len(layers)-1].Top[1].Token
	click(t, ctx, `button[data-target="`+second+`"]`)
	wait(t, ctx, 60*time.Second, "the second candidate", settled+` && location.hash.includes('target=')`)
	checkScores("the second candidate", native("second candidate", eng.Attributions, explain.Request{Target: second, Method: explain.MethodIG, Steps: 16, Baseline: "pad"}))

	do(t, ctx, 10*time.Second, "exporting the chart", chromedp.Click(chromedp.CSS(`button[data-role="why-export"]`)))
	wait(t, ctx, 10*time.Second, "the export link", `document.querySelector('a[data-role="export-link"]') && document.querySelector('a[data-role="export-link"]').href.startsWith('blob:')`)
	sig := eval[[]int](t, ctx, `fetch(document.querySelector('a[data-role="export-link"]').href).then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b.slice(0, 8))))`)
	if len(sig) != 8 || sig[0] != 137 || sig[1] != 80 || sig[2] != 78 || sig[3] != 71 {
		t.Errorf("the export starts with %v, not the PNG signature", sig)
	}
}

// TestExplainNeuron opens the neuron view from the attention view's head view by clicking a
// query token, and checks its scores and softmax row against the native engine (and the row
// against the attention the page drew); the URL keeps it across a reload.
func TestExplainNeuron(t *testing.T) {
	_, model, url, ctx := tinyPage(t)
	eng, err := engine.New("tiny-random", model.Model, model.Tok)
	if err != nil {
		t.Fatal(err)
	}
	const text = "The cat sat on the mat."
	do(t, ctx, 30*time.Second, "opening the head view", chromedp.Navigate(url+"#attention?text=The%20cat%20sat%20on%20the%20mat.&layer=1&head=1&show=lines"))
	wait(t, ctx, 60*time.Second, "the head view", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('.headview canvas') && document.querySelector('.headview canvas').bertlabLines > 0`)
	if eval[bool](t, ctx, `!!document.querySelector('[data-role="neuron"]')`) {
		t.Fatal("the neuron view is open before a click")
	}
	const query = 2 // "cat"
	hv := eval[[]float64](t, ctx, `(() => { const c = document.querySelector('.headview canvas'), r = c.getBoundingClientRect(); return [r.left, r.top, c.bertlabTop, c.bertlabRowH]; })()`)
	do(t, ctx, 10*time.Second, "clicking a query token", chromedp.MouseClickXY(hv[0]+12, hv[1]+hv[2]+hv[3]*(query+0.5)))
	wait(t, ctx, 30*time.Second, "the neuron view", settled+` && location.hash.includes('query=2') && document.querySelector('.neuronview canvas') && document.querySelector('.neuronview canvas').bertlabProbs`)

	want, err := eng.Neuron(engine.NeuronRequest{Text: text, Layer: 1, Head: 1, Query: query})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		for name, w := range map[string][]float64{"bertlabScores": want.Scores, "bertlabProbs": want.Probs} {
			got := strings.Split(eval[string](t, ctx, `document.querySelector('.neuronview canvas').`+name), ",")
			if len(got) != len(w) {
				t.Fatalf("%s %s: page %d values, native %d", what, name, len(got), len(w))
			}
			for j := range w {
				g, _ := strconv.ParseFloat(got[j], 64)
				if !closeTo(g, w[j]) {
					t.Errorf("%s %s[%d]: page %g, native %g", what, name, j, g, w[j])
				}
			}
		}
	}
	check("after the click")
	// The softmax row is the attention row the head view draws (native attention: another path).
	att, err := eng.Attention(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j, p := range att[1].Attentions[1][query] {
		if math.Abs(want.Probs[j]-float64(p)) > 1e-5 {
			t.Errorf("neuron row [%d] %g, attention %g", j, want.Probs[j], p)
		}
	}
	if title := eval[string](t, ctx, `document.querySelector('[data-role="neuron"] h3').textContent`); !strings.Contains(title, "“cat” (row 2)") || !strings.Contains(title, "head 1.1") {
		t.Errorf("neuron view title %q", title)
	}
	screenshot(t, ctx, "neuron-view")

	do(t, ctx, 10*time.Second, "exporting the neuron view", chromedp.Click(chromedp.CSS(`button[data-role="neuron-export"]`)))
	wait(t, ctx, 10*time.Second, "the export link", `document.querySelector('a[data-role="export-link"]') && document.querySelector('a[data-role="export-link"]').download === 'bertlab-neuron-layer1-head1-query2.png'`)

	do(t, ctx, 30*time.Second, "reloading", chromedp.Reload())
	wait(t, ctx, 60*time.Second, "the neuron view after a reload", `document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelector('.neuronview canvas') && document.querySelector('.neuronview canvas').bertlabProbs`)
	check("after a reload")

	// A click between the two columns closes it.
	rl := eval[float64](t, ctx, `document.querySelector('.headview canvas').bertlabRightLeft`)
	do(t, ctx, 10*time.Second, "clicking between the columns", chromedp.MouseClickXY(hv[0]+rl/2+40, hv[1]+hv[2]+hv[3]*(query+0.5)))
	wait(t, ctx, 10*time.Second, "the neuron view closed", `!document.querySelector('[data-role="neuron"]') && !location.hash.includes('query=')`)
}
