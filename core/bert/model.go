package bert

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/bertlab/bertlab/core/tensor"
)

// Linear is a torch.nn.Linear: y = x·Wᵀ + B.
type Linear struct {
	W *tensor.Tensor // [out, in]
	B *tensor.Tensor // [out]
	// packed is W packed once for eval passes (Model.PackWeights); nil otherwise.
	packed *tensor.PackedB
}

// apply computes y[rows, out] = x[rows, in]·Wᵀ + B; an eval pass uses the packed weight when
// there is one (the same bits: tensor.GemmPackedB), training the raw one.
func (l *Linear) apply(y, x []float32, rows, in, out int, eval bool) {
	if eval && l.packed != nil {
		tensor.LinearPacked(y, x, l.packed, l.B.Data, rows)
		return
	}
	tensor.Linear(y, x, l.W.Data, l.B.Data, rows, in, out)
}

// LayerNorm holds the affine parameters of a torch.nn.LayerNorm.
type LayerNorm struct {
	W *tensor.Tensor // [H] ("weight", "gamma" in TF-era files)
	B *tensor.Tensor // [H] ("bias", "beta")
}

// Layer is one transformer block (HF BertLayer): self-attention, output projection with
// residual and LayerNorm, then the GELU feed-forward with residual and LayerNorm.
type Layer struct {
	Query, Key, Value Linear    // attention.self.{query,key,value}: [H, H]
	AttnOut           Linear    // attention.output.dense: [H, H]
	AttnLN            LayerNorm // attention.output.LayerNorm
	Inter             Linear    // intermediate.dense: [I, H]
	Out               Linear    // output.dense: [H, I]
	OutLN             LayerNorm // output.LayerNorm

	// Distance is attention.self.distance_embedding.weight of relative positions, [2P−1, d]
	// (P positions, d the head size), shared by the layer's heads; nil with absolute
	// positions. Row l − j + P − 1 is r[l, j], the embedding of query l's offset from key j:
	// the raw score of query l and key j is q_l·k_j + q_l·r[l, j] (+ k_j·r[l, j] for
	// relative_key_query), as HF 4.x's BertSelfAttention computes it.
	Distance *tensor.Tensor
}

// MLMHead is HF's BertLMPredictionHead (cls.predictions): dense -> act -> LayerNorm -> decoder.
// E is the embedding width (Config.EmbDim): H but for ALBERT.
type MLMHead struct {
	Transform Linear         // cls.predictions.transform.dense: [E, H]
	LN        LayerNorm      // cls.predictions.transform.LayerNorm: [E]
	Decoder   *tensor.Tensor // [V, E]; the word embeddings themselves when tied
	Bias      *tensor.Tensor // cls.predictions.bias: [V]
	// decPacked is Decoder packed once for eval passes (Model.PackWeights); nil otherwise.
	decPacked *tensor.PackedB
}

// RTDHead is ELECTRA's replaced-token detection head (ElectraDiscriminatorPredictions): one
// logit a token, act(h·Denseᵀ + b)·Outᵀ + b with the config's hidden_act; positive means
// "replaced".
type RTDHead struct {
	Dense Linear // discriminator_predictions.dense: [H, H]
	Out   Linear // discriminator_predictions.dense_prediction: [1, H]
}

// Model is BERT with HF BertForPreTraining's parameters. Pooler, MLM and NSP are nil when the
// checkpoint has no such head (a BertModel or BertForMaskedLM checkpoint).
type Model struct {
	Config Config

	WordEmb *tensor.Tensor // bert.embeddings.word_embeddings.weight: [V, E] (E = Config.EmbDim(), H but for ALBERT)
	PosEmb  *tensor.Tensor // bert.embeddings.position_embeddings.weight: [P, E]
	TypeEmb *tensor.Tensor // bert.embeddings.token_type_embeddings.weight: [T, E]; nil without token types (DistilBERT)
	EmbLN   LayerNorm      // bert.embeddings.LayerNorm: [E]
	// EmbProj is ALBERT's embedding_hidden_mapping_in (bert.encoder.embedding_hidden_mapping_in):
	// [H, E]; nil when the embeddings are the hidden size (Config.HasEmbProj).
	EmbProj *Linear

	// RelEmb is DeBERTa's encoder.rel_embeddings.weight: [2·span, H]; RelLN its LayerNorm
	// (encoder.LayerNorm, with norm_rel_ebd "layer_norm"). Both nil for the other families.
	RelEmb *tensor.Tensor
	RelLN  *LayerNorm

	// Layers are the distinct layers: one per block, or for ALBERT one per group, block l
	// running Layers[Config.LayerIndex(l)] (Block).
	Layers []Layer

	Pooler *Linear  // bert.pooler.dense: [H, H]
	MLM    *MLMHead // cls.predictions
	NSP    *Linear  // cls.seq_relationship: [2, H]
	RTD    *RTDHead // ELECTRA's discriminator_predictions

	// inPlace is set by PackWeightsInPlace; nil for a model that keeps its raw weights.
	inPlace *inPlace
}

