package bert

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/tensor"
)

// This file checks the backward pass against central finite differences of an independent
// float64 implementation of the same function: BertForPreTraining's loss, or a linear function
// of the encoder outputs for the lower-level Backward, with the dropout masks of a training
// pass applied at the same places. The padding row of the word embeddings is frozen in the
// reference's lookup (HF's padding_idx): perturbing it moves only a tied decoder.

// ref is a float64 BERT computed with plain loops.
type ref struct {
	c                 Config
	p                 map[string][]float64 // parameters by HF name; a tied decoder shares the word embeddings' slice
	padRow            []float64            // the lookup's frozen copy of the padding row
	posPadRow         []float64            // RoBERTa's frozen padding row of the position embeddings
	pooler, mlm, nsp  bool
	hiddenP, attnP    float64   // dropout probabilities of the masks in use
	embKeep           []uint8   // dropout masks, from a training pass; nil: none
	keepP, keep1, kp2 [][]uint8 // per layer
}

const decoderName = "cls.predictions.decoder.weight"

func newRef(m *Model) *ref {
	r := &ref{c: m.Config, p: map[string][]float64{}, pooler: m.Pooler != nil, mlm: m.MLM != nil, nsp: m.NSP != nil}
	for _, p := range m.Params() {
		v := make([]float64, p.T.Len())
		for i, x := range p.T.Data {
			v[i] = float64(x)
		}
		r.p[p.Name] = v
	}
	word := r.p["bert.embeddings.word_embeddings.weight"]
	if m.MLM != nil && m.MLM.Decoder == m.WordEmb {
		r.p[decoderName] = word
	}
	H := m.Config.EmbDim()
	r.padRow = append([]float64(nil), word[m.Config.PadTokenID*H:(m.Config.PadTokenID+1)*H]...)
	if pos := r.p["bert.embeddings.position_embeddings.weight"]; m.Config.Family.Is(FamilyRoBERTa) {
		r.posPadRow = append([]float64(nil), pos[m.Config.PadTokenID*H:(m.Config.PadTokenID+1)*H]...)
	}
	return r
}

// useMasks makes the reference apply the dropout masks a training pass drew.
func (r *ref) useMasks(a *Activations) {
	r.hiddenP, r.attnP = a.pass.drop.hidden, a.pass.drop.attn
	r.embKeep = a.emb.keep
	r.keepP, r.keep1, r.kp2 = nil, nil, nil
	for _, la := range a.layers {
		r.keepP = append(r.keepP, la.keepP)
		r.keep1 = append(r.keep1, la.keep1)
		r.kp2 = append(r.kp2, la.keep2)
	}
}

func drop64(x []float64, keep []uint8, p float64) {
	if keep == nil {
		return
	}
	for i := range x {
		if keep[i] == 0 {
			x[i] = 0
		} else {
			x[i] /= 1 - p
		}
	}
}

func (r *ref) act(x []float64) { actNamed(r.c.HiddenAct, x) }

// mlmAct is the MLM head's activation: RoBERTa's lm_head and ELECTRA's generator apply the
// exact GELU whatever the config's hidden_act.
func (r *ref) mlmAct(x []float64) {
	if r.c.Family.Is(FamilyRoBERTa) || r.c.Family.Is(FamilyELECTRA) {
		actNamed("gelu", x)
		return
	}
	r.act(x)
}

func actNamed(name string, x []float64) {
	for i, u := range x {
		switch name {
		case "gelu":
			x[i] = 0.5 * u * (1 + math.Erf(u/math.Sqrt2))
		case "gelu_new":
			x[i] = 0.5 * u * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(u+0.044715*u*u*u)))
		case "relu":
			x[i] = math.Max(u, 0)
		case "tanh":
			x[i] = math.Tanh(u)
		case "silu":
			x[i] = u / (1 + math.Exp(-u))
		default:
			panic("ref: activation " + name)
		}
	}
}

// linear returns x[n, in] · w[out, in]ᵀ + b.
func linear64(x, w, b []float64, n, in, out int) []float64 {
	y := make([]float64, n*out)
	for i := 0; i < n; i++ {
		for o := 0; o < out; o++ {
			s := b[o]
			for k := 0; k < in; k++ {
				s += x[i*in+k] * w[o*in+k]
			}
			y[i*out+o] = s
		}
	}
	return y
}

