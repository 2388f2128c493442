package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/explain"
)

// ViewWhy is "Why?": #why?text=...&masks=3&target=paris&method=ig&igsteps=32&baseline=pad&off=0.1,1.3.
// For the first masked word's prediction (or IsNext for a pair without masks) it shows which
// tokens moved the answer (attributions), in which layer it appeared (the logit lens) and which
// heads it needs (head ablation and importance).
const ViewWhy = "why"

// WhyLab is the state of the "Why?" view and the engine's answers for it.
type WhyLab struct {
	// Target is the explained output: a word at the first [MASK], "isnext", or "" for the
	// model's own top prediction.
	Target   string
	Method   string // explain.MethodGXI ("" too) or explain.MethodIG
	Steps    int    // integrated gradients' steps; 0: explain.DefaultSteps
	Baseline string // "mask" ("" too) or "pad"
	// Off are the heads switched off, in the order they were clicked.
	Off []explain.Head

	Attr *explain.Report // the attribution of Target (its Target resolved)
	Lens *explain.Report // the logit lens at the masks, with the target word's probability
	Abl  *explain.Report // the mask predictions with the heads Off (nil without masks)
	Imp  *explain.Importance
	Word string // the target word the lens and importance use ("" for isnext)

	key    string // the input and settings asked for last
	shown  string // the input and settings Attr, Lens and Abl are for
	impKey string // the input and target Imp is for
	req    int
	gen    int // bumped with every new Lens: the chart redraws
	Err    string
	// AblErr says why heads cannot be switched off for this model (ALBERT's shared layers and
	// DeBERTa refuse a head mask); the attributions and the lens are shown all the same.
	AblErr string
}

// whySteps are the integration steps the view offers.
var whySteps = []int{8, 16, 32, 64, 128}

func (w *WhyLab) setRoute(r Route) {
	if r.View != ViewWhy {
		return
	}
	w.Target, w.Method, w.Steps, w.Baseline, w.Off = r.Target, r.Method, r.IGSteps, r.Baseline, slices.Clone(r.Off)
}

// route puts the view's state into r when the view is shown.
func (w *WhyLab) route(r *Route) {
	if r.View != ViewWhy {
		return
	}
	r.Target, r.Method, r.IGSteps, r.Baseline, r.Off = w.Target, w.Method, w.Steps, w.Baseline, w.Off
}

// request is the explanation request of the current input and settings.
func (a *App) whyRequest() explain.Request {
	w := &a.Why
	r := explain.Request{Text: a.MaskedText, Pair: a.MaskedB, Target: w.Target, Method: w.Method, Baseline: w.Baseline, Ablate: w.Off}
	if w.Method == explain.MethodIG {
		r.Steps = w.Steps
	} else {
		r.Baseline = ""
	}
	return r
}

// whyKey names the current input and settings of the view (and the model).
func (a *App) whyKey() string {
	r := a.whyRequest()
	return fmt.Sprintf("%p|%s|%s|%s|%d|%s|%s", a.Info, inputKey(r.Text, r.Pair), r.Target, r.Method, r.Steps, r.Baseline, heads(r.Ablate))
}

