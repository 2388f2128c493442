package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vugu/vugu"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/pipeline"
)

// DefaultTopK is how many predictions the page shows for each mask.
const DefaultTopK = 5

// Example is a sentence offered under the text box, with the words it masks first, or a pair
// of sentences (B not empty) with the words masked in each.
type Example struct {
	Text   string
	Masks  []int
	B      string
	MasksB []int
}

// Label is how the example reads on its button: a pair as "A / B".
func (ex Example) Label() string {
	if ex.B == "" {
		return ex.Text
	}
	return ex.Text + " / " + ex.B
}

// Examples are the sentences under the text box. The two pairs are the next-sentence examples
// of the BERT paper (Devlin et al., 2018, section 3.1), one IsNext and one NotNext.
var Examples = []Example{
	{Text: "The capital of France is Paris.", Masks: []int{5}},
	{Text: "The man went to the store to buy a gallon of milk.", Masks: []int{4, 11}},
	{Text: "She played the piano beautifully at the concert last night.", Masks: []int{3}},
	{Text: "Dogs are loyal animals and make wonderful pets.", Masks: []int{2}},
	{Text: "The unbelievably talented musicians performed wonderfully.", Masks: []int{1}},
	{Text: "The man went to the store.", Masks: []int{4}, B: "He bought a gallon of milk.", MasksB: []int{4}},
	{Text: "The man went to the store.", Masks: []int{2}, B: "Penguins are flightless birds.", MasksB: []int{1}},
}

// App is the state of the page shared by its views. Its exported methods are called with the
// render lock held (from event handlers, or through Do); they hand the engine's work to
// goroutines, which take the lock again to store the answer.
type App struct {
	Eng Engine
	// Env is the renderer's event environment; nil when rendering without a browser (tests),
	// where the engine is called inline.
	Env vugu.EventEnv
	// OnRoute, if set, receives the URL fragment after every change of the state it holds.
	OnRoute func(hash string)

	View  string
	Text  string // the sentence the views show
	Draft string // the text box, ahead of Text while the user types
	Masks []int  // word ids the user masked, ascending
	TopK  int
	Layer int // attention view: the selected layer and head
	Head  int
	// HideSpecial hides the [CLS] and [SEP] rows and columns of the attention maps.
	HideSpecial bool
	// Sentence B (pair.go): committed, in its box, and with its masked words as [MASK]
	// ("" without a pair). Its word ids in Masks are offset by PairWordBase.
	TextB, DraftB, MaskedB string
	// The next-sentence prediction of the pair, and the InputKey it is for.
	PairNSP    *pipeline.NSPResult
	PairNSPKey string
	// Attention view with a pair: segment filter, head view, all heads in it (Route).
	Seg                string
	HeadView, AllHeads bool
	typingB            int

	Index  *ModelIndex
	Model  ModelRef
	Info   *ModelInfo
	Loaded bool
	// Models view: loading the user's own folder (models.go).
	Loading bool
	LoadErr string
	LoadMsg string

	Tok        *Tokens
	Words      []Word
	MaskedText string // Text with the masked words replaced by [MASK]: what the engine reads
	Order      []int  // the masked word ids in text order

	Preds     map[int][]pipeline.Prediction // by word id
	PredsText string                        // the InputKey (masked text and pair) Preds are for

	Att     []pipeline.AttentionResult // by layer
	AttText string                     // the InputKey (masked text and pair) Att is for
	attGen  int                        // bumped with every new Att: canvases redraw when it changes

	// "Inside a layer": the token position and step shown (Layer is shared with the attention
	// view) and the engine's walk for them.
	Token    int
	StepI    int
	Steps    *pipeline.StepsResult
	stepsKey string // text, layer and token Steps is for
	stepsReq int
	stepsGen int // bumped with every new Steps: the strips redraw when it changes

	// Masking lab: seed, whole-word masking, the corpus sample shown (1-based; 0 for the text).
	Seed      int
	WholeWord bool
	Sample    int
	Samples   []string // tinydata web/pretrain.txt, one sentence each
	Lab       *engine.MaskLabResult
	labKey    string
	labReq    int
	NSP       []engine.NSPPair
	nspKey    string // the seed NSP is for; "" before any
	nspReq    int

	// Training lab: its settings, the run and the "try it" answer (train.go).
	Training TrainLab
	// Embeddings view: its sentences, layer and maps (embeddings.go).
	Emb EmbLab
	// NeuronQuery is the neuron view's query token plus one (0: none; neuron.go), Neuron its
	// answer.
	NeuronQuery int
	Neuron      *explain.Neuron
	NeuronErr   string
	neuronKey   string
	// Why is the "Why?" view's state (why.go).
	Why WhyLab
	// Compare is the "Compare" view's state (compare.go).
	Compare CompareLab
	// Fam is the family views' state: "Replaced?" and DeBERTa's split attention (family.go).
	Fam FamilyLab
	// Race is the family lab's state: the variants racing in the worker (familylab.go).
	Race FamilyRaceLab
	// OnDownload, if set, hands a file to the user (in the browser, as a download).
	OnDownload func(name string, data []byte)

	// Lessons (lessons.go): the lesson shown (1-based, 0 for none; View is its view) and its
	// task's goal when not the default. Store, if set, keeps the progress and the last URL
	// across visits (in the browser, localStorage).
	Lesson int
	Goal   string
	Store  Storage
	done   map[int]bool
	// moved: the attention view left the lesson's starting head (a head task is not done by
	// opening the lesson), whose layer and head are startAt.
	moved   bool
	startAt [2]int

	Err    string
	busy   int
	gen    int // bumped by every change of Text or Masks: answers for an older gen are dropped
	typing int
}