func (r *ref) layerNorm(x []float64, name string) []float64 {
	g, b := r.p[name+".weight"], r.p[name+".bias"]
	H := len(g) // the hidden size, or ALBERT's and ELECTRA's embedding size
	y := make([]float64, len(x))
	for o := 0; o < len(x); o += H {
		row := x[o : o+H]
		var mu, v float64
		for _, u := range row {
			mu += u
		}
		mu /= float64(H)
		for _, u := range row {
			v += (u - mu) * (u - mu)
		}
		rs := 1 / math.Sqrt(v/float64(H)+r.c.LayerNormEps)
		for j, u := range row {
			y[o+j] = (u-mu)*rs*g[j] + b[j]
		}
	}
	return y
}

// crossEntropy64 is the mean of -log softmax(row)[label] over labels not IgnoreIndex.
func crossEntropy64(logits []float64, c int, labels []int) float64 {
	var s float64
	n := 0
	for i, y := range labels {
		if y == IgnoreIndex {
			continue
		}
		row := logits[i*c : (i+1)*c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		var z float64
		for _, v := range row {
			z += math.Exp(v - mx)
		}
		s += -(row[y] - mx - math.Log(z))
		n++
	}
	return s / float64(n)
}

type refOut struct {
	hidden, pooled []float64
	loss           float64
	probs          [][]float64 // per layer, the attention probabilities before dropout: [B, A, S, S]
	mlmLogits      []float64   // with MLM labels, the logits of every position: [B*S, V]
}

// forward computes the outputs and, for the labels given, BertForPreTraining's loss.
func (r *ref) forward(b Batch, mlmLabels, nspLabels []int) refOut {
	c := r.c
	B, S, H, A, I := b.B, b.S, c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize
	d := H / A
	n := B * S
	word, pos, typ := r.p["bert.embeddings.word_embeddings.weight"], r.p["bert.embeddings.position_embeddings.weight"], r.p["bert.embeddings.token_type_embeddings.weight"]
	E := c.EmbDim()
	x := make([]float64, n*E)
	count := 0 // RoBERTa: the non-pad ids of the sequence so far
	for i := 0; i < n; i++ {
		id, t := b.InputIDs[i], 0
		if b.TokenTypeIDs != nil {
			t = b.TokenTypeIDs[i]
		}
		w := word[id*E : (id+1)*E]
		if id == c.PadTokenID {
			w = r.padRow
		}
		// The position's row: BERT's and DistilBERT's i mod S; RoBERTa's pad_token_id plus the
		// count of non-pad ids so far, pad_token_id (a frozen row) for a pad id.
		pr := pos[(i%S)*E : (i%S+1)*E]
		if c.Family.Is(FamilyRoBERTa) {
			if i%S == 0 {
				count = 0
			}
			if id == c.PadTokenID {
				pr = r.posPadRow
			} else {
				count++
				pr = pos[(c.PadTokenID+count)*E : (c.PadTokenID+count+1)*E]
			}
		}
		for j := 0; j < E; j++ {
			x[i*E+j] = w[j]
			if typ != nil {
				x[i*E+j] += typ[t*E+j]
			}
			if !c.Relative() {
				x[i*E+j] += pr[j]
			}
		}
	}
	h := r.layerNorm(x, "bert.embeddings.LayerNorm")
	drop64(h, r.embKeep, r.hiddenP)
	if w := r.p["bert.encoder.embedding_hidden_mapping_in.weight"]; w != nil {
		h = linear64(h, w, r.p["bert.encoder.embedding_hidden_mapping_in.bias"], n, E, H)
	}
	var layerProbs [][]float64
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("bert.encoder.layer.%d.", c.LayerIndex(l)) // ALBERT's blocks share layers
		lin := func(x []float64, name string, in, out int) []float64 {
			return linear64(x, r.p[p+name+".weight"], r.p[p+name+".bias"], n, in, out)
		}
		q, k, v := lin(h, "attention.self.query", H, H), lin(h, "attention.self.key", H, H), lin(h, "attention.self.value", H, H)
		dist := r.p[p+"attention.self.distance_embedding.weight"] // [2P−1, d]; nil: absolute
		ctx := make([]float64, n*H)
		probs := make([]float64, B*A*S*S)
		for bi := 0; bi < B; bi++ {
			for hd := 0; hd < A; hd++ {
				bh := bi*A + hd
				for i := 0; i < S; i++ {
					sc := make([]float64, S)
					mx := math.Inf(-1)
					for j := 0; j < S; j++ {
						var s float64
						for t := 0; t < d; t++ {
							s += q[(bi*S+i)*H+hd*d+t] * k[(bi*S+j)*H+hd*d+t]
						}
						if dist != nil {
							// HF 4.x: + q_i·r[i−j] (+ k_j·r[i−j]), r[i−j] row i − j + P − 1.
							rr := dist[(i-j+c.MaxPositionEmbeddings-1)*d:]
							for t := 0; t < d; t++ {
								s += q[(bi*S+i)*H+hd*d+t] * rr[t]
								if c.PositionEmbeddingType == PositionRelativeKeyQuery {
									s += k[(bi*S+j)*H+hd*d+t] * rr[t]
								}
							}
						}
						s /= math.Sqrt(float64(d))
						if b.AttentionMask[bi*S+j] == 0 {
							s += MaskValue
						}
						sc[j] = s
						mx = math.Max(mx, s)
					}
					var z float64
					for j := range sc {
						sc[j] = math.Exp(sc[j] - mx)
						z += sc[j]
					}
					for j := range sc {
						sc[j] /= z
					}
					copy(probs[(bh*S+i)*S:], sc)
					if r.keepP != nil {
						drop64(sc, r.keepP[l][(bh*S+i)*S:], r.attnP)
					}
					for t := 0; t < d; t++ {
						var s float64
						for j := 0; j < S; j++ {
							s += sc[j] * v[(bi*S+j)*H+hd*d+t]
						}
						ctx[(bi*S+i)*H+hd*d+t] = s
					}
				}
			}
		}
		layerProbs = append(layerProbs, probs)
		proj := lin(ctx, "attention.output.dense", H, H)
		if r.keep1 != nil {
			drop64(proj, r.keep1[l], r.hiddenP)
		}
		for i := range proj {
			proj[i] += h[i]
		}
		a := r.layerNorm(proj, p+"attention.output.LayerNorm")
		inter := lin(a, "intermediate.dense", H, I)
		r.act(inter)
		f := lin(inter, "output.dense", I, H)
		if r.kp2 != nil {
			drop64(f, r.kp2[l], r.hiddenP)
		}
		for i := range f {
			f[i] += a[i]
		}
		h = r.layerNorm(f, p+"output.LayerNorm")
	}
	out := refOut{hidden: h, probs: layerProbs}
	if r.pooler {
		first := make([]float64, B*H)
		for bi := 0; bi < B; bi++ {
			copy(first[bi*H:], h[bi*S*H:bi*S*H+H])
		}
		out.pooled = linear64(first, r.p["bert.pooler.dense.weight"], r.p["bert.pooler.dense.bias"], B, H, H)
		for i, u := range out.pooled {
			out.pooled[i] = math.Tanh(u)
		}
	}
	if mlmLabels != nil {
		t := linear64(h, r.p["cls.predictions.transform.dense.weight"], r.p["cls.predictions.transform.dense.bias"], n, H, E)
		r.mlmAct(t)
		t = r.layerNorm(t, "cls.predictions.transform.LayerNorm")
		logits := linear64(t, r.p[decoderName], r.p["cls.predictions.bias"], n, E, c.VocabSize)
		out.loss += crossEntropy64(logits, c.VocabSize, mlmLabels)
		out.mlmLogits = logits
	}
	if nspLabels != nil {
		logits := linear64(out.pooled, r.p["cls.seq_relationship.weight"], r.p["cls.seq_relationship.bias"], B, H, 2)
		out.loss += crossEntropy64(logits, 2, nspLabels)
	}
	return out
}

