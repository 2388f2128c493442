//go:build !js

package browsertest

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
)

// defaultModel reads the built-in model's name from the Makefile (DEFAULT_MODEL := NAME), the
// folder under assets/models that `make run` serves and puts first in the page's index.
func defaultModel(t *testing.T) string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^DEFAULT_MODEL\s*:=\s*(\S+)\s*$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no line DEFAULT_MODEL := NAME")
	}
	return string(m[1])
}

// TestBuiltinModel opens the page as `make run` lays it out, with the pre-trained model committed
// under assets/models: the page must open on it, show the native model's predictions for a
// masked word, and show the previous-token head its model card names with the native attention.
func TestBuiltinModel(t *testing.T) {
	chrome(t)
	name := defaultModel(t)
	if name != "bertlab-mini" {
		t.Errorf("the Makefile's DEFAULT_MODEL is %q, want the pre-trained bertlab-mini", name)
	}
	src := filepath.Join(root, "assets", "models", name)
	native, err := hf.LoadFolder(src)
	if err != nil {
		t.Fatalf("the built-in model: %v", err)
	}
	card, err := os.ReadFile(filepath.Join(src, "README.md"))
	if err != nil {
		t.Fatalf("the built-in model has no model card: %v", err)
	}
	m := regexp.MustCompile(`previous-token head: layer (\d+), head (\d+)\*\* \(([0-9.]+) of its attention`).FindSubmatch(card)
	if m == nil {
		t.Fatal("the model card names no previous-token head")
	}
	layer, _ := strconv.Atoi(string(m[1]))
	head, _ := strconv.Atoi(string(m[2]))

	// The site: the page, and the committed model folder as it is (F16 weights), indexed as
	// `make run` indexes assets/models.
	dir := site(t, nil)
	dst := filepath.Join(dir, "models", name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A second folder that sorts before it, as a user's bert-base-uncased would: the page must
	// still open on the built-in model.
	other := randomModel(t, native.Model.Config, 5)
	if err := hf.SaveFolder(filepath.Join(dir, "models", "bert-a-random"), other.Model, other.Tok, hf.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/modelindex", "-default", name, filepath.Join(dir, "models"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("modelindex: %v\n%s", err, out)
	}
	base, ctx := serve(t, dir), browser(t)
	watchFirstPrediction(t, ctx)

	// Mask a word; sentence B as well, so the next-sentence head shows.
	text, pair := "She poured a glass of milk and drank it.", "Then she went to bed."
	route := "#mask?text=" + url.QueryEscape(text) + "&masks=5&b=" + url.QueryEscape(pair)
	do(t, ctx, 30*time.Second, "opening the page", chromedp.Navigate(base+route))
	wait(t, ctx, 90*time.Second, "the model and the predictions",
		`document.querySelector('.app[data-loaded]') && `+settled+` && document.querySelectorAll('.card[data-mask="5"] .pred').length === 5`)
	if line := eval[string](t, ctx, `document.querySelector('header .model').textContent`); !strings.HasPrefix(line, name+" ·") {
		t.Errorf("the page opened on %q, want the built-in %s", line, name)
	}
	// Reported, not bounded: it depends on the machine (and the 12 MB of weights).
	t.Logf("page load to the first prediction with %s: %.0f ms", name, eval[float64](t, ctx, `window.bertlabFirstPrediction || 0`))
	t.Logf("where it went: app.wasm fetched %s; engine worker requests (sent-answered, from navigation start): %s",
		eval[string](t, ctx, `(e => e ? Math.round(e.startTime) + '-' + Math.round(e.responseEnd) + ' ms' : '?')(performance.getEntriesByType('resource').find(e => e.name.endsWith('/app.wasm')))`),
		eval[string](t, ctx, `window.bertlabWorkerLog.join('; ')`))
	masked := "She poured a glass of [MASK] and drank it."
	want, err := pipeline.FillMask(native.Model, native.Tokenizer, masked, &pair, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkPreds(t, eval[[]pagePred](t, ctx, predsJS("5")), want.Masks[0], masked)
	var top []string
	for _, p := range want.Masks[0].Predictions {
		top = append(top, p.Token)
	}
	t.Logf("%s: %s", masked, strings.Join(top, ", "))
	screenshot(t, ctx, "builtin-mask")

	// The card's previous-token head in the attention view: the page's matrix equals the native
	// one, and most of each token's attention is on the token before it.
	sentence := "The children played in the garden until it was dark."
	do(t, ctx, 30*time.Second, "opening the attention view", chromedp.Navigate(base+"#attention?text="+url.QueryEscape(sentence)+
		"&layer="+strconv.Itoa(layer)+"&head="+strconv.Itoa(head)))
	wait(t, ctx, 60*time.Second, "the attention map", settled+` && document.querySelector('.heatmap canvas') && document.querySelector('.heatmap canvas').bertlabValues`)
	att, err := pipeline.Attention(native.Model, native.Tokenizer, sentence, nil, layer)
	if err != nil {
		t.Fatal(err)
	}
	w := att.Attentions[head]
	vals := strings.Split(eval[string](t, ctx, `document.querySelector('.heatmap canvas').bertlabValues`), ",")
	S := len(w)
	if len(vals) != S*S {
		t.Fatalf("the page's map has %d values, native %d×%d", len(vals), S, S)
	}
	prev := 0.0
	for i := range w {
		for j := range w[i] {
			g, _ := strconv.ParseFloat(vals[i*S+j], 64)
			if !probClose(g, float64(w[i][j]), 1) {
				t.Errorf("layer %d head %d [%d][%d]: page %g, native %g", layer, head, i, j, g, w[i][j])
			}
		}
		if i > 0 {
			prev += float64(w[i][i-1]) / float64(S-1)
		}
	}
	t.Logf("layer %d head %d: %.2f of the attention on the previous token in %q (the card: %s over held-out text)", layer, head, prev, sentence, m[3])
	if prev < 0.5 {
		t.Errorf("layer %d head %d, the card's previous-token head, puts %.2f of its attention on the previous token, want most", layer, head, prev)
	}
	click(t, ctx, `button[data-show="lines"]`)
	wait(t, ctx, 10*time.Second, "the head view", `document.querySelector('.headview canvas') && document.querySelector('.headview canvas').bertlabLines > 0`)
	screenshot(t, ctx, "builtin-headview")

	// The Training lab fine-tunes the built-in model: part of speech on the web sample, one
	// epoch at the default learning rate for a model of its width, first with the batches in
	// plain shuffled order ("&group=0", each padded to its longest sentence), then grouped by
	// length (the default). Reported, not bounded: the time of a step in the page's worker.
	type call struct {
		Fn                 string
		Sent, Answered, Ms float64
	}
	padding := map[string]float64{}
	for _, run := range []struct{ name, query string }{{"shuffled batches", "&group=0"}, {"grouped by length", ""}} {
		do(t, ctx, 30*time.Second, "opening the training lab", chromedp.Navigate(base+"#train?text=x&task=pos&epochs=1&bs=16"+run.query))
		do(t, ctx, 30*time.Second, "reloading the page", chromedp.Reload())
		wait(t, ctx, 60*time.Second, "the lab", `document.querySelector('[data-role="train"]') && !document.querySelector('[data-role="train"]').disabled`)
		if lr := eval[string](t, ctx, `document.querySelector('[data-role="lr"]').value`); lr != "0.001" {
			t.Errorf("the lab's learning rate for %s is %q, want the small models' default 0.001", name, lr)
		}
		if grouped := eval[bool](t, ctx, `document.querySelector('[data-role="group"]').checked`); grouped != (run.query == "") {
			t.Errorf("%s: the group-by-length box is %v", run.name, grouped)
		}
		start := time.Now()
		click(t, ctx, `[data-role="train"]`)
		wait(t, ctx, 300*time.Second, "the end of the run", `document.querySelector('.trainview').dataset.state === 'done' && +document.querySelector('.trainview').dataset.evals === 1`)
		elapsed := time.Since(start)
		steps := eval[int](t, ctx, `+document.querySelector('.trainview').dataset.steps`)
		losses := eval[[]float64](t, ctx, `[...document.querySelector('[data-role="loss-curve"] canvas').bertlabLosses]`)
		metrics := eval[[]float64](t, ctx, `[...(document.querySelector('[data-role="metric-curve"] canvas').bertlabMetrics || [])]`)
		if steps == 0 || len(losses) != steps || len(metrics) != 1 {
			t.Fatalf("%s: %d steps, %d losses, test accuracy %v", run.name, steps, len(losses), metrics)
		}
		screenshot(t, ctx, "builtin-train-"+strings.ReplaceAll(run.name, " ", "-"))
		progress := eval[string](t, ctx, `document.querySelector('[data-role="progress"]').textContent`)
		m := regexp.MustCompile(`padding (\d+)%`).FindStringSubmatch(progress)
		if m == nil {
			t.Fatalf("%s: the progress line %q names no padding share", run.name, progress)
		}
		padding[run.name], _ = strconv.ParseFloat(m[1], 64)
		// The run's worker calls: trainStart, a trainStep per step, and one more for the
		// evaluation after the epoch.
		calls := eval[[]call](t, ctx, `window.bertlabWorkerCalls.slice(window.bertlabWorkerCalls.map(c => c.fn).lastIndexOf('trainStart')).filter(c => c.fn === 'trainStart' || c.fn === 'trainStep')`)
		if len(calls) != steps+2 {
			t.Fatalf("%s: %d worker calls for %d steps, want trainStart, the steps and the evaluation", run.name, len(calls), steps)
		}
		var inWorker []float64
		sum := 0.0
		for _, c := range calls[1 : 1+steps] {
			inWorker, sum = append(inWorker, c.Ms), sum+c.Ms
		}
		t.Logf("Training lab, part of speech from %s, %s: %d steps in %v (%.0f ms a step over the whole run); in the worker a step took %.0f ms (median; mean %.0f), trainStart %.0f ms, the evaluation %.0f ms; padding %.0f%% of the positions; loss %.3f -> %.3f, test token accuracy %.1f%%",
			name, run.name, steps, elapsed.Round(time.Millisecond), float64(elapsed.Milliseconds())/float64(steps), median(inWorker), sum/float64(steps),
			calls[0].Ms, calls[len(calls)-1].Ms, padding[run.name], losses[0], losses[len(losses)-1], 100*metrics[0])
		// 44 tags: a model that learnt nothing tags every word with the commonest (about 15%).
		if metrics[0] < 0.4 {
			t.Errorf("%s: one epoch of part of speech from %s: test token accuracy %.1f%%, want the pre-trained model to learn (at least 40%%)", run.name, name, 100*metrics[0])
		}
	}
	// The box turns grouping off, and the address keeps it.
	click(t, ctx, `[data-role="group"]`)
	wait(t, ctx, 10*time.Second, "the address to say group=0", `location.hash.includes('group=0') && !document.querySelector('[data-role="group"]').checked`)
	if padding["grouped by length"] >= padding["shuffled batches"]/2 {
		t.Errorf("padding %.0f%% of the positions grouped by length against %.0f%% shuffled, want under half", padding["grouped by length"], padding["shuffled batches"])
	}
}

// median is the middle of xs (the mean of the two middle ones for an even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