// inPlace records that PackWeightsInPlace released the raw weights of the packed matrices,
// and serialises their restoration (EnsureRaw).
type inPlace struct {
	mu       sync.Mutex
	released atomic.Bool
}

// Param is one named parameter tensor.
type Param struct {
	Name string
	T    *tensor.Tensor
}

// Heads selects which heads a new model has. RTD is ELECTRA's discriminator head.
type Heads struct{ Pooler, MLM, NSP, RTD bool }

// AllHeads is BertForPreTraining's set of heads.
var AllHeads = Heads{Pooler: true, MLM: true, NSP: true}

// NewModel allocates a model with zero parameters (LayerNorm weights 1) for c, with the given heads.
func NewModel(c Config, heads Heads) (*Model, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	H, I, E := c.HiddenSize, c.IntermediateSize, c.EmbDim()
	lin := func(out, in int) Linear { return Linear{W: tensor.New(out, in), B: tensor.New(out)} }
	lnOf := func(H int) LayerNorm {
		w := tensor.New(H)
		for i := range w.Data {
			w.Data[i] = 1
		}
		return LayerNorm{W: w, B: tensor.New(H)}
	}
	ln := func() LayerNorm { return lnOf(H) }
	m := &Model{
		Config:  c,
		WordEmb: tensor.New(c.VocabSize, E),
		EmbLN:   lnOf(E),
		Layers:  make([]Layer, c.NumLayers()),
	}
	if !c.NoPositionEmbeddings {
		m.PosEmb = tensor.New(c.MaxPositionEmbeddings, E)
	}
	if d := c.Disentangled; d != nil && d.Relative {
		m.RelEmb = tensor.New(2*d.Span(), H)
		if d.NormRelEmb {
			l := ln()
			m.RelLN = &l
		}
	}
	if c.HasTokenTypes() {
		m.TypeEmb = tensor.New(c.TypeVocabSize, E)
	}
	if c.HasEmbProj() {
		p := lin(H, E)
		m.EmbProj = &p
	}
	for l := range m.Layers {
		m.Layers[l] = Layer{
			Query: lin(H, H), Key: lin(H, H), Value: lin(H, H),
			AttnOut: lin(H, H), AttnLN: ln(),
			Inter: lin(I, H), Out: lin(H, I), OutLN: ln(),
		}
		if c.Relative() {
			m.Layers[l].Distance = tensor.New(2*c.MaxPositionEmbeddings-1, c.HeadDim())
		}
	}
	if heads.Pooler {
		p := lin(H, H)
		m.Pooler = &p
	}
	if heads.MLM {
		m.MLM = &MLMHead{Transform: lin(E, H), LN: lnOf(E), Bias: tensor.New(c.VocabSize)}
		if c.TieWordEmbeddings {
			m.MLM.Decoder = m.WordEmb
		} else {
			m.MLM.Decoder = tensor.New(c.VocabSize, E)
		}
	}
	if heads.NSP {
		p := lin(2, H)
		m.NSP = &p
	}
	if heads.RTD {
		m.RTD = &RTDHead{Dense: lin(H, H), Out: lin(1, H)}
	}
	return m, nil
}