// fetchWhy asks the engine for the view's answers, unless they are shown. Called with the render
// lock held, after the text was tokenized (a.MaskedText is the input).
func (a *App) fetchWhy() {
	w := &a.Why
	if !a.Loaded || a.View != ViewWhy || a.Tok == nil {
		return
	}
	r := a.whyRequest()
	key := a.whyKey()
	if w.key == key {
		return
	}
	w.key, w.Err = key, ""
	w.req++
	req, masked := w.req, len(a.Order) > 0
	if !masked && r.Pair == "" {
		w.Attr, w.Lens, w.Abl, w.shown = nil, nil, nil, ""
		w.Err = "Mask a word (in “Mask a word”, or click one above) to ask why BERT predicts what it does there; or add sentence B to ask why it thinks B follows A."
		return
	}
	if !masked && w.Target == "" {
		r.Target = "isnext"
	}
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		fail := func(err error) {
			a.Do(func() {
				if req == w.req {
					w.Err = err.Error()
				}
			})
		}
		var lens, abl *explain.Report
		var err error
		ablErr := ""
		word := ""
		if masked && r.Target != "isnext" {
			// The lens names the model's own answer, the default target, at its last layer.
			lr := explain.Request{Text: r.Text, Pair: r.Pair, Target: r.Target}
			if lens, err = a.Eng.Lens(lr); err != nil {
				fail(err)
				return
			}
			word = r.Target
			if word == "" {
				ls := lens.Lens.Positions[0].Layers
				word = ls[len(ls)-1].Top[0].Token
				lr.Target = word
				if lens, err = a.Eng.Lens(lr); err != nil {
					fail(err)
					return
				}
			}
			r.Target = word
		}
		attr, err := a.Eng.Attributions(r)
		if err != nil {
			fail(err)
			return
		}
		if masked {
			if abl, err = a.Eng.Ablation(explain.Request{Text: r.Text, Pair: r.Pair, Ablate: r.Ablate}); err != nil {
				abl, ablErr = nil, err.Error()
			}
		}
		a.Do(func() {
			if req != w.req {
				return
			}
			w.Attr, w.Lens, w.Abl, w.Word, w.shown, w.AblErr = attr, lens, abl, word, key, ablErr
			if w.impKey != inputKey(r.Text, r.Pair)+"|"+word {
				w.Imp = nil
			}
			w.gen++
		})
	})
}

// WhyOfFirst opens "Why?" on the model's own guess for the first masked word (the mask view's
// first card).
func (a *App) WhyOfFirst() {
	a.Why.Target = ""
	a.SetView(ViewWhy)
}

// RankHeads asks for every head's importance for the target word at the first [MASK].
func (a *App) RankHeads() {
	w := &a.Why
	if w.Lens == nil {
		return
	}
	r := explain.Request{Text: a.MaskedText, Pair: a.MaskedB, Target: w.Word}
	key := inputKey(r.Text, r.Pair) + "|" + w.Word
	req := w.req
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		rep, err := a.Eng.Importance(r)
		a.Do(func() {
			if req != w.req {
				return
			}
			if err != nil {
				w.Err = err.Error()
				return
			}
			w.Imp, w.impKey = rep.Importance, key
		})
	})
}

// ToggleHead switches head (layer, head) off, or back on, and asks again.
func (a *App) ToggleHead(layer, head int) {
	w := &a.Why
	h := explain.Head{Layer: layer, Head: head}
	if i := slices.Index(w.Off, h); i >= 0 {
		w.Off = slices.Delete(slices.Clone(w.Off), i, i+1)
	} else {
		w.Off = append(slices.Clone(w.Off), h)
	}
	a.whyChanged()
}

// SetWhy changes the explained target and the attribution's settings.
func (a *App) SetWhy(target, method string, steps int, baseline string) {
	w := &a.Why
	w.Target, w.Method, w.Steps, w.Baseline = target, method, steps, baseline
	a.whyChanged()
}

// ClearHeads switches every head back on.
func (a *App) ClearHeads() {
	a.Why.Off = nil
	a.whyChanged()
}

func (a *App) whyChanged() {
	a.writeRoute()
	a.fetchWhy()
}

// heads writes heads as the URL does: "0.1,1.3".
func heads(hs []explain.Head) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.String()
	}
	return strings.Join(s, ",")
}

// parseHeads reads "0.1,1.3" leniently: what is not LAYER.HEAD (both >= 0) is skipped, and each
// head comes once.
func parseHeads(s string) []explain.Head {
	var out []explain.Head
	for _, f := range strings.Split(s, ",") {
		l, h, ok := strings.Cut(strings.TrimSpace(f), ".")
		li, err1 := strconv.Atoi(l)
		hi, err2 := strconv.Atoi(h)
		if ok && err1 == nil && err2 == nil && li >= 0 && hi >= 0 && !slices.Contains(out, explain.Head{Layer: li, Head: hi}) {
			out = append(out, explain.Head{Layer: li, Head: hi})
		}
	}
	return out
}
