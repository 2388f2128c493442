package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/pipeline"
)

// Views of the page, as they appear in the URL fragment.
const (
	ViewMask      = "mask"
	ViewAttention = "attention"
	ViewSteps     = "steps"   // "Inside a layer"
	ViewMasking   = "masking" // "Masking lab"
	ViewTrain     = "train"   // "Training lab"
	ViewModels    = "models"  // "Models"
	// ViewEmbeddings is "Embeddings": #embeddings?s=...&s=...&layer=1&word=bank.
	ViewEmbeddings = "embeddings"
)

// Route is the page state that the URL fragment carries, so that a view can be shared:
// #mask?text=...&masks=2,5&b=...&bmasks=1, #attention?text=...&masks=2&layer=1&head=0,
// #steps?text=...&layer=1&token=3&step=4 or #masking?text=...&seed=7&ww=1&sample=12.
type Route struct {
	View  string
	Text  string
	Masks []int // word ids, ascending
	// Pair is sentence B, BERT's second segment, read by the mask and attention views
	// ("&b=..."); PairMasks are its masked word ids, counted within sentence B ("&bmasks=").
	Pair      string
	PairMasks []int
	Layer     int // attention and steps views
	Head      int
	// HideSpecial: the attention view hides [CLS] and [SEP] ("&special=0").
	HideSpecial bool
	// Attention view with a pair: the segment filter (SegAB etc., "&seg=ab"; SegAll shows
	// everything); the head view in place of the heatmap ("&show=lines"), with every head of
	// the layer rather than the selected one ("&heads=all").
	Seg      string
	HeadView bool
	AllHeads bool
	// NeuronQuery is the query token plus one of the neuron view under the head view of one
	// head ("&query=3" is token 3; 0: none).
	NeuronQuery int
	Token       int // steps view: the token position ([CLS] is 0) and the step shown
	Step        int
	// Masking lab: the seed of the draws, whole-word masking, and the corpus sample shown
	// (1-based sentence number of tinydata web/pretrain.txt; 0 for the sentence box).
	Seed      int
	WholeWord bool
	Sample    int
	// Training lab: the task (engine.TaskSentiment or TaskPOS) and its settings; zero values
	// take the defaults (see TrainDefaults).
	Task   string
	Epochs int
	LR     float64
	Batch  int
	// Ungrouped ("&group=0") batches the fine-tuning examples in plain shuffled order, each
	// batch padded to its longest, rather than grouped by length.
	Ungrouped bool
	// Pre-training (Task "mlm"): optimizer steps ("&steps="), the new model's hidden size
	// ("&hidden=") and its vocabulary ("&vocab=model" for the loaded model's; else one trained
	// on the corpus).
	Steps    int
	Hidden   int
	MLMVocab string
	// Embeddings view: its sentences ("&s=", once each) and the word joined across them
	// ("&word="); Layer and HideSpecial are shared with the attention view.
	Sentences []string
	Word      string
	// Lessons (lessons.go): the lesson shown, 1-based ("#lessons/3?..."; 0 for none), whose
	// view is View, and its task's goal when it is not the lesson's default ("&goal=").
	Lesson int
	Goal   string
	// "Why?" view (why.go): the explained target ("&target="), the attribution method
	// ("&method=ig"), its steps ("&igsteps=") and baseline ("&baseline=pad"), and the heads
	// switched off ("&off=0.1,1.3").
	Target   string
	Method   string
	IGSteps  int
	Baseline string
	Off      []explain.Head
	// "Compare" view (compare.go): sentence 2 ("&c="); Layer and Head pick the head whose
	// attention difference is drawn.
	Compare string
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
	case ViewAttention, ViewSteps, ViewMasking, ViewTrain, ViewModels, ViewEmbeddings, ViewWhy, ViewCompare, ViewReplaced, ViewFamily:
		r.View = view
	}
	q, _ := url.ParseQuery(query)
	if n, ok := parseLesson(view); ok {
		r.Lesson, r.View, r.Goal = n, Lessons[n-1].Start.View, q.Get("goal")
	}
	r.Text = q.Get("text")
	r.Masks = parseIDs(q.Get("masks"))
	r.Pair = q.Get("b")
	if r.Pair != "" {
		r.PairMasks = parseIDs(q.Get("bmasks"))
	}
	if s := q.Get("seg"); slices.Contains(Segs[1:], s) {
		r.Seg = s
	}
	r.HeadView = q.Get("show") == "lines"
	r.AllHeads = q.Get("heads") == "all"
	if n, err := strconv.Atoi(q.Get("query")); err == nil && n >= 0 && r.HeadView && !r.AllHeads {
		r.NeuronQuery = n + 1
	}
	r.Layer, _ = strconv.Atoi(q.Get("layer"))
	r.Head, _ = strconv.Atoi(q.Get("head"))
	r.Token, _ = strconv.Atoi(q.Get("token"))
	r.Step, _ = strconv.Atoi(q.Get("step"))
	r.Seed, _ = strconv.Atoi(q.Get("seed"))
	r.Sample, _ = strconv.Atoi(q.Get("sample"))
	r.WholeWord = q.Get("ww") == "1"
	r.HideSpecial = q.Get("special") == "0"
	r.Sentences, r.Word = parseSentences(q["s"]), q.Get("word")
	r.Task = q.Get("task")
	r.Epochs, _ = strconv.Atoi(q.Get("epochs"))
	r.LR, _ = strconv.ParseFloat(q.Get("lr"), 64)
	r.Batch, _ = strconv.Atoi(q.Get("bs"))
	r.Epochs, r.Batch = max(r.Epochs, 0), max(r.Batch, 0)
	r.Ungrouped = q.Get("group") == "0"
	r.Steps, _ = strconv.Atoi(q.Get("steps"))
	r.Hidden, _ = strconv.Atoi(q.Get("hidden"))
	r.Steps, r.Hidden, r.MLMVocab = max(r.Steps, 0), max(r.Hidden, 0), q.Get("vocab")
	if !(r.LR > 0 && r.LR < 1) {
		r.LR = 0
	}
	r.Target = q.Get("target")
	if m := q.Get("method"); m == explain.MethodIG {
		r.Method = m
	}
	r.IGSteps, _ = strconv.Atoi(q.Get("igsteps"))
	r.IGSteps = min(max(r.IGSteps, 0), explain.MaxSteps)
	if q.Get("baseline") == "pad" {
		r.Baseline = "pad"
	}
	r.Off = parseHeads(q.Get("off"))
	r.Compare = cleanSentence(q.Get("c"))
	r.Layer, r.Head, r.Token, r.Step, r.Seed, r.Sample = max(r.Layer, 0), max(r.Head, 0), max(r.Token, 0), max(r.Step, 0), max(r.Seed, 0), max(r.Sample, 0)
	return r, q.Has("text")
}