// NewRandom returns a model initialised as HF's BertPreTrainedModel._init_weights does:
// weights of linear and embedding layers (the distance embeddings of relative positions
// included) from N(0, initializer_range²), biases 0, LayerNorm 1 and 0, and the padding row of
// the word embeddings 0 (and of RoBERTa's position embeddings; DistilBERT's sinusoidal
// positions are DistilBERTSinusoids). The same seed gives the same weights.
func NewRandom(c Config, heads Heads, seed uint64) (*Model, error) {
	m, err := NewModel(c, heads)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x62657274))
	std := c.InitializerRange
	for _, p := range m.Params() {
		if p.T.Len() == 0 || len(p.T.Shape) != 2 {
			continue // biases and LayerNorm keep their 0 / 1
		}
		for i := range p.T.Data {
			p.T.Data[i] = float32(rng.NormFloat64() * std)
		}
	}
	clear(m.WordEmb.Row(c.PadTokenID))
	switch {
	case c.SinusoidalPosEmbds:
		DistilBERTSinusoids(m.PosEmb.Data, c.MaxPositionEmbeddings, c.HiddenSize)
	case c.Family.Is(FamilyRoBERTa):
		clear(m.PosEmb.Row(c.PadTokenID)) // RoBERTa's position embeddings have padding_idx too
	}
	return m, nil
}

// SinusoidalPositions overwrites the position embeddings [P, H] with the sinusoids of
// Vaswani et al. (2017): row p, columns 2i and 2i+1 hold sin and cos of p / 10000^(2i/H), scaled
// so that their root mean square is initializer_range, the scale of BERT's N(0, initializer_range²)
// rows. The model stays BERT's (learned absolute positions, trained as any other weight); only
// their starting point has structure: neighbouring positions start similar, and a fixed linear
// map relates every position to the one before it. A random start gives attention nothing to
// tell neighbours apart by, and small models trained briefly stay on the plateau where they read
// their context as a bag of words (scripts/PRETRAIN.md).
func (m *Model) SinusoidalPositions() {
	H := m.Config.EmbDim()
	scale := m.Config.InitializerRange * math.Sqrt2
	for pos := range m.Config.MaxPositionEmbeddings {
		row := m.PosEmb.Row(pos)
		for i := 0; i+1 < H; i += 2 {
			a := float64(pos) * math.Pow(10000, -float64(i)/float64(H))
			row[i] = float32(scale * math.Sin(a))
			row[i+1] = float32(scale * math.Cos(a))
		}
		if H%2 == 1 {
			row[H-1] = 0
		}
	}
}

// Params lists every unique parameter with its HF BertForPreTraining name, in the order HF's
// state_dict lists them. A tied decoder is not listed (it is the word embeddings).
func (m *Model) Params() []Param {
	m.EnsureRaw()
	return m.params()
}

// params is Params without EnsureRaw: the tensors of a model packed in place may hold no data.
func (m *Model) params() []Param {
	var ps []Param
	add := func(name string, t *tensor.Tensor) { ps = append(ps, Param{name, t}) }
	addLin := func(prefix string, l Linear) {
		add(prefix+".weight", l.W)
		add(prefix+".bias", l.B)
	}
	addLN := func(prefix string, l LayerNorm) {
		add(prefix+".weight", l.W)
		add(prefix+".bias", l.B)
	}
	add("bert.embeddings.word_embeddings.weight", m.WordEmb)
	if m.PosEmb != nil {
		add("bert.embeddings.position_embeddings.weight", m.PosEmb)
	}
	if m.TypeEmb != nil {
		add("bert.embeddings.token_type_embeddings.weight", m.TypeEmb)
	}
	addLN("bert.embeddings.LayerNorm", m.EmbLN)
	if m.EmbProj != nil {
		addLin("bert.encoder.embedding_hidden_mapping_in", *m.EmbProj)
	}
	for i, l := range m.Layers {
		p := fmt.Sprintf("bert.encoder.layer.%d.", i)
		addLin(p+"attention.self.query", l.Query)
		addLin(p+"attention.self.key", l.Key)
		addLin(p+"attention.self.value", l.Value)
		if l.Distance != nil {
			add(p+"attention.self.distance_embedding.weight", l.Distance)
		}
		addLin(p+"attention.output.dense", l.AttnOut)
		addLN(p+"attention.output.LayerNorm", l.AttnLN)
		addLin(p+"intermediate.dense", l.Inter)
		addLin(p+"output.dense", l.Out)
		addLN(p+"output.LayerNorm", l.OutLN)
	}
	if m.RelEmb != nil {
		add("bert.encoder.rel_embeddings.weight", m.RelEmb)
	}
	if m.RelLN != nil {
		addLN("bert.encoder.LayerNorm", *m.RelLN)
	}
	if m.Pooler != nil {
		addLin("bert.pooler.dense", *m.Pooler)
	}
	if m.MLM != nil {
		add("cls.predictions.bias", m.MLM.Bias)
		addLin("cls.predictions.transform.dense", m.MLM.Transform)
		addLN("cls.predictions.transform.LayerNorm", m.MLM.LN)
		if m.MLM.Decoder != m.WordEmb {
			add("cls.predictions.decoder.weight", m.MLM.Decoder)
		}
	}
	if m.NSP != nil {
		addLin("cls.seq_relationship", *m.NSP)
	}
	if m.RTD != nil {
		addLin("discriminator_predictions.dense", m.RTD.Dense)
		addLin("discriminator_predictions.dense_prediction", m.RTD.Out)
	}
	return ps
}