// gradCheckModel is a tiny random model whose every parameter, biases and LayerNorm included,
// is far from its initial value, so that every term of the gradient shows.
func gradCheckModel(t *testing.T, act string, tied bool, heads Heads) *Model {
	t.Helper()
	return gradCheckModelPos(t, act, tied, heads, PositionAbsolute)
}

// gradCheckModelPos is gradCheckModel with the given position_embedding_type.
func gradCheckModelPos(t *testing.T, act string, tied bool, heads Heads, positions string) *Model {
	t.Helper()
	c := DefaultConfig()
	c.PositionEmbeddingType = positions
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 16, 8, 2, 2, 12
	c.MaxPositionEmbeddings, c.TypeVocabSize, c.HiddenAct, c.TieWordEmbeddings = 8, 2, act, tied
	c.HiddenDropoutProb, c.AttentionProbsDropoutProb = 0.2, 0.3
	c.InitializerRange = 0.5
	m, err := NewRandom(c, heads, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range m.Params() {
		if len(p.T.Shape) == 1 {
			base := 0.0
			if p.T.Len() == c.HiddenSize && p.Name[len(p.Name)-7:] == ".weight" {
				base = 1 // LayerNorm weights
			}
			for i := range p.T.Data {
				p.T.Data[i] = float32(base + 0.3*rng.NormFloat64())
			}
		}
	}
	for i := range m.WordEmb.Row(c.PadTokenID) {
		m.WordEmb.Row(c.PadTokenID)[i] = float32(0.5 * rng.NormFloat64())
	}
	return m
}

// gradCheckFamilyModel is the model of gradCheckModel made a member of family fam: the same
// weights, DistilBERT without token types, RoBERTa with one token type, pad_token_id 1 and
// position ids counted from 2.
func gradCheckFamilyModel(t *testing.T, base *Model, fam Family) *Model {
	t.Helper()
	c := base.Config
	c.Family = fam
	switch fam {
	case FamilyDistilBERT:
		c.TypeVocabSize = 0
	case FamilyRoBERTa:
		c.TypeVocabSize, c.PadTokenID = 1, 1
	case FamilyALBERT:
		// Embeddings of their own size, projected; the two blocks share one layer.
		c.EmbeddingSize, c.NumHiddenGroups = 6, 1
	case FamilyELECTRA:
		c.EmbeddingSize = 6
	}
	heads := Heads{Pooler: base.Pooler != nil, MLM: base.MLM != nil, NSP: base.NSP != nil}
	m, err := NewModel(c, heads)
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]*Param{}
	for _, p := range base.Params() {
		src[p.Name] = &p
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, p := range m.Params() {
		if q, ok := src[p.Name]; ok && tensor.SameShape(q.T.Shape, p.T.Shape) {
			copy(p.T.Data, q.T.Data)
			continue
		}
		// A tensor of another shape than BERT's (ALBERT's and ELECTRA's embeddings, their
		// projection, the MLM head's E side): random, far from an initialisation.
		for i := range p.T.Data {
			p.T.Data[i] = float32(0.5 * rng.NormFloat64())
		}
		if strings.HasSuffix(p.Name, "LayerNorm.weight") {
			for i := range p.T.Data {
				p.T.Data[i] += 1
			}
		}
	}
	return m
}

// gradCheckBatch has a [PAD] id at an attended position (sequence 0) and padding with an MLM
// label on a padded position (sequence 1).
func gradCheckBatch() (Batch, []int, []int) {
	b := Batch{B: 2, S: 5,
		InputIDs:      []int{1, 5, 0, 7, 2, 1, 9, 3, 0, 0},
		TokenTypeIDs:  []int{0, 0, 1, 1, 1, 0, 0, 1, 0, 0},
		AttentionMask: []int{1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
	}
	mlm := []int{-100, 4, -100, 11, -100, -100, -100, 6, -100, 8}
	return b, mlm, []int{0, 1}
}

// fdCoords picks the coordinates of a parameter to check: a few at random, plus for the word
// embeddings one of the padding row and some of rows the batch looks up.
func fdCoords(name string, shape []int, b Batch, pad int, rng *rand.Rand) []int {
	n := tensor.NumElements(shape)
	var cs []int
	for range 4 {
		cs = append(cs, rng.IntN(n))
	}
	if name == "bert.embeddings.word_embeddings.weight" || name == decoderName {
		H := shape[1]
		cs = append(cs, pad*H+rng.IntN(H), b.InputIDs[1]*H+rng.IntN(H), b.InputIDs[6]*H+rng.IntN(H))
	}
	if name == "bert.embeddings.position_embeddings.weight" && pad < shape[0] {
		H := shape[1]
		cs = append(cs, pad*H+rng.IntN(H), (pad+2)*H+rng.IntN(H))
	}
	if strings.HasSuffix(name, "distance_embedding.weight") {
		// Rows of offsets the batch uses (P−S to P+S−2), the extremes included, and one it
		// does not use.
		P, d := (shape[0]+1)/2, shape[1]
		for _, row := range []int{P - 1, P - 2, P, P - b.S, P + b.S - 2, 0} {
			cs = append(cs, row*d+rng.IntN(d))
		}
	}
	return cs
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	tests := []struct {
		name     string
		act      string
		tied     bool
		heads    Heads
		dropout  bool
		mlm, nsp bool // pre-training losses; neither: a linear function of the outputs via Backward
		dHidden  bool
		dPooled  bool
		pos      string // position_embedding_type; "": absolute
		family   Family // "": BERT
	}{
		{name: "pre-training gelu", act: "gelu", tied: true, heads: AllHeads, mlm: true, nsp: true},
		{name: "pre-training gelu dropout", act: "gelu", tied: true, heads: AllHeads, dropout: true, mlm: true, nsp: true},
		{name: "pre-training gelu_new untied dropout", act: "gelu_new", heads: AllHeads, dropout: true, mlm: true, nsp: true},
		{name: "MLM only relu dropout", act: "relu", tied: true, heads: AllHeads, dropout: true, mlm: true},
		{name: "NSP only silu", act: "silu", tied: true, heads: AllHeads, nsp: true},
		{name: "MLM tanh dropout", act: "tanh", tied: true, heads: Heads{MLM: true}, dropout: true, mlm: true},
		{name: "encoder d hidden and d pooled dropout", act: "gelu", heads: Heads{Pooler: true}, dropout: true, dHidden: true, dPooled: true},
		{name: "encoder d pooled", act: "gelu", heads: Heads{Pooler: true}, dPooled: true},
		{name: "encoder d hidden, no pooler", act: "gelu", heads: Heads{}, dropout: true, dHidden: true},
		{name: "pre-training relative_key", act: "gelu", tied: true, heads: AllHeads, mlm: true, nsp: true, pos: PositionRelativeKey},
		{name: "pre-training relative_key dropout", act: "gelu", tied: true, heads: AllHeads, dropout: true, mlm: true, nsp: true, pos: PositionRelativeKey},
		{name: "pre-training relative_key_query dropout", act: "gelu_new", heads: AllHeads, dropout: true, mlm: true, nsp: true, pos: PositionRelativeKeyQuery},
		{name: "encoder d hidden relative_key_query", act: "gelu", heads: Heads{Pooler: true}, dHidden: true, dPooled: true, pos: PositionRelativeKeyQuery},
		{name: "distilbert MLM dropout", act: "gelu", tied: true, heads: Heads{MLM: true}, dropout: true, mlm: true, family: FamilyDistilBERT},
		{name: "distilbert encoder d hidden", act: "relu", heads: Heads{}, dHidden: true, family: FamilyDistilBERT},
		{name: "roberta MLM gelu_new dropout", act: "gelu_new", tied: true, heads: Heads{MLM: true}, dropout: true, mlm: true, family: FamilyRoBERTa},
		{name: "roberta encoder d pooled untied", act: "gelu", heads: Heads{Pooler: true, MLM: true}, dHidden: true, dPooled: true, family: FamilyRoBERTa},
		{name: "albert pre-training (SOP) gelu_new dropout", act: "gelu_new", tied: true, heads: AllHeads, dropout: true, mlm: true, nsp: true, family: FamilyALBERT},
		{name: "albert untied MLM", act: "gelu", heads: Heads{MLM: true}, mlm: true, family: FamilyALBERT},
		{name: "albert encoder d hidden and d pooled", act: "relu", heads: Heads{Pooler: true}, dropout: true, dHidden: true, dPooled: true, family: FamilyALBERT},
		{name: "electra generator MLM gelu_new dropout", act: "gelu_new", tied: true, heads: Heads{MLM: true}, dropout: true, mlm: true, family: FamilyELECTRA},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pos := tc.pos
			if pos == "" {
				pos = PositionAbsolute
			}
			m := gradCheckModelPos(t, tc.act, tc.tied, tc.heads, pos)
			b, mlm, nsp := gradCheckBatch()
			if tc.family != "" {
				m = gradCheckFamilyModel(t, m, tc.family)
				b.TokenTypeIDs = nil
			}
			if !tc.mlm {
				mlm = nil
			}
			if !tc.nsp {
				nsp = nil
			}
			opt := TrainOptions{Dropout: tc.dropout, Seed: uint64(100 + ti)}
			a, err := m.ForwardTrain(b, opt)
			if err != nil {
				t.Fatal(err)
			}
			r := newRef(m)
			if tc.dropout {
				r.useMasks(a)
				if a.emb.keep == nil || a.layers[0].keepP == nil {
					t.Fatal("dropout on, but no masks")
				}
			}
			g := m.NewGrads()
			var loss func(o refOut) float64
			var got float64
			if tc.mlm || tc.nsp {
				l, err := m.ForwardBackward(b, mlm, nsp, opt, g)
				if err != nil {
					t.Fatal(err)
				}
				got = l.Total
				loss = func(o refOut) float64 { return o.loss }
			} else {
				// loss = sum(wh ⊙ hidden) + sum(wp ⊙ pooled) with fixed random weights.
				rng := rand.New(rand.NewPCG(9, 9))
				var dh, dp *tensor.Tensor
				if tc.dHidden {
					dh = tensor.New(a.Hidden.Shape...)
					for i := range dh.Data {
						dh.Data[i] = float32(rng.NormFloat64())
					}
				}
				if tc.dPooled {
					dp = tensor.New(a.Pooled.Shape...)
					for i := range dp.Data {
						dp.Data[i] = float32(rng.NormFloat64())
					}
				}
				if err := m.Backward(a, dh, dp, g); err != nil {
					t.Fatal(err)
				}
				dot := func(w *tensor.Tensor, x []float64) float64 {
					var s float64
					if w != nil {
						for i, v := range w.Data {
							s += float64(v) * x[i]
						}
					}
					return s
				}
				loss = func(o refOut) float64 { return dot(dh, o.hidden) + dot(dp, o.pooled) }
				got = loss(refOut{hidden: f64(a.Hidden.Data), pooled: f64(a.Pooled)})
			}
			want := loss(r.forward(b, mlm, nsp))
			if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("loss %.9g, float64 reference %.9g", got, want)
			}

			grads := map[string]*tensor.Tensor{}
			for _, p := range g.Params() {
				grads[p.Name] = p.T
			}
			if m.MLM != nil && m.MLM.Decoder == m.WordEmb {
				grads[decoderName] = grads["bert.embeddings.word_embeddings.weight"]
			}
			const h = 1e-5
			rng := rand.New(rand.NewPCG(uint64(ti), 1))
			var worst float64
			checked := 0
			for _, p := range m.Params() {
				vals := r.p[p.Name]
				coords := fdCoords(p.Name, p.T.Shape, b, m.Config.PadTokenID, rng)
				w, n := checkFD(t, p.Name, vals, coords, h, grads[p.Name].Data, func() float64 { return loss(r.forward(b, mlm, nsp)) })
				worst, checked = math.Max(worst, w), checked+n
			}
			t.Logf("%d coordinates; worst |grad - fd| / (1e-3 + |fd|) = %.3g", checked, worst)
		})
	}
}

