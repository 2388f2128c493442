package pipeline

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

func near(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= tol*(1+math.Abs(float64(want[i])))) {
			t.Fatalf("%s[%d] = %g, recomputed %g", what, i, got[i], want[i])
		}
	}
}

func layerNorm(x, g, b []float32, eps float64) []float32 {
	var mean, v float64
	for _, xi := range x {
		mean += float64(xi)
	}
	mean /= float64(len(x))
	for _, xi := range x {
		v += (float64(xi) - mean) * (float64(xi) - mean)
	}
	v /= float64(len(x))
	y := make([]float32, len(x))
	for i, xi := range x {
		y[i] = float32((float64(xi)-mean)/math.Sqrt(v+eps)*float64(g[i]) + float64(b[i]))
	}
	return y
}

// TestStepsRecompute checks every step's numbers against a recomputation from the step before
// (and the model's weights): the walk is a faithful account of what the layer did.
func TestStepsRecompute(t *testing.T) {
	f := loadFixture(t)
	m, tok := f.Model, f.Tokenizer
	c := m.Config
	pair := "on the mat"
	for layer := 0; layer < c.NumHiddenLayers; layer++ {
		for _, token := range []int{0, 2} {
			t.Run(fmt.Sprintf("layer%d/token%d", layer, token), func(t *testing.T) {
				r, err := Steps(m, tok, "the cat sat", &pair, layer, token)
				if err != nil {
					t.Fatal(err)
				}
				A, D, H := r.NumHeads, r.HeadDim, c.HiddenSize
				enc, _ := Encode(tok, "the cat sat", &pair, 0)
				S := enc.Len()
				if len(r.Steps) != 10 || r.Token != token || r.Layer != layer || len(r.Tokens) != S {
					t.Fatalf("header: %d steps, token %d, layer %d", len(r.Steps), r.Token, r.Layer)
				}
				st := r.Step
				// Embedding sum: the three rows of the embedding tables.
				e := st("embed")
				id := enc.IDs[token]
				near(t, "word", e.Vector("word"), m.WordEmb.Data[id*H:(id+1)*H], 0)
				near(t, "position", e.Vector("position"), m.PosEmb.Data[token*H:(token+1)*H], 0)
				sum := make([]float32, H)
				for i := range sum {
					sum[i] = e.Vector("word")[i] + e.Vector("position")[i] + e.Vector("type")[i]
				}
				near(t, "sum", e.Vector("sum"), sum, 1e-6)
				near(t, "embedding LayerNorm", st("embed-ln").Vector("embedding output"),
					layerNorm(sum, m.EmbLN.W.Data, m.EmbLN.B.Data, c.LayerNormEps), 1e-4)

				// Q/K/V: the layer's linear maps of its input.
				lw := m.Layers[layer]
				qkv := st("qkv")
				x := qkv.Vectors[0].Values
				if layer == 0 {
					near(t, "layer input", x, st("embed-ln").Vector("embedding output"), 0)
				}
				near(t, "q", qkv.Vector("q"), linearRow(lw.Query, x), 1e-4)
				near(t, "k", qkv.Vector("k"), linearRow(lw.Key, x), 1e-4)
				near(t, "v", qkv.Vector("v"), linearRow(lw.Value, x), 1e-4)

				// Scores: q·k/√d of this token's query against the traced keys.
				_, out, err := traced(m, tok, "the cat sat", &pair)
				if err != nil {
					t.Fatal(err)
				}
				keys := out.Trace.Layers[layer].Key.Data
				q := qkv.Vector("q")
				for h := 0; h < A; h++ {
					want := make([]float32, S)
					for j := range want {
						var s float64
						for d := 0; d < D; d++ {
							s += float64(q[h*D+d]) * float64(keys[j*H+h*D+d])
						}
						want[j] = float32(s / math.Sqrt(float64(D)))
					}
					near(t, fmt.Sprintf("scores head %d", h), st("scores").Vector(fmt.Sprintf("scores head %d", h)), want, 1e-4)
					// softmax(scores + mask) is the attention row.
					ms := st("mask").Vector(fmt.Sprintf("masked scores head %d", h))
					mask := st("mask").Vector("mask")
					mx := math.Inf(-1)
					for j := range ms {
						if got := ms[j]; got != st("scores").Vector(fmt.Sprintf("scores head %d", h))[j]+mask[j] {
							t.Fatalf("masked score %d: %g", j, got)
						}
						mx = max(mx, float64(ms[j]))
					}
					var z float64
					p := make([]float32, S)
					for j := range ms {
						z += math.Exp(float64(ms[j]) - mx)
					}
					for j := range ms {
						p[j] = float32(math.Exp(float64(ms[j])-mx) / z)
					}
					near(t, fmt.Sprintf("attention head %d", h), st("softmax").Vector(fmt.Sprintf("attention head %d", h)), p, 1e-5)
					// context: the attention-weighted sum of the traced values.
					vals := out.Trace.Layers[layer].Value.Data
					ctx := make([]float32, D)
					for d := range ctx {
						var s float64
						for j := 0; j < S; j++ {
							s += float64(p[j]) * float64(vals[j*H+h*D+d])
						}
						ctx[d] = float32(s)
					}
					near(t, fmt.Sprintf("context head %d", h), st("context").Vector("context")[h*D:(h+1)*D], ctx, 1e-4)
				}

				// Output projection + residual + LayerNorm.
				ao := st("attn-out")
				proj := linearRow(lw.AttnOut, st("context").Vector("context"))
				near(t, "projection", ao.Vector("projection"), proj, 1e-4)
				res := make([]float32, H)
				for i := range res {
					res[i] = proj[i] + x[i]
				}
				near(t, "projection + x", ao.Vector("projection + x"), res, 1e-4)
				a := ao.Vector("attention output a")
				near(t, "attention output", a, layerNorm(ao.Vector("projection + x"), lw.AttnLN.W.Data, lw.AttnLN.B.Data, c.LayerNormEps), 1e-4)

				// Feed-forward: GELU of the first linear map, then the second, residual, LayerNorm.
				ff := st("ffn")
				pre := linearRow(lw.Inter, a)
				near(t, "pre-activation", ff.Vectors[0].Values, pre, 1e-5)
				gelu := make([]float32, len(pre))
				for i, u := range pre {
					gelu[i] = float32(0.5 * float64(u) * (1 + math.Erf(float64(u)/math.Sqrt2)))
				}
				near(t, "GELU", ff.Vectors[1].Values, gelu, 1e-4)
				fo := st("ffn-out")
				near(t, "FFN output", fo.Vectors[0].Values, linearRow(lw.Out, ff.Vectors[1].Values), 1e-4)
				res2 := make([]float32, H)
				for i := range res2 {
					res2[i] = fo.Vectors[0].Values[i] + a[i]
				}
				near(t, "FFN + a", fo.Vectors[1].Values, res2, 1e-5)
				near(t, "layer output", fo.Vectors[2].Values, layerNorm(res2, lw.OutLN.W.Data, lw.OutLN.B.Data, c.LayerNormEps), 1e-4)
				if layer+1 < c.NumHiddenLayers {
					next, err := Steps(m, tok, "the cat sat", &pair, layer+1, token)
					if err != nil {
						t.Fatal(err)
					}
					near(t, "next layer's input", next.Step("qkv").Vectors[0].Values, fo.Vectors[2].Values, 0)
				}
			})
		}
	}
	if _, err := Steps(m, tok, "the cat", nil, c.NumHiddenLayers, 0); err == nil {
		t.Error("a layer past the last should fail")
	}
	if _, err := Steps(m, tok, "the cat", nil, 0, 99); err == nil {
		t.Error("a token past the last should fail")
	}
}