// NumParams is the number of unique parameters (a tied decoder counted once), as HF's
// model.num_parameters() reports.
func (m *Model) NumParams() int64 {
	var n int64
	for _, p := range m.params() {
		n += int64(tensor.NumElements(p.T.Shape)) // by shape: a matrix packed in place holds no data
	}
	return n
}

// HeadNames lists the heads the model has ("pooler", "mlm", "nsp", "rtd").
func (m *Model) HeadNames() []string {
	var h []string
	if m.Pooler != nil {
		h = append(h, "pooler")
	}
	if m.MLM != nil {
		h = append(h, "mlm")
	}
	if m.NSP != nil {
		h = append(h, "nsp")
	}
	if m.RTD != nil {
		h = append(h, "rtd")
	}
	return h
}

// ParamCount is the number of unique parameters a model of this config with these heads has,
// computed without allocating it (HF's num_parameters(); a tied decoder counted once).
func (c Config) ParamCount(heads Heads) int64 {
	V, P, T := int64(c.VocabSize), int64(c.MaxPositionEmbeddings), int64(max(c.TypeVocabSize, 0))
	H, I, L, E := int64(c.HiddenSize), int64(c.IntermediateSize), int64(c.NumLayers()), int64(c.EmbDim())
	lin := func(out, in int64) int64 { return out*in + out }
	if c.NoPositionEmbeddings {
		P = 0
	}
	n := (V+P+T)*E + 2*E
	if d := c.Disentangled; d != nil && d.Relative {
		n += int64(2*d.Span()) * H
		if d.NormRelEmb {
			n += 2 * H
		}
	}
	if c.HasEmbProj() {
		n += lin(H, E)
	}
	n += L * (4*lin(H, H) + 2*H + lin(I, H) + lin(H, I) + 2*H)
	if c.Relative() {
		n += L * (2*P - 1) * int64(c.HeadDim())
	}
	if heads.Pooler {
		n += lin(H, H)
	}
	if heads.MLM {
		n += lin(E, H) + 2*E + V
		if !c.TieWordEmbeddings {
			n += V * E
		}
	}
	if heads.NSP {
		n += lin(2, H)
	}
	if heads.RTD {
		n += lin(H, H) + lin(1, H)
	}
	return n
}

// PackWeights packs the weight of every encoder linear layer, of the MLM transform and of the
// MLM decoder once (tensor.PackTransB), for the eval passes (Forward) to use instead of packing
// them on every call: the same outputs bit for bit, faster for short sequences and for a few
// masked rows through the decoder. The raw weights stay (training, gradients, attributions and
// saving read them), so those matrices take twice the memory; PackWeightsInPlace does not.
// Training does not update the packed copies: train refuses a packed model (Packed), and a
// model whose weights change otherwise must be packed again.
func (m *Model) PackWeights() {
	m.pack(false)
}