// Do runs f with the render lock held and renders afterwards.
func (a *App) Do(f func()) {
	if a.Env == nil {
		f()
		return
	}
	a.Env.Lock()
	defer a.Env.UnlockRender()
	f()
}

// spawn runs f in its own goroutine in the browser, inline without one.
func (a *App) spawn(f func()) {
	if a.Env == nil {
		f()
		return
	}
	go func() {
		// A panic here would take the page's render loop down with it: report it instead.
		defer func() {
			if r := recover(); r != nil {
				a.Do(func() { a.Err = fmt.Sprintf("internal error: %v", r) })
			}
		}()
		f()
	}()
}

// Busy reports whether the engine is working on something for the page.
func (a *App) Busy() bool { return a.busy > 0 }

// BusyAttr is Busy for the data-busy attribute that tests wait on.
func (a *App) BusyAttr() string {
	if a.Busy() {
		return "1"
	}
	return "0"
}

// Start loads the model index and the default model, then shows the route (the URL fragment).
func (a *App) Start(r Route, hasText bool) {
	if a.TopK == 0 {
		a.TopK = DefaultTopK
	}
	if !hasText {
		r.Text, r.Masks = Examples[0].Text, Examples[0].Masks
	}
	a.setRoute(r)
	if r.Lesson > 0 && !hasText {
		a.setupLesson()
	}
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		idx, err := a.Eng.Models()
		if err == nil && len(idx.Models) == 0 {
			err = fmt.Errorf("models/index.json lists no model")
		}
		if err != nil {
			a.Do(func() { a.Err = "no model to load: " + err.Error() })
			return
		}
		ref := idx.Models[0]
		for _, m := range idx.Models {
			if m.Name == idx.Default {
				ref = m
			}
		}
		a.Do(func() { a.Index, a.Model = idx, ref })
		info, err := a.Eng.Load(ref)
		a.Do(func() {
			if err != nil {
				a.Err = fmt.Sprintf("loading %s: %v", ref.Name, err)
				return
			}
			a.Info, a.Loaded = info, true
			a.Training.setModel(info.Config.HiddenSize)
			a.refresh()
		})
	})
}

// ApplyRoute shows the state a URL fragment names (a link pasted into the address bar).
func (a *App) ApplyRoute(r Route, hasText bool) {
	if r.Lesson > 0 && !hasText {
		a.OpenLesson(r.Lesson, r.Goal)
		return
	}
	if !hasText {
		cur := a.route()
		r.Text, r.Masks, r.Pair, r.PairMasks = cur.Text, cur.Masks, cur.Pair, cur.PairMasks
	}
	if r.Hash() == a.route().Hash() {
		return
	}
	a.setRoute(r)
	a.refresh()
}

func (a *App) setRoute(r Route) {
	a.View, a.Text, a.Draft, a.Masks, a.Layer, a.Head = r.View, r.Text, r.Text, r.Masks, r.Layer, r.Head
	a.HideSpecial = r.HideSpecial
	a.Lesson, a.Goal = r.Lesson, r.Goal
	a.Token, a.StepI, a.Seed, a.WholeWord, a.Sample = r.Token, r.Step, r.Seed, r.WholeWord, r.Sample
	a.Training.setSettings(r)
	a.setPairRoute(r)
	a.Emb.setRoute(r)
	a.Why.setRoute(r)
	a.Compare.setRoute(r)
}

func (a *App) route() Route {
	r := a.baseRoute()
	a.pairRoute(&r)
	a.Emb.route(&r)
	a.Why.route(&r)
	a.Compare.route(&r)
	a.Training.route(&r)
	return r
}