// A relative-position model's walk shows no position row in the embedding sum (the sum is word
// + type) and names the distance terms in the scores, whose values are the traced ones.
func TestStepsRelative(t *testing.T) {
	f, err := hf.LoadFolder("../bert/testdata/bert-tiny-relkq")
	if err != nil {
		t.Fatal(err)
	}
	m, tok := f.Model, f.Tokenizer
	H := m.Config.HiddenSize
	r, err := Steps(m, tok, "the cat sat", nil, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	e := r.Step("embed")
	if e.Vector("position") != nil || strings.Contains(e.Formula, "position") {
		t.Errorf("embedding step of a relative model: %q with a position vector %v", e.Formula, e.Vector("position") != nil)
	}
	word, typ := e.Vector("word"), e.Vector("type")
	sum := make([]float32, H)
	for i := range sum {
		sum[i] = word[i] + typ[i]
	}
	near(t, "sum", e.Vector("sum"), sum, 1e-6)
	if s := r.Step("scores"); !strings.Contains(s.Formula, "q · r[i−j] + k_j · r[i−j]") || !strings.Contains(s.What, "distance") {
		t.Errorf("scores step of a relative_key_query model: %q / %q", s.Formula, s.What)
	}
	enc, _ := Encode(tok, "the cat sat", nil, 0)
	out, err := m.Forward(bert.Batch{B: 1, S: len(enc.IDs), InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	S, A := len(enc.IDs), m.Config.NumAttentionHeads
	for h := range A {
		want := out.Trace.Layers[1].Scores.Data[(h*S+2)*S : (h*S+3)*S]
		near(t, fmt.Sprintf("head %d scores", h), r.Step("scores").Vectors[h].Values, want, 1e-6)
	}
}
