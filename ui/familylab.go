package ui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/train"
)

// ViewFamily is the "Family lab": BERT's successors pre-trained side by side in the worker.
const ViewFamily = "family"

// FamilyLabEngine is what the page asks of the engine for the family lab (core/engine's
// FamilyStart, FamilyStep and FamilyStop), and the recorded native run beside it.
type FamilyLabEngine interface {
	FamilyStart(req engine.FamilyRequest) (*engine.FamilyInfo, error)
	FamilyStep() (*engine.FamilyEvents, error)
	FamilyStop() (*engine.FamilyEvents, error)
	// FamilyRecord is the text of assets/family/record.json: the JSON record of a native
	// `bertlab family` run (internal/familylab.Record).
	FamilyRecord() ([]byte, error)
}

// FamilyChoices are the variants the lab offers, with what each changes from BERT and what
// the learner should watch for. (Only those core/lab can start from random weights race.)
var FamilyChoices = []struct {
	ID, Title, Color, Change, Watch string
}{
	{"bert", "BERT", "#2563eb",
		"The original (Devlin et al. 2018): masked LM on 15% of the tokens, masks drawn once, and next-sentence prediction on sentence pairs.",
		"The baseline every other line is measured against."},
	{"roberta", "RoBERTa", "#dc2626",
		"Liu et al. 2019: the same network, trained differently: no next-sentence prediction, full sentences packed across documents, and dynamic masks (new ones every time a sequence comes round).",
		"The paper's claims are that NSP is not needed and that BERT was under-trained: at equal tokens RoBERTa should do at least as well, and keep improving with more tokens."},
	{"albert", "ALBERT", "#059669",
		"Lan et al. 2019: one layer's weights shared by every layer and the embeddings factorised (a small embedding size, projected up), so far fewer parameters; sentence-order prediction instead of NSP.",
		"The parameter count beside it: a fraction of BERT's for close to the same compute per token. Does the curve keep up?"},
	{"electra", "ELECTRA", "#d97706",
		"Clark et al. 2020: a small generator fills the masked positions, and the discriminator learns to tell, for every token, whether it was replaced: every token gives a signal, not just the 15% masked.",
		"Its masked-LM curve is its small generator's (the discriminator has no masked-LM head: the paper judges it by fine-tuning), so it is not the paper's claim itself; watch the discriminator's accuracy in the table."},
	{"distilbert", "DistilBERT", "#7c3aed",
		"Sanh et al. 2019: a student with half the teacher's layers, started from every other teacher layer and trained to match the teacher's outputs.",
		"It needs a trained teacher, so it cannot race from random weights here; the recorded run shows it when the record has it."},
	{"deberta", "DeBERTa", "#db2777",
		"He et al. 2021 (v2's masked LM): disentangled attention: each score adds content-to-content, content-to-position and position-to-content terms over relative positions (log buckets), with no absolute position embeddings; no sentence task, dynamic masks.",
		"The paper's claim is that disentangled attention beats BERT's: watch whether its curves pull ahead of RoBERTa's (the same data recipe) once the model starts to use word order."},
}

// States of a race (FamilyRaceLab.State, the view's data-state).
const (
	RaceIdle     = "idle"
	RaceRunning  = "running"
	RaceStopping = "stopping"
	RaceDone     = "done"
)

// FamilyBudgets are the budgets the lab offers: a multiple of the lab's default (16,384 tokens,
// or the FLOPs Tiny BERT spends on them).
var FamilyBudgets = []struct {
	Scale float64
	Title string
}{
	{0.5, "½× (about half a minute)"}, {1, "1× (about a minute)"}, {2, "2×"}, {4, "4× (several minutes)"},
}

// FamilyRaceLab is the family lab's state: the picks, the race the worker runs one step of
// one variant at a time at the page's request, and the recorded native run.
type FamilyRaceLab struct {
	Picked []string // ids of FamilyChoices, in their order
	Budget string   // engine.BudgetTokens or BudgetFLOPs
	Scale  float64

	State string
	Info  *engine.FamilyInfo
	// Steps and Evals are each variant's events, by FamilyInfo.Variants index.
	Steps [][]engine.FamilyEvent
	Evals [][]engine.FamilyEvent
	Err   string
	gen   int // bumped with every new event: the charts redraw when it changes
	run   int // bumped by every start: answers for an older race are dropped
	loop  int
	// Stepping is true while a step asked of the engine has not been answered.
	Stepping bool

	// Rec is the recorded native run (nil until fetched, or when there is none: RecErr).
	Rec      *FamilyRecord
	RecErr   string
	recAsked bool
}

