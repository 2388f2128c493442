package explain

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// Tolerances of DESIGN.md for a float32 implementation against float64 references.
const (
	gradAtol, gradRtol = 1e-5, 1e-4
	logitAtol          = 1e-4
)

// reference is testdata/explainref.json (see testdata/SOURCE.md).
type reference struct {
	InputIDs     []int `json:"input_ids"`
	TokenTypeIDs []int `json:"token_type_ids"`
	MaskPosition int   `json:"mask_position"`
	Candidate    int   `json:"candidate"`
	IGSteps      int   `json:"ig_steps"`
	SeqHead      struct {
		Weight [][]float64 `json:"weight"`
		Bias   []float64   `json:"bias"`
	} `json:"seq_classifier"`
	TokHead struct {
		Weight [][]float64 `json:"weight"`
		Bias   []float64   `json:"bias"`
	} `json:"token_classifier"`
	EmbeddingOutput [][]float64 `json:"embedding_output"`
	Targets         map[string]struct {
		Kind     string      `json:"kind"`
		Position int         `json:"position"`
		Index    int         `json:"index"`
		Logit    float64     `json:"logit"`
		Grad     [][]float64 `json:"grad"`
		GXI      []float64   `json:"gxi"`
		IG       map[string]struct {
			Attributions  []float64 `json:"attributions"`
			BaselineLogit float64   `json:"baseline_logit"`
			Sum           float64   `json:"sum"`
			Delta         float64   `json:"delta"`
		} `json:"ig"`
	} `json:"targets"`
	ImportanceSentence struct {
		Labels     []int       `json:"labels"`
		Importance [][]float64 `json:"importance"`
	} `json:"importance_sentence"`
	ImportanceSet [][]float64 `json:"importance_set"`
	Ablation      struct {
		HeadMask  [][]float64 `json:"head_mask"`
		MLMLogits []float64   `json:"mlm_logits"`
	} `json:"ablation"`
	Lens []struct {
		Layer         int       `json:"layer"`
		IDs           []int     `json:"ids"`
		Probs         []float64 `json:"probs"`
		CandidateProb float64   `json:"candidate_prob"`
	} `json:"lens"`
}

func loadReference(t *testing.T) *reference {
	t.Helper()
	raw, err := os.ReadFile("testdata/explainref.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("testdata/explainref.json: %v", err)
	}
	return &r
}

func (r *reference) input() Input { return Input{IDs: r.InputIDs, TypeIDs: r.TokenTypeIDs} }

// models returns the explained models of each reference target: the pre-training model, and
// task models on the same body with the reference's classifier heads.
func (r *reference) models(t *testing.T) map[string]Model {
	t.Helper()
	body := loadFixture(t).Model
	task := func(kind bert.Task, w [][]float64, b []float64) Model {
		tm, err := bert.NewTaskModel(body, kind, bert.DefaultLabelNames(len(w)), 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range w {
			for j, v := range row {
				tm.Head.W.Row(i)[j] = float32(v)
			}
			tm.Head.B.Data[i] = float32(b[i])
		}
		return FineTuned(tm)
	}
	pre := PreTraining(body)
	return map[string]Model{"mlm": pre, "isnext": pre,
		"class": task(bert.SequenceClassification, r.SeqHead.Weight, r.SeqHead.Bias),
		"tag":   task(bert.TokenClassification, r.TokHead.Weight, r.TokHead.Bias)}
}

func flat(rows [][]float64) []float32 {
	var out []float32
	for _, r := range rows {
		for _, v := range r {
			out = append(out, float32(v))
		}
	}
	return out
}

// closeTo checks got against want elementwise within atol + rtol·|want|.
func closeTo(name string, got, want []float64, atol, rtol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= atol+rtol*math.Abs(want[i])) {
			return fmt.Errorf("%s[%d] = %.8g, want %.8g (diff %.3g)", name, i, got[i], want[i], d)
		}
	}
	return nil
}

func TestEmbeddingOutputMatchesReference(t *testing.T) {
	r := loadReference(t)
	x, err := loadFixture(t).Model.Embed(r.input().batch(1))
	if err != nil {
		t.Fatal(err)
	}
	want := flat(r.EmbeddingOutput)
	got, w := make([]float64, len(want)), make([]float64, len(want))
	for i := range want {
		got[i], w[i] = float64(x.Data[i]), float64(want[i])
	}
	if err := closeTo("embedding output", got, w, 1e-5, 1e-4); err != nil {
		t.Error(err)
	}
}

