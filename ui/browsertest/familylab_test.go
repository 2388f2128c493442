//go:build !js

package browsertest

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/lab"
)

// colourPixels counts the pixels of the chart in holder role that are close to the colour
// (r, g, b): a line of that colour is drawn.
func colourPixels(role string, r, g, b int) string {
	return `(() => {
  const c = document.querySelector('[data-role="` + role + `"] canvas');
  if (!c || !c.width) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i]-` + itoa(r) + `) < 40 && Math.abs(d[i+1]-` + itoa(g) + `) < 40 && Math.abs(d[i+2]-` + itoa(b) + `) < 40) n++;
  return n;
})()`
}

// TestFamilyLab races BERT and ALBERT side by side in the page's worker: both log steps while
// the other does (the race interleaves them), the figures beside each variant and the points
// of its curves are the engine's (the same race run natively gives the same parameters, plan
// and losses), each variant's line is drawn in its colour, and the recorded native run
// (assets/family/record.json) is drawn dashed with its settings named.
func TestFamilyLab(t *testing.T) {
	_, _, siteDir := tinySite(t, 1)
	rec, err := os.ReadFile(filepath.Join(root, "assets", "family", "record.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(siteDir, "family"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(siteDir, "family", "record.json"), rec, 0o644); err != nil {
		t.Fatal(err)
	}
	url, ctx := serve(t, siteDir), browser(t)
	do(t, ctx, 30*time.Second, "opening the family lab", chromedp.Navigate(url+"#family"))
	wait(t, ctx, 60*time.Second, "the lab and its record", `document.querySelector('.familylab') && document.querySelector('.familylab').dataset.record !== '' && !document.querySelector('[data-role="race-start"]').disabled`)
	if n := eval[string](t, ctx, `document.querySelector('.familylab').dataset.record`); n == "error" || n == "0" {
		t.Fatalf("the record: %q (%s)", n, eval[string](t, ctx, `document.querySelector('[data-role="record-settings"]').textContent`))
	}
	note := eval[string](t, ctx, `document.querySelector('[data-role="record-settings"]').textContent`)
	if !strings.Contains(note, "bertlab family") || !strings.Contains(note, "tiny size") {
		t.Errorf("the record's settings: %q", note)
	}
	if n := eval[int](t, ctx, `document.querySelector('[data-role="rec-loss"] canvas').bertlabRecorded`); n != eval[int](t, ctx, `+document.querySelector('.familylab').dataset.record`) {
		t.Errorf("%d recorded curves drawn", n)
	}
	// BERT and ALBERT: RoBERTa (picked by default) out, ALBERT in; half the default budget.
	do(t, ctx, 10*time.Second, "picking", chromedp.Click(chromedp.CSS(`[data-role="pick-roberta"]`)), chromedp.Click(chromedp.CSS(`[data-role="pick-albert"]`)),
		chromedp.SetValue(chromedp.CSS(`[data-role="race-scale"]`), "0.5"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-role="race-scale"]').dispatchEvent(new Event('change', {bubbles: true}))`))
	screenshot(t, ctx, "family-lab-form")
	do(t, ctx, 10*time.Second, "pressing Start", chromedp.Click(chromedp.CSS(`[data-role="race-start"]`)))
	// Both have logged steps: the race moves them together.
	wait(t, ctx, 180*time.Second, "steps of both variants", `(() => { const s = document.querySelector('.familylab').dataset.steps.split(',').map(Number); return s.length === 2 && s.every(n => n >= 3); })()`)
	screenshot(t, ctx, "family-lab-running")
	steps := eval[string](t, ctx, `document.querySelector('.familylab').dataset.steps`)
	t.Logf("steps logged while racing: %s", steps)

	wait(t, ctx, 300*time.Second, "the end of the race", `document.querySelector('.familylab').dataset.state === 'done'`)
	screenshot(t, ctx, "family-lab")

	// The same race natively.
	race, err := lab.NewFamilyRace(engine.FamilyRequest{Variants: []string{"bert", "albert"}, Budget: engine.BudgetTokens, Scale: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	losses := map[int][]float64{}
	for !race.Done() {
		evs, err := race.Advance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Kind == "step" {
				losses[ev.Variant] = append(losses[ev.Variant], ev.Loss)
			}
		}
	}
	type row struct {
		Family string `json:"family"`
		Params string `json:"params"`
		Steps  string `json:"steps"`
		Fwd    string `json:"fwd"`
	}
	rows := eval[[]row](t, ctx, `[...document.querySelectorAll('[data-role="race-row"]')].map(r => ({family: r.dataset.family, params: r.dataset.params, steps: r.dataset.steps, fwd: r.dataset.forwardMs}))`)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	series := eval[map[string][]float64](t, ctx, `document.querySelector('[data-role="race-loss"] canvas').bertlabSeries`)
	for i, v := range race.Info().Variants {
		r := rows[i]
		if r.Family != v.Family || r.Params != itoa(int(v.Params)) || r.Steps != itoa(v.Steps) || r.Fwd == "" || r.Fwd == "0" {
			t.Errorf("row %d: page %+v, native %s %d parameters, %d steps", i, r, v.Family, v.Params, v.Steps)
		}
		// The page draws each step's loss smoothed (EMA 0.8): the native losses, smoothed alike.
		got := series[v.Family]
		if len(got) != len(losses[i]) {
			t.Fatalf("%s: %d points drawn, %d native steps", v.Family, len(got), len(losses[i]))
		}
		ema := losses[i][0]
		for k, x := range losses[i] {
			ema = 0.8*ema + 0.2*x
			if math.Abs(got[k]-ema) > 1e-3 {
				t.Errorf("%s step %d: page %.5f, native %.5f", v.Family, k+1, got[k], ema)
				break
			}
		}
		t.Logf("%s: %s parameters, forward %s ms in the worker, smoothed loss %.3f -> %.3f", v.Family, r.Params, r.Fwd, got[0], got[len(got)-1])
	}
	for _, c := range []struct {
		name    string
		r, g, b int
	}{{"bert", 0x25, 0x63, 0xeb}, {"albert", 0x05, 0x96, 0x69}} {
		if n := eval[int](t, ctx, colourPixels("race-ppl", c.r, c.g, c.b)); n < 20 {
			t.Errorf("%s: %d pixels of its colour in the perplexity chart", c.name, n)
		}
	}
}
