package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Views of the page, as they appear in the URL fragment.
const (
	ViewMask      = "mask"
	ViewAttention = "attention"
	ViewSteps     = "steps"   // "Inside a layer"
	ViewMasking   = "masking" // "Masking lab"
	ViewTrain     = "train"   // "Training lab"
	ViewModels    = "models"  // "Models"
)

// Route is the page state that the URL fragment carries, so that a view can be shared:
// #mask?text=...&masks=2,5, #attention?text=...&masks=2&layer=1&head=0,
// #steps?text=...&layer=1&token=3&step=4 or #masking?text=...&seed=7&ww=1&sample=12.
type Route struct {
	View  string
	Text  string
	Masks []int // word ids, ascending
	Layer int   // attention and steps views
	Head  int
	// HideSpecial: the attention view hides [CLS] and [SEP] ("&special=0").
	HideSpecial bool
	Token       int // steps view: the token position ([CLS] is 0) and the step shown
	Step        int
	// Masking lab: the seed of the draws, whole-word masking, and the corpus sample shown
	// (1-based sentence number of tinydata web/pretrain.txt; 0 for the sentence box).
	Seed      int
	WholeWord bool
	Sample    int
	// Training lab: the task (pipeline.TaskSentiment or TaskPOS) and its settings; zero values
	// take the defaults (see TrainDefaults).
	Task   string
	Epochs int
	LR     float64
	Batch  int
}

// ParseRoute reads a location.hash ("#mask?text=..."); what it cannot read keeps its default.
func ParseRoute(hash string) (Route, bool) {
	hash = strings.TrimPrefix(hash, "#")
	if hash == "" {
		return Route{View: ViewMask}, false
	}
	view, query, _ := strings.Cut(hash, "?")
	r := Route{View: ViewMask}
	switch view {
	case ViewAttention, ViewSteps, ViewMasking, ViewTrain, ViewModels:
		r.View = view
	}
	q, _ := url.ParseQuery(query)
	r.Text = q.Get("text")
	for _, s := range strings.Split(q.Get("masks"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 0 && !slices.Contains(r.Masks, n) {
			r.Masks = append(r.Masks, n)
		}
	}
	slices.Sort(r.Masks)
	r.Layer, _ = strconv.Atoi(q.Get("layer"))
	r.Head, _ = strconv.Atoi(q.Get("head"))
	r.Token, _ = strconv.Atoi(q.Get("token"))
	r.Step, _ = strconv.Atoi(q.Get("step"))
	r.Seed, _ = strconv.Atoi(q.Get("seed"))
	r.Sample, _ = strconv.Atoi(q.Get("sample"))
	r.WholeWord = q.Get("ww") == "1"
	r.HideSpecial = q.Get("special") == "0"
	r.Task = q.Get("task")
	r.Epochs, _ = strconv.Atoi(q.Get("epochs"))
	r.LR, _ = strconv.ParseFloat(q.Get("lr"), 64)
	r.Batch, _ = strconv.Atoi(q.Get("bs"))
	r.Epochs, r.Batch = max(r.Epochs, 0), max(r.Batch, 0)
	if !(r.LR > 0 && r.LR < 1) {
		r.LR = 0
	}
	r.Layer, r.Head, r.Token, r.Step, r.Seed, r.Sample = max(r.Layer, 0), max(r.Head, 0), max(r.Token, 0), max(r.Step, 0), max(r.Seed, 0), max(r.Sample, 0)
	return r, q.Has("text")
}

// Hash writes the route as a URL fragment: the view, then text, masks and the view's own state.
func (r Route) Hash() string {
	// Spaces as %20 rather than "+" and commas left as they are: easier to read, copy and paste
	// in an address bar, and ParseRoute reads both spellings.
	esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	var b strings.Builder
	view := ViewMask
	switch r.View {
	case ViewAttention, ViewSteps, ViewMasking, ViewTrain, ViewModels:
		view = r.View
	}
	b.WriteString("#" + view + "?text=" + esc(r.Text))
	if len(r.Masks) > 0 {
		s := make([]string, len(r.Masks))
		for i, m := range r.Masks {
			s[i] = strconv.Itoa(m)
		}
		b.WriteString("&masks=" + strings.Join(s, ","))
	}
	switch view {
	case ViewAttention:
		fmt.Fprintf(&b, "&layer=%d&head=%d", r.Layer, r.Head)
		if r.HideSpecial {
			b.WriteString("&special=0")
		}
	case ViewSteps:
		fmt.Fprintf(&b, "&layer=%d&token=%d&step=%d", r.Layer, r.Token, r.Step)
	case ViewMasking:
		fmt.Fprintf(&b, "&seed=%d", r.Seed)
		if r.WholeWord {
			b.WriteString("&ww=1")
		}
		if r.Sample > 0 {
			fmt.Fprintf(&b, "&sample=%d", r.Sample)
		}
	case ViewTrain:
		if r.Task != "" {
			b.WriteString("&task=" + esc(r.Task))
		}
		if r.Epochs > 0 {
			fmt.Fprintf(&b, "&epochs=%d", r.Epochs)
		}
		if r.LR > 0 {
			b.WriteString("&lr=" + strconv.FormatFloat(r.LR, 'g', -1, 64))
		}
		if r.Batch > 0 {
			fmt.Fprintf(&b, "&bs=%d", r.Batch)
		}
	}
	return b.String()
}
