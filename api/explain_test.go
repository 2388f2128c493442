package api

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
)

// The explanation routes answer what the Explainer answers for the same request.
func TestExplainRoutes(t *testing.T) {
	h, _ := newHandler(t, Options{})
	m := fixtureModel(t)
	e := &explain.Explainer{Model: explain.PreTraining(m.Model), Tok: m.Tokenizer}
	req := explain.Request{Text: "the city of paris is [MASK]", Pair: "the big cat", Target: "paris", Method: "ig", Steps: 16,
		Baseline: "pad", TopK: 3, Ablate: []explain.Head{{Layer: 0, Head: 1}}}
	for _, c := range []struct {
		path, body string
		want       func() (*explain.Report, error)
	}{
		{"/api/explain/attributions", `{"text":"the city of paris is [MASK]","pair":"the big cat","target":"paris","method":"ig","steps":16,"baseline":"pad"}`,
			func() (*explain.Report, error) { return e.Attribute(req) }},
		{"/api/explain/lens", `{"text":"the city of paris is [MASK]","pair":"the big cat","target":"paris","top_k":3}`,
			func() (*explain.Report, error) { return e.Lens(req) }},
		{"/api/explain/ablation", `{"text":"the city of paris is [MASK]","pair":"the big cat","ablate":[{"layer":0,"head":1}],"top_k":3,"importance":true,"target":"paris"}`,
			func() (*explain.Report, error) {
				rep, err := e.Ablation(req)
				if err != nil {
					return nil, err
				}
				imp, err := e.Importance(req)
				if err != nil {
					return nil, err
				}
				rep.Importance = imp.Importance
				return rep, nil
			}},
	} {
		code, body, _ := do(t, h, "POST", c.path, c.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.path, code, body)
		}
		got := decodeAs[explain.Report](t, body)
		want, err := c.want()
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, got, want) {
			t.Errorf("%s: answer\n%s\nwant the Explainer's\n%s", c.path, body, mustJSON(t, want))
		}
	}
	code, body, _ := do(t, h, "POST", "/api/explain/attributions", `{"text":"the city of paris is [MASK]","method":"ig"}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if a := decodeAs[explain.Report](t, body).Attribution; a.Steps != explain.DefaultSteps || a.RelGap >= 0.01 || math.IsNaN(a.Sum) {
		t.Errorf("default integrated gradients: %d steps, gap %.3g%%", a.Steps, 100*a.RelGap)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExplainErrors(t *testing.T) {
	h, logs := newHandler(t, Options{})
	const text = `"text":"the city of paris is [MASK]"`
	for _, tc := range []struct {
		path, body string
		says       string
	}{
		{"/api/explain/attributions", `{}`, `missing "text"`},
		{"/api/explain/attributions", `{` + text + `,"steps":0}`, "steps 0 outside [1, 256]"},
		{"/api/explain/attributions", `{` + text + `,"steps":257,"method":"ig"}`, "steps 257 outside"},
		{"/api/explain/attributions", `{` + text + `,"method":"lime"}`, `method "lime"`},
		{"/api/explain/attributions", `{` + text + `,"method":"ig","baseline":"zero"}`, `baseline "zero"`},
		{"/api/explain/attributions", `{` + text + `,"target":"class:1"}`, "sequence classifier"},
		{"/api/explain/attributions", `{` + text + `,"target":"tag:1:1"}`, "token classifier"},
		{"/api/explain/attributions", `{"text":"no mask"}`, "no default target"},
		{"/api/explain/attributions", `{` + text + `,"stepz":3}`, "unknown field"},
		{"/api/explain/lens", `{"text":"no mask"}`, "needs a [MASK]"},
		{"/api/explain/lens", `{` + text + `,"top_k":101}`, "top_k 101 outside"},
		{"/api/explain/ablation", `{` + text + `}`, `missing "ablate"`},
		{"/api/explain/ablation", `{` + text + `,"ablate":[{"layer":2,"head":0}]}`, "outside the model's 2 layers x 4 heads"},
		{"/api/explain/ablation", `{` + text + `,"ablate":[{"layer":0,"head":-1}]}`, "outside"},
		{"/api/explain/ablation", `{` + text + `,"ablate":[` + strings.Repeat(`{"layer":0,"head":0},`, 8) + `{"layer":0,"head":0}]}`, "9 heads to ablate: the model has 8"},
		{"/api/explain/ablation", `{` + text + `,"ablate":"0.1"}`, "bad JSON body"},
	} {
		code, body, _ := do(t, h, "POST", tc.path, tc.body)
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || code != 400 || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s %s: %d %s, want 400 saying %q", tc.path, tc.body, code, body, tc.says)
		}
	}
	if code, _, _ := do(t, h, "GET", "/api/explain/lens", ""); code != 405 {
		t.Errorf("GET /api/explain/lens: %d, want 405", code)
	}
	if code, body, _ := do(t, h, "POST", "/api/explain/nope", "{}"); code != 404 || !strings.Contains(string(body), "/api/explain/lens") {
		t.Errorf("unknown explain route: %d %s", code, body)
	}
	if s := logs.String(); s != "" {
		t.Errorf("bad requests were logged: %s", s)
	}
}

// Integrated gradients over a long text with many steps is refused before it runs: a model of
// 256 positions and 200 tokens at 256 steps is 51,200 token-steps, over maxIGTokenSteps.
func TestExplainIGBudget(t *testing.T) {
	fx := fixtureModel(t)
	c := fx.Model.Config
	c.MaxPositionEmbeddings = 256
	m, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New("long", m, fx.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("cat ", 197) + "[MASK]"
	for _, tc := range []struct {
		steps int
		code  int
	}{{256, 400}, {128, 200}} {
		body := fmt.Sprintf(`{"text":%q,"method":"ig","steps":%d}`, text, tc.steps)
		code, out, _ := do(t, h, "POST", "/api/explain/attributions", body)
		if code != tc.code {
			t.Errorf("%d steps: %d %.200s, want %d", tc.steps, code, out, tc.code)
		}
		if code == 400 && !strings.Contains(string(out), "200 tokens x 256 steps exceed 32768") {
			t.Errorf("%d steps: %s", tc.steps, out)
		}
	}
}