// The gradient of each output with respect to the embedding output and gradient x input equal
// autograd's. Gradient x input sums H products: its tolerance is the gradient tolerance carried
// through the sum, Σ_h (atol + rtol·|g_h|)·|x_h|.
func TestGradientXInputMatchesReference(t *testing.T) {
	r := loadReference(t)
	models := r.models(t)
	in := r.input()
	x := flat(r.EmbeddingOutput)
	for name, ref := range r.Targets {
		t.Run(name, func(t *testing.T) {
			target := Target{Kind: TargetKind(ref.Kind), Position: ref.Position, Index: ref.Index}
			a, err := models[name].GradientXInputOf(in, target)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(a.Logit - ref.Logit); d > logitAtol {
				t.Errorf("logit %.7g, want %.7g", a.Logit, ref.Logit)
			}
			wantG := flat(ref.Grad)
			got, want := make([]float64, len(wantG)), make([]float64, len(wantG))
			for i := range wantG {
				got[i], want[i] = float64(a.Grad.Data[i]), ref.Grad[i/len(ref.Grad[0])][i%len(ref.Grad[0])]
			}
			if err := closeTo("d logit / d embedding output", got, want, gradAtol, gradRtol); err != nil {
				t.Error(err)
			}
			H := len(ref.Grad[0])
			for s, score := range a.Scores {
				var tol float64
				for h := range H {
					tol += (gradAtol + gradRtol*math.Abs(want[s*H+h])) * math.Abs(float64(x[s*H+h]))
				}
				if d := math.Abs(score - ref.GXI[s]); d > tol {
					t.Errorf("gradient x input of token %d = %.7g, want %.7g (diff %.3g > %.3g)", s, score, ref.GXI[s], d, tol)
				}
			}
		})
	}
}

// Integrated gradients at 64 steps equal the reference's per token, and their completeness gap
// is under 1% of the logit change. The tolerance per token is the gradient tolerance carried
// through Σ_h (x - x')_h·ḡ_h, bounded with |ḡ_h| ≤ max over the path, taken here as the
// attribution's own size: 1e-5·Σ_h|x - x'|_h + 1e-4·|attribution|.
func TestIntegratedGradientsMatchReference(t *testing.T) {
	r := loadReference(t)
	models := r.models(t)
	in := r.input()
	baselines := map[string]Baseline{"mask": {Name: "mask", ID: 103, Keep: []int{101, 102}}, "pad": {Name: "pad", ID: 0, Keep: []int{101, 102}}}
	for name, ref := range r.Targets {
		for bname, want := range ref.IG {
			t.Run(name+"/"+bname, func(t *testing.T) {
				m := models[name]
				target := Target{Kind: TargetKind(ref.Kind), Position: ref.Position, Index: ref.Index}
				bl := baselines[bname]
				a, err := m.IntegratedGradientsOf(in, target, r.IGSteps, bl)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(a.Logit-ref.Logit) > logitAtol || math.Abs(a.BaselineLogit-want.BaselineLogit) > logitAtol {
					t.Errorf("logits %.7g, %.7g at input and baseline; want %.7g, %.7g", a.Logit, a.BaselineLogit, ref.Logit, want.BaselineLogit)
				}
				x, _ := m.Bert.Embed(in.batch(1))
				xb, _ := m.Bert.Embed(bl.ids(in).batch(1))
				H := m.Bert.Config.HiddenSize
				for s, got := range a.Scores {
					var dist float64
					for j := s * H; j < (s+1)*H; j++ {
						dist += math.Abs(float64(x.Data[j]) - float64(xb.Data[j]))
					}
					tol := gradAtol*dist + gradRtol*math.Abs(want.Attributions[s])
					if d := math.Abs(got - want.Attributions[s]); d > tol {
						t.Errorf("token %d: %.7g, want %.7g (diff %.3g > %.3g)", s, got, want.Attributions[s], d, tol)
					}
				}
				if a.RelGap >= 0.01 {
					t.Errorf("completeness gap %.3g of a logit change %.4g (%.2f%%): not under 1%%", a.Gap, a.Logit-a.BaselineLogit, 100*a.RelGap)
				}
				t.Logf("sum %.6g, change %.6g, gap %.3g (%.4f%%)", a.Sum, a.Logit-a.BaselineLogit, a.Gap, 100*a.RelGap)
			})
		}
	}
}