// FamilyRecord is the part of `bertlab family`'s JSON record (internal/familylab.Record) the
// page shows.
type FamilyRecord struct {
	Config struct {
		Variants    []string `json:"variants"`
		Preset      string   `json:"preset"`
		Vocab       string   `json:"vocab"`
		Train       []string `json:"train"`
		MaxDocs     int      `json:"max_docs"`
		Heldout     string   `json:"heldout"`
		HeldoutSeqs int      `json:"heldout_seqs"`
		SeqLen      int      `json:"seq_len"`
		Batch       int      `json:"batch"`
		LR          float64  `json:"lr"`
		Budget      string   `json:"budget"`
		Amount      float64  `json:"amount"`
		Evals       int      `json:"evals"`
		Seed        uint64   `json:"seed"`
	} `json:"config"`
	HeldoutN    int                  `json:"heldout_predictions"`
	HeldoutSeqs int                  `json:"heldout_sequences"`
	Results     []FamilyRecordResult `json:"results"`
}

// FamilyRecordResult is one variant of the record.
type FamilyRecordResult struct {
	Family          string            `json:"family"`
	Params          int64             `json:"params"`
	GeneratorParams int64             `json:"generator_params"`
	Steps           int               `json:"steps"`
	Tokens          int64             `json:"tokens"`
	FLOPs           float64           `json:"flops"`
	Seconds         float64           `json:"seconds"`
	Final           FamilyRecordPoint `json:"final"`
	// ProbeSteps and Generator: ELECTRA's Final is its discriminator's with a masked-LM head
	// fine-tuned ProbeSteps steps; Generator holds its generator's figures.
	ProbeSteps int                `json:"probe_steps"`
	Generator  *FamilyRecordPoint `json:"generator"`
	// Tasks are the fine-tuned figures of the final body (sentiment, part of speech).
	Tasks []FamilyRecordTask  `json:"tasks"`
	Train []FamilyRecordPoint `json:"train"`
	Evals []FamilyRecordPoint `json:"evals"`
}

// FamilyRecordTask is a variant's test figure on a fine-tuning task of the record.
type FamilyRecordTask struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// FamilyRecordPoint is a step or evaluation of the record.
type FamilyRecordPoint struct {
	Step        int     `json:"step"`
	Tokens      int64   `json:"tokens"`
	FLOPs       float64 `json:"flops"`
	Loss        float64 `json:"loss"`
	Accuracy    float64 `json:"mlm_accuracy"`
	Perplexity  float64 `json:"perplexity"`
	RTDAccuracy float64 `json:"rtd_accuracy"`
}

// ParseFamilyRecord reads a record; one without results is an error.
func ParseFamilyRecord(b []byte) (*FamilyRecord, error) {
	var r FamilyRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("family/record.json: %w", err)
	}
	if len(r.Results) == 0 {
		return nil, fmt.Errorf("family/record.json: no finished variant")
	}
	return &r, nil
}

func (l *FamilyRaceLab) defaults() {
	if len(l.Picked) == 0 {
		l.Picked = []string{"bert", "roberta"}
	}
	if l.Budget != engine.BudgetFLOPs {
		l.Budget = engine.BudgetTokens
	}
	if l.Scale <= 0 {
		l.Scale = 1
	}
	if l.State == "" {
		l.State = RaceIdle
	}
}

// Busy reports whether a race is under way.
func (l *FamilyRaceLab) Busy() bool { return l.State == RaceRunning || l.State == RaceStopping }

// SteppingAttr is Stepping for the data-stepping attribute that tests wait on.
func (l *FamilyRaceLab) SteppingAttr() string {
	if l.Stepping {
		return "1"
	}
	return "0"
}

// Racing reports whether the lab can race family id from random weights (lab.FamilyVariants).
func Racing(id string) bool {
	f, err := train.ParseRecipeFamily(id)
	return err == nil && slices.Contains(lab.FamilyVariants(), f)
}

// raceEngine is the engine's family-lab questions; nil when the engine lacks them.
func (a *App) raceEngine() FamilyLabEngine {
	fe, _ := a.Eng.(FamilyLabEngine)
	return fe
}

// openFamilyLab sets the lab's defaults and fetches the record once. Called with the render
// lock held.
func (a *App) openFamilyLab() {
	l := &a.Race
	l.defaults()
	fe := a.raceEngine()
	if l.recAsked || fe == nil {
		return
	}
	l.recAsked = true
	a.spawn(func() {
		b, err := fe.FamilyRecord()
		var rec *FamilyRecord
		if err == nil {
			rec, err = ParseFamilyRecord(b)
		}
		a.Do(func() {
			if err != nil {
				l.RecErr = err.Error()
				return
			}
			l.Rec = rec
			l.gen++
		})
	})
}