// baseRoute is the route of the state that App holds itself.
func (a *App) baseRoute() Route {
	return Route{View: a.View, Text: a.Text, Masks: a.Masks, Layer: a.Layer, Head: a.Head, HideSpecial: a.HideSpecial,
		Token: a.Token, Step: a.StepI, Seed: a.Seed, WholeWord: a.WholeWord, Sample: a.Sample,
		Task: a.Training.Task, Epochs: a.Training.Epochs, LR: a.Training.LR, Batch: a.Training.Batch, Ungrouped: a.Training.Ungrouped,
		Lesson: a.Lesson, Goal: a.Goal}
}

func (a *App) writeRoute() {
	hash := a.route().Hash()
	a.remember(hash)
	if a.OnRoute != nil {
		a.OnRoute(hash)
	}
}

// Typed takes the text box's value as the user types; the views follow once typing pauses.
func (a *App) Typed(text string) {
	a.Draft = text
	a.typing++
	n := a.typing
	if a.Env == nil {
		a.Commit()
		return
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		a.Do(func() {
			if n == a.typing {
				a.Commit()
			}
		})
	}()
}

// Commit makes the text box's value the sentence (Enter, or a pause in typing). Masks are
// cleared: they name words of the old text.
func (a *App) Commit() {
	a.typing++
	// Enter commits; the newline it may have typed is not part of the sentence.
	a.Draft = strings.TrimRight(a.Draft, "\r\n")
	if a.Draft == a.Text {
		return
	}
	_, masksB := splitMasks(a.Masks) // sentence B's masks still name its words
	a.Text, a.Masks = a.Draft, joinMasks(nil, masksB)
	a.refresh()
}

// UseExample puts example i into the text box, with its masks.
func (a *App) UseExample(i int) {
	ex := Examples[i]
	// The example is the whole input: a single sentence drops the user's sentence B.
	a.Text, a.Draft, a.TextB, a.DraftB = ex.Text, ex.Text, ex.B, ex.B
	a.Masks = joinMasks(ex.Masks, ex.MasksB)
	a.typingB++ // a pending edit of the old B must not come back
	a.PairNSP, a.PairNSPKey = nil, ""
	a.refresh()
}

// SetView switches between the views.
func (a *App) SetView(v string) {
	if v == a.View && a.Lesson == 0 {
		return
	}
	a.Lesson, a.Goal = 0, "" // a view's tab leaves the lessons
	a.View = v
	a.writeRoute()
	switch {
	case v == ViewAttention && a.AttText != a.InputKey():
		a.refresh()
	case v == ViewSteps:
		a.fetchSteps()
	case v == ViewMasking:
		a.fetchLab()
	case v == ViewEmbeddings:
		a.fetchEmbeddings()
	case v == ViewWhy:
		a.fetchWhy()
	case v == ViewCompare:
		a.fetchCompare()
	case v == ViewReplaced:
		a.fetchReplaced()
	}
}

// ToggleMask masks word id, or unmasks it.
func (a *App) ToggleMask(id int) {
	if id < 0 {
		return
	}
	if i := slices.Index(a.Masks, id); i >= 0 {
		a.Masks = slices.Delete(slices.Clone(a.Masks), i, i+1)
	} else {
		a.Masks = append(slices.Clone(a.Masks), id)
		slices.Sort(a.Masks)
	}
	a.refresh()
}

// Fill puts a predicted token in place of masked word id and unmasks it.
func (a *App) Fill(id int, token string) {
	w, ok := WordByID(a.Words, id)
	if !ok {
		return
	}
	// A literal [MASK] is one word in the text, as is a single predicted token, so the other
	// words keep their ids unless the prediction is a "##" piece that joins the word before
	// (in the same sentence: the other one's words keep theirs).
	shift := 0
	if strings.HasPrefix(token, "##") {
		shift = -1
	}
	var masks []int
	for _, m := range a.Masks {
		switch {
		case m < id || (m > id && (m >= PairWordBase) != (id >= PairWordBase)):
			masks = append(masks, m)
		case m > id:
			masks = append(masks, m+shift)
		}
	}
	if w.Seg == 1 {
		a.TextB = ReplaceWord(a.TextB, w, token)
		a.DraftB = a.TextB
	} else {
		a.Text = ReplaceWord(a.Text, w, token)
		a.Draft = a.Text
	}
	a.Masks = masks
	a.refresh()
}

// SelectHead selects one head of the attention grid.
func (a *App) SelectHead(layer, head int) {
	if len(a.Att) == 0 {
		return
	}
	a.Layer = min(max(layer, 0), len(a.Att)-1)
	a.Head = min(max(head, 0), a.Att[0].NumHeads-1)
	a.writeRoute()
	a.fetchNeuron()
	a.fetchParts()
}

// SetHideSpecial shows or hides [CLS] and [SEP] in the attention maps.
func (a *App) SetHideSpecial(hide bool) {
	a.HideSpecial = hide
	a.writeRoute()
}