func TestHeadImportanceMatchesReference(t *testing.T) {
	r := loadReference(t)
	m := loadFixture(t).Model
	imp, err := HeadImportance(m, []Example{{Input: r.input(), Labels: r.ImportanceSentence.Labels}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want [][]float64) {
		for l := range want {
			if err := closeTo(fmt.Sprintf("%s layer %d", name, l), got[l], want[l], gradAtol, gradRtol); err != nil {
				t.Error(err)
			}
		}
	}
	check("sentence", imp.Raw, r.ImportanceSentence.Importance)

	// The set: the two sequences of the model fixture, one padded, with their MLM labels.
	ids := [][]int{{101, 490, 103, 103, 1248, 102, 1655, 996, 0, 489, 1057, 102}, {101, 103, 1532, 102, 458, 103, 102}}
	types := [][]int{{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 1}}
	labels := [][]int{{-100, -100, 1092, 1712, 1248, -100, -100, -100, -100, -100, -100, -100}, {-100, 599, -100, -100, -100, 1149, -100}}
	var set []Example
	for i := range ids {
		set = append(set, Example{Input: Input{IDs: ids[i], TypeIDs: types[i]}, Labels: labels[i]})
	}
	imp, err = HeadImportance(m, set)
	if err != nil {
		t.Fatal(err)
	}
	check("set", imp.Raw, r.ImportanceSet)
}

func TestAblationMatchesReference(t *testing.T) {
	r := loadReference(t)
	m := loadFixture(t).Model
	out, err := m.Forward(r.input().batch(1), bert.Options{MLM: true, MLMRows: []int{r.MaskPosition}, HeadMask: flat(r.Ablation.HeadMask)})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, out.MLMLogits.Len())
	for i, v := range out.MLMLogits.Data {
		got[i] = float64(v)
	}
	if err := closeTo("ablated MLM logits", got, r.Ablation.MLMLogits, logitAtol, 0); err != nil {
		t.Error(err)
	}
	var off []Head
	for l, row := range r.Ablation.HeadMask {
		for h, v := range row {
			if v == 0 {
				off = append(off, Head{l, h})
			}
		}
	}
	ab, err := Ablate(m, r.input(), []int{r.MaskPosition}, off, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := softmax(flat([][]float64{r.Ablation.MLMLogits}))
	for _, s := range ab.Positions[0].After {
		if math.Abs(s.After-want[s.ID]) > 1e-5 {
			t.Errorf("ablated probability of %d = %.7g, want %.7g", s.ID, s.After, want[s.ID])
		}
	}
	if ab.Positions[0].After[0].ID != argmax(flat([][]float64{r.Ablation.MLMLogits})) {
		t.Errorf("ablated top prediction %d, want the reference's", ab.Positions[0].After[0].ID)
	}
}

func TestGaussLegendre(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 256} {
		a, w := GaussLegendre(n)
		// Exact for polynomials of degree 2n-1: ∫₀¹ x^k dx = 1/(k+1).
		for _, k := range []int{0, 1, 2 * n / 3, 2*n - 1} {
			var s float64
			for i := range a {
				s += w[i] * math.Pow(a[i], float64(k))
			}
			if math.Abs(s-1/float64(k+1)) > 1e-12 {
				t.Errorf("n=%d: ∫x^%d = %.15g, want %.15g", n, k, s, 1/float64(k+1))
			}
		}
		for i := 1; i < n; i++ {
			if !(a[i] > a[i-1]) || a[0] <= 0 || a[n-1] >= 1 {
				t.Fatalf("n=%d: nodes not ascending in (0, 1): %v", n, a)
			}
		}
	}
	a, w := GaussLegendre(2)
	if want := (1 - 1/math.Sqrt(3)) / 2; math.Abs(a[0]-want) > 1e-15 || math.Abs(w[0]-0.5) > 1e-15 {
		t.Errorf("n=2: node %v weight %v, want %v and 0.5", a[0], w[0], want)
	}
}

func TestAttributionErrors(t *testing.T) {
	r := loadReference(t)
	models := r.models(t)
	in := r.input()
	bl := Baseline{ID: 103, Keep: []int{101, 102}}
	cases := []struct {
		name  string
		model string
		in    Input
		t     Target
		steps int
	}{
		{"mlm position out of range", "mlm", in, Target{Kind: MaskedToken, Position: 99}, 8},
		{"mlm id out of range", "mlm", in, Target{Kind: MaskedToken, Position: 6, Index: 1 << 20}, 8},
		{"class on a pre-training model", "mlm", in, Target{Kind: Class}, 8},
		{"tag on a sequence classifier", "class", in, Target{Kind: Tag, Position: 1}, 8},
		{"class out of range", "class", in, Target{Kind: Class, Index: 3}, 8},
		{"isnext on a task model", "tag", in, Target{Kind: IsNext}, 8},
		{"negative tag", "tag", in, Target{Kind: Tag, Position: 1, Index: -1}, 8},
		{"unknown kind", "mlm", in, Target{Kind: "x"}, 8},
		{"no steps", "mlm", in, Target{Kind: IsNext}, 0},
		{"too many steps", "mlm", in, Target{Kind: IsNext}, MaxSteps + 1},
		{"empty input", "mlm", Input{}, Target{Kind: IsNext}, 8},
		{"id out of range", "mlm", Input{IDs: []int{101, 5000, 102}}, Target{Kind: IsNext}, 8},
		{"types mismatch", "mlm", Input{IDs: []int{101, 102}, TypeIDs: []int{0}}, Target{Kind: IsNext}, 8},
	}
	for _, c := range cases {
		if _, err := models[c.model].IntegratedGradientsOf(c.in, c.t, c.steps, bl); err == nil {
			t.Errorf("%s: integrated gradients gave no error", c.name)
		}
		if c.steps >= 1 && c.steps <= MaxSteps {
			if _, err := models[c.model].GradientXInputOf(c.in, c.t); err == nil {
				t.Errorf("%s: gradient x input gave no error", c.name)
			}
		}
	}
}