// TogglePick adds family id to the race, or takes it out.
func (a *App) TogglePick(id string) {
	l := &a.Race
	if l.Busy() || !Racing(id) {
		return
	}
	if i := slices.Index(l.Picked, id); i >= 0 {
		l.Picked = slices.Delete(slices.Clone(l.Picked), i, i+1)
		return
	}
	var picked []string
	for _, c := range FamilyChoices {
		if c.ID == id || slices.Contains(l.Picked, c.ID) {
			picked = append(picked, c.ID)
		}
	}
	l.Picked = picked
}

// SetRaceBudget and SetRaceScale take the budget from the form.
func (a *App) SetRaceBudget(kind string) {
	if !a.Race.Busy() {
		a.Race.Budget = kind
		a.Race.defaults()
	}
}

func (a *App) SetRaceScale(s string) {
	if a.Race.Busy() {
		return
	}
	var x float64
	if _, err := fmt.Sscan(strings.TrimSpace(s), &x); err == nil {
		a.Race.Scale = x
	}
	a.Race.defaults()
}

// RaceStart starts a race of the picked variants.
func (a *App) RaceStart() {
	l := &a.Race
	fe := a.raceEngine()
	if l.Busy() || fe == nil {
		return
	}
	if len(l.Picked) < 2 {
		l.Err = "pick two or more variants to race"
		return
	}
	l.run++
	run := l.run
	l.State, l.Info, l.Steps, l.Evals, l.Err = RaceRunning, nil, nil, nil, ""
	l.gen++
	req := engine.FamilyRequest{Variants: slices.Clone(l.Picked), Budget: l.Budget, Scale: l.Scale, Seed: 1}
	a.spawn(func() {
		info, err := fe.FamilyStart(req)
		a.Do(func() {
			if run != l.run {
				return
			}
			if err != nil {
				l.State, l.Err = RaceIdle, err.Error()
				return
			}
			l.Info = info
			l.Steps = make([][]engine.FamilyEvent, len(info.Variants))
			l.Evals = make([][]engine.FamilyEvent, len(info.Variants))
			l.gen++
			if l.State == RaceRunning {
				a.raceLoop()
			}
		})
	})
}

// raceLoop asks the engine for one piece of work after another while the race runs (the
// training lab's trainLoop): the worker picks the variant furthest behind, so the variants
// move together. Called with the render lock held.
func (a *App) raceLoop() {
	l := &a.Race
	fe := a.raceEngine()
	l.loop++
	run, loop := l.run, l.loop
	going := func() (ok bool) {
		a.Do(func() { ok = l.run == run && l.loop == loop && l.State == RaceRunning && l.Info != nil })
		return ok
	}
	a.spawn(func() {
		for going() {
			a.Do(func() { l.Stepping = true })
			res, err := fe.FamilyStep()
			a.Do(func() {
				l.Stepping = false
				if l.run != run {
					return
				}
				if err != nil {
					l.State, l.Err = RaceDone, err.Error()
					return
				}
				l.add(res)
			})
		}
	})
}

func (l *FamilyRaceLab) add(res *engine.FamilyEvents) {
	for _, ev := range res.Events {
		if ev.Variant < 0 || ev.Variant >= len(l.Steps) {
			continue
		}
		if ev.Kind == "eval" {
			l.Evals[ev.Variant] = append(l.Evals[ev.Variant], ev)
		} else {
			l.Steps[ev.Variant] = append(l.Steps[ev.Variant], ev)
		}
	}
	if res.Done {
		l.State = RaceDone
	}
	l.gen++
}

// RaceStop ends the race where it is.
func (a *App) RaceStop() {
	l := &a.Race
	fe := a.raceEngine()
	if l.State != RaceRunning || fe == nil {
		return
	}
	l.State = RaceStopping
	l.loop++
	run := l.run
	a.spawn(func() {
		_, err := fe.FamilyStop()
		a.Do(func() {
			if run != l.run {
				return
			}
			if err != nil {
				l.Err = err.Error()
			}
			l.State = RaceDone
		})
	})
}

// RaceReset clears the race (the picks and the record stay).
func (a *App) RaceReset() {
	l := &a.Race
	if l.State == RaceRunning {
		return
	}
	l.run++
	l.loop++
	l.State, l.Info, l.Steps, l.Evals, l.Err = RaceIdle, nil, nil, nil, ""
	l.gen++
}

// StepsOf is the steps variant i has logged.
func (l *FamilyRaceLab) StepsOf(i int) int {
	if i < len(l.Steps) {
		return len(l.Steps[i])
	}
	return 0
}

// choice is the FamilyChoices entry of family id, as a recipe names it ("deberta" or the
// engine's "deberta-v2"); a grey one for a family it does not know.
func choice(id string) (title, color string) {
	f, err := train.ParseRecipeFamily(id)
	for _, c := range FamilyChoices {
		g, gerr := train.ParseRecipeFamily(c.ID)
		if c.ID == id || err == nil && gerr == nil && g == f {
			return c.Title, c.Color
		}
	}
	return id, "#64748b"
}