// Step moves the selected head by dl layers and dh heads, wrapping around.
func (a *App) Step(dl, dh int) {
	if len(a.Att) == 0 {
		return
	}
	L, A := len(a.Att), a.Att[0].NumHeads
	a.SelectHead(((a.Layer+dl)%L+L)%L, ((a.Head+dh)%A+A)%A)
}

// Key handles a key pressed on the page (not in the text box): arrows step through the heads
// and layers of the attention view. It reports whether the key was used.
func (a *App) Key(key string) bool {
	if a.lessonKey(key) {
		return true
	}
	if a.View == ViewSteps {
		return a.stepKey(key)
	}
	if a.View == ViewEmbeddings {
		return a.embKey(key)
	}
	if a.View != ViewAttention {
		return false
	}
	switch key {
	case "ArrowLeft":
		a.Step(0, -1)
	case "ArrowRight":
		a.Step(0, 1)
	case "ArrowUp":
		a.Step(-1, 0)
	case "ArrowDown":
		a.Step(1, 0)
	default:
		return false
	}
	return true
}

// refresh asks the engine for what the current view needs of the current text and masks.
func (a *App) refresh() {
	a.gen++
	a.Err = ""
	a.writeRoute()
	if !a.Loaded {
		return
	}
	a.fetchEmbeddings() // it does not read the text: a no-op unless its view is new or its model
	gen, text, pair, masks, topK, view, attText := a.gen, a.Text, a.Pair(), slices.Clone(a.Masks), a.TopK, a.View, a.AttText
	nsp := pair != "" && a.HasNSP()
	current := func() bool {
		ok := true
		a.Do(func() { ok = gen == a.gen })
		return ok
	}
	fail := func(err error) {
		a.Do(func() {
			if gen == a.gen {
				a.Err = err.Error()
			}
		})
	}
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		tok, err := a.Eng.Tokenize(text, pair)
		if err != nil {
			fail(err)
			return
		}
		words := PairWords(tok, text, pair)
		masked, order := MaskText(text, SegWords(words, 0), masks)
		var maskedB string
		if pair != "" {
			var orderB []int
			maskedB, orderB = MaskText(pair, SegWords(words, 1), masks)
			order = append(order, orderB...)
		}
		key := inputKey(masked, maskedB)
		a.Do(func() {
			if gen == a.gen {
				a.Tok, a.Words, a.MaskedText, a.MaskedB, a.Order = tok, words, masked, maskedB, order
				// The views that read the text follow it (each drops its older answers).
				switch view {
				case ViewSteps:
					a.fetchSteps()
				case ViewMasking:
					a.fetchLab()
				case ViewWhy:
					a.fetchWhy()
				case ViewCompare:
					a.fetchCompare()
				case ViewReplaced:
					a.fetchReplaced()
				}
			}
		})
		if len(order) > 0 && current() {
			fm, err := a.Eng.FillMask(masked, maskedB, topK)
			if err != nil {
				fail(err)
				return
			}
			if nsp {
				a.Do(func() {
					if gen == a.gen {
						a.PairNSP, a.PairNSPKey = fm.NSP, key
					}
				})
			}
			preds := map[int][]pipeline.Prediction{}
			for i, m := range fm.Masks {
				if i < len(order) {
					preds[order[i]] = m.Predictions
				}
			}
			a.Do(func() {
				if gen == a.gen {
					a.Preds, a.PredsText = preds, key
				}
			})
		} else if nsp && current() {
			res, err := a.Eng.NextSentence(masked, maskedB)
			if err != nil {
				fail(err)
				return
			}
			a.Do(func() {
				if gen == a.gen {
					a.PairNSP, a.PairNSPKey = res, key
				}
			})
		}
		if view == ViewAttention && key != attText && current() {
			att, err := a.Eng.Attention(masked, maskedB)
			if err != nil {
				fail(err)
				return
			}
			a.Do(func() {
				if gen == a.gen {
					a.Att, a.AttText = att, key
					a.attGen++
					a.SelectHead(a.Layer, a.Head)
				}
			})
		}
		// The neuron view reads the same input (a no-op unless it is shown and not yet asked).
		a.Do(func() {
			if gen == a.gen {
				a.fetchNeuron()
			}
		})
	})
}

// ModelLine describes the loaded model in one line.
func (a *App) ModelLine() string {
	switch {
	case a.Info != nil:
		c := a.Info.Config
		return fmt.Sprintf("%s · %d layers × %d heads · hidden %d · %s parameters", a.Model.Name,
			c.NumHiddenLayers, c.NumAttentionHeads, c.HiddenSize, humanCount(a.Info.Parameters))
	case a.Model.Name != "":
		return "loading " + a.Model.Name + "…"
	}
	return "starting the engine…"
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f M", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f k", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
