package ui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/bertlab/bertlab/core/engine"
)

// The family lab's engine functions, natively, as wasm/engine answers them; the record is the
// committed one, as the worker fetches it.

func (e *nativeEngine) FamilyStart(req engine.FamilyRequest) (*engine.FamilyInfo, error) {
	return e.e.FamilyStart(req)
}

func (e *nativeEngine) FamilyStep() (*engine.FamilyEvents, error) {
	return e.e.FamilyStep(context.Background())
}

func (e *nativeEngine) FamilyStop() (*engine.FamilyEvents, error) { return e.e.FamilyStop() }

func (e *nativeEngine) FamilyRecord() ([]byte, error) {
	return os.ReadFile("../assets/family/record.json")
}

// TestFamilyLabNative races two variants through the page's state without a browser (inline:
// no event loop here): the picks go to the engine, every step and evaluation lands by variant,
// the race ends on its budget, and the page shows the engine's figures and the record's.
func TestFamilyLabNative(t *testing.T) {
	eng := newNativeEngine(t)
	a := &App{Eng: eng}
	a.Start(ParseRoute("#family"))
	if a.View != ViewFamily {
		t.Fatalf("view %q", a.View)
	}
	a.openFamilyLab()
	l := &a.Race
	if l.Rec == nil || len(l.Rec.Results) == 0 || l.Rec.Config.Amount <= 0 {
		t.Fatalf("record: %+v %q", l.Rec, l.RecErr)
	}
	a.TogglePick("roberta")    // out of the defaults
	a.TogglePick("albert")     // in
	a.TogglePick("distilbert") // cannot race: ignored
	if strings.Join(l.Picked, ",") != "bert,albert" {
		t.Fatalf("picked %v", l.Picked)
	}
	if !Racing("deberta") || Racing("distilbert") {
		t.Errorf("racing: deberta %v, distilbert %v", Racing("deberta"), Racing("distilbert"))
	}
	if title, _ := choice("deberta-v2"); title != "DeBERTa" {
		t.Errorf("the engine's deberta-v2 is shown as %q", title)
	}
	a.SetRaceScale("0.25")
	a.RaceStart()
	if l.State != RaceDone || l.Err != "" || l.Info == nil {
		t.Fatalf("state %s, err %q", l.State, l.Err)
	}
	for i, v := range l.Info.Variants {
		if len(l.Steps[i]) != v.Steps || len(l.Evals[i]) < 2 {
			t.Errorf("%s: %d steps of %d, %d evaluations", v.Family, len(l.Steps[i]), v.Steps, len(l.Evals[i]))
		}
		if last := l.Steps[i][len(l.Steps[i])-1]; last.Tokens != v.Tokens || float64(last.Tokens) < l.Info.Amount {
			t.Errorf("%s: last step at %d tokens, plan %d, budget %g", v.Family, last.Tokens, v.Tokens, l.Info.Amount)
		}
	}
	if l.Info.Variants[1].Params >= l.Info.Variants[0].Params {
		t.Errorf("ALBERT has %d parameters, BERT %d: sharing saved nothing", l.Info.Variants[1].Params, l.Info.Variants[0].Params)
	}

	var buf bytes.Buffer
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticrender.New(&buf).Render(env.RunBuild(&Root{App: a})); err != nil {
		t.Fatalf("render: %v", err)
	}
	html := buf.String()
	for _, want := range []string{`data-view="family"`, `data-state="done"`, `data-role="race-loss"`, `data-role="record-row"`,
		`data-params="` + strconv.FormatInt(l.Info.Variants[1].Params, 10) + `"`, "The recorded run (dashed), made natively by `bertlab family`"} {
		if !strings.Contains(html, want) {
			t.Errorf("static render lacks %s", want)
		}
	}
	// The recorded rows carry each body's fine-tuned figures, and ELECTRA's held-out figure is
	// named as its discriminator's probe with the generator's beside it.
	for _, r := range l.Rec.Results {
		for _, tk := range r.Tasks {
			if cell := fmt.Sprintf("%.1f%%", 100*tk.Value); !strings.Contains(html, cell) {
				t.Errorf("%s: the record's %s figure %s is not in the page", r.Family, tk.Name, cell)
			}
		}
		if r.ProbeSteps > 0 && r.Generator != nil && !strings.Contains(html, fmt.Sprintf("(discriminator + MLM head; generator %.2f%%)", 100*r.Generator.Accuracy)) {
			t.Errorf("%s: the probe's figure is not named as the discriminator's", r.Family)
		}
	}
	a.RaceReset()
	if l.Info != nil || l.State != RaceIdle || l.Rec == nil {
		t.Errorf("reset: state %s, info %v, record kept %v", l.State, l.Info, l.Rec != nil)
	}
}