// parseSentences keeps the embeddings view's sentences that are not blank, at most
// pipeline.MaxEmbeddingSentences of them.
func parseSentences(list []string) []string {
	var out []string
	for _, s := range list {
		if s = cleanSentence(s); s != "" && len(out) < pipeline.MaxEmbeddingSentences {
			out = append(out, s)
		}
	}
	return out
}

// parseIDs reads a comma-separated list of word ids, leniently: what is not a number >= 0 is
// skipped, and the ids come back ascending, each once.
func parseIDs(list string) []int {
	var ids []int
	for _, s := range strings.Split(list, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 0 && !slices.Contains(ids, n) {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	return ids
}

func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, m := range ids {
		s[i] = strconv.Itoa(m)
	}
	return strings.Join(s, ",")
}

// Hash writes the route as a URL fragment: the view, then text, masks and the view's own state.
func (r Route) Hash() string {
	// Spaces as %20 rather than "+" and commas left as they are: easier to read, copy and paste
	// in an address bar, and ParseRoute reads both spellings.
	esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	var b strings.Builder
	view := ViewMask
	switch r.View {
	case ViewAttention, ViewSteps, ViewMasking, ViewTrain, ViewModels, ViewEmbeddings, ViewWhy, ViewCompare, ViewReplaced, ViewFamily:
		view = r.View
	}
	if r.Lesson > 0 && r.Lesson <= len(Lessons) {
		fmt.Fprintf(&b, "#%s/%d?text=%s", ViewLessons, r.Lesson, esc(r.Text))
	} else {
		b.WriteString("#" + view + "?text=" + esc(r.Text))
	}
	if len(r.Masks) > 0 {
		b.WriteString("&masks=" + joinIDs(r.Masks))
	}
	if r.Pair != "" {
		b.WriteString("&b=" + esc(r.Pair))
		if len(r.PairMasks) > 0 {
			b.WriteString("&bmasks=" + joinIDs(r.PairMasks))
		}
	}
	switch view {
	case ViewAttention:
		fmt.Fprintf(&b, "&layer=%d&head=%d", r.Layer, r.Head)
		if r.HideSpecial {
			b.WriteString("&special=0")
		}
		if r.Pair != "" && r.Seg != SegAll {
			b.WriteString("&seg=" + r.Seg)
		}
		if r.HeadView {
			b.WriteString("&show=lines")
		}
		if r.AllHeads {
			b.WriteString("&heads=all")
		} else if r.HeadView && r.NeuronQuery > 0 {
			fmt.Fprintf(&b, "&query=%d", r.NeuronQuery-1)
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
	case ViewEmbeddings:
		for _, s := range r.Sentences {
			b.WriteString("&s=" + esc(s))
		}
		fmt.Fprintf(&b, "&layer=%d", r.Layer)
		if r.HideSpecial {
			b.WriteString("&special=0")
		}
		if r.Word != "" {
			b.WriteString("&word=" + esc(r.Word))
		}
	case ViewWhy:
		if r.Target != "" {
			b.WriteString("&target=" + esc(r.Target))
		}
		if r.Method == explain.MethodIG {
			b.WriteString("&method=" + r.Method)
			if r.IGSteps > 0 {
				fmt.Fprintf(&b, "&igsteps=%d", r.IGSteps)
			}
			if r.Baseline == "pad" {
				b.WriteString("&baseline=pad")
			}
		}
		if len(r.Off) > 0 {
			b.WriteString("&off=" + heads(r.Off))
		}
	case ViewCompare:
		if r.Compare != "" {
			b.WriteString("&c=" + esc(r.Compare))
		}
		fmt.Fprintf(&b, "&layer=%d&head=%d", r.Layer, r.Head)
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
		if r.Ungrouped {
			b.WriteString("&group=0")
		}
		if r.Steps > 0 {
			fmt.Fprintf(&b, "&steps=%d", r.Steps)
		}
		if r.Hidden > 0 {
			fmt.Fprintf(&b, "&hidden=%d", r.Hidden)
		}
		if r.MLMVocab != "" {
			b.WriteString("&vocab=" + esc(r.MLMVocab))
		}
	}
	if r.Lesson > 0 && r.Goal != "" {
		b.WriteString("&goal=" + esc(r.Goal))
	}
	return b.String()
}