// PackWeightsInPlace packs the same matrices as PackWeights and releases their raw layout, so
// that a model which only infers holds each of them once (a tied decoder stays raw as well,
// since the embedding lookup reads it). Everything that reads the raw layout (the training and
// backward passes, Params and so saving and copying, EnsureRaw) first unpacks it again,
// exactly (tensor.PackedB.Unpack), and from then on the model holds both layouts, as after
// PackWeights. It runs a garbage collection after each layer, so that the packed copies reuse
// the memory the raw ones leave rather than add to it: the peak stays about one layer above
// the model's size.
func (m *Model) PackWeightsInPlace() {
	m.pack(true)
}

func (m *Model) pack(release bool) {
	if release && m.inPlace == nil {
		m.inPlace = &inPlace{}
	}
	var packed []*tensor.PackedB
	floats := 0
	pack := func(w *tensor.Tensor, release bool) *tensor.PackedB {
		pb := tensor.PackTransB(w.Data, w.Shape[0], w.Shape[1])
		if release {
			w.Data = nil
		}
		packed = append(packed, pb)
		floats += pb.N * pb.K
		return pb
	}
	for i := range m.Layers {
		L := &m.Layers[i]
		for _, l := range L.linears() {
			l.packed = pack(l.W, release)
		}
		if release {
			runtime.GC()
		}
	}
	if m.MLM != nil {
		m.MLM.Transform.packed = pack(m.MLM.Transform.W, release)
		// A tied decoder is the word embeddings, which the lookup reads: it stays raw.
		m.MLM.decPacked = pack(m.MLM.Decoder, release && m.MLM.Decoder != m.WordEmb)
	}
	// More weights than the caches hold come from memory at each pass: the GEMM then asks for
	// them ahead.
	for _, pb := range packed {
		pb.SetStreamed(floats*4 > streamedBytes)
	}
	if release {
		m.inPlace.released.Store(true)
	}
}

// streamedBytes is the size of packed weights from which PackWeights marks them streamed
// (tensor.PackedB.SetStreamed): the 32 MiB of L3 of the machines this was measured on.
// BERT-Base (about 420 MB packed) is over, BERT-Tiny (17 MB with its decoder) under, Mini
// (44 MB) over, where only its decoder is large enough to be asked for ahead.
const streamedBytes = 32 << 20

// linears lists the layer's linear layers that PackWeights packs.
func (L *Layer) linears() []*Linear {
	return []*Linear{&L.Query, &L.Key, &L.Value, &L.AttnOut, &L.Inter, &L.Out}
}

// RawReleased reports whether PackWeightsInPlace released raw weights that EnsureRaw has not
// restored yet.
func (m *Model) RawReleased() bool {
	return m.inPlace != nil && m.inPlace.released.Load()
}

// EnsureRaw gives back the raw layout of the weights that PackWeightsInPlace released
// (unpacking them from their packed copies, which stay); it does nothing to any other model.
// It is safe to call from several goroutines, and beside eval passes (which read the packed
// copies only). Every method of Model that reads raw weights calls it first; code outside the
// package that reads a Linear's W of an engine's model must call it too.
func (m *Model) EnsureRaw() {
	ip := m.inPlace
	if ip == nil || !ip.released.Load() {
		return
	}
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if !ip.released.Load() {
		return
	}
	unpack := func(w *tensor.Tensor, pb *tensor.PackedB) {
		if w.Data == nil {
			w.Data = make([]float32, pb.N*pb.K)
			pb.Unpack(w.Data)
		}
	}
	for i := range m.Layers {
		for _, l := range m.Layers[i].linears() {
			unpack(l.W, l.packed)
		}
	}
	if m.MLM != nil {
		unpack(m.MLM.Transform.W, m.MLM.Transform.packed)
		unpack(m.MLM.Decoder, m.MLM.decPacked)
	}
	ip.released.Store(false)
}

// NumBlocks is the number of blocks the encoder runs: num_hidden_layers (more than len(Layers)
// when blocks share layers).
func (m *Model) NumBlocks() int {
	if m.Config.SharesLayers() {
		return m.Config.NumHiddenLayers
	}
	return len(m.Layers)
}

// Block is the layer that block l runs: Layers[l], or for ALBERT its group's layer.
func (m *Model) Block(l int) *Layer { return &m.Layers[m.Config.LayerIndex(l)] }

// Packed reports whether PackWeights packed the model's weights.
func (m *Model) Packed() bool {
	return len(m.Layers) > 0 && m.Layers[0].Query.packed != nil
}