func f64(x any) []float64 {
	var d []float32
	switch v := x.(type) {
	case []float32:
		d = v
	case *tensor.Tensor:
		if v == nil {
			return nil
		}
		d = v.Data
	}
	out := make([]float64, len(d))
	for i, u := range d {
		out[i] = float64(u)
	}
	return out
}

// checkFD compares the analytic gradient an of a parameter whose float64 reference values are
// vals with central differences (step h) of loss at coords; it returns the worst
// |grad - fd| / (1e-3 + |fd|) and the number of coordinates checked.
func checkFD(t *testing.T, name string, vals []float64, coords []int, h float64, an []float32, loss func() float64) (float64, int) {
	t.Helper()
	var worst float64
	for _, i := range coords {
		orig := vals[i]
		vals[i] = orig + h
		lp := loss()
		vals[i] = orig - h
		lm := loss()
		vals[i] = orig
		fd := (lp - lm) / (2 * h)
		g := float64(an[i])
		diff := math.Abs(g - fd)
		worst = math.Max(worst, diff/(1e-3+math.Abs(fd)))
		if diff > 2e-5+1e-3*math.Abs(fd) {
			t.Errorf("%s[%d]: gradient %.7g, finite difference %.7g", name, i, g, fd)
		}
	}
	return worst, len(coords)
}
