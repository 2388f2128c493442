package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// Explainer answers explanation requests about text: it encodes the text, resolves the
// target and names tokens. The command line and the HTTP API use it alike.
type Explainer struct {
	Model Model
	Tok   tokenizer.Encoder
}

// Request is one question about a text. Zero fields take the defaults.
type Request struct {
	Text string `json:"text"`
	Pair string `json:"pair,omitempty"` // optional second segment
	// Target: "" (the model's top prediction at the first [MASK]; a classifier's top class;
	// IsNext for a pair without a [MASK]), "WORD" (that word's logit at the first [MASK]),
	// "isnext", "class:N" (N a class id or label) or "tag:I:N" (tag N at token I).
	Target   string `json:"target,omitempty"`
	Method   string `json:"method,omitempty"`   // MethodGXI (default) or MethodIG
	Steps    int    `json:"steps,omitempty"`    // integrated gradients' steps: default 64, at most MaxSteps
	Baseline string `json:"baseline,omitempty"` // "mask" (default) or "pad"
	TopK     int    `json:"top_k,omitempty"`    // predictions listed by the lens and ablation: default 5
	Ablate   []Head `json:"ablate,omitempty"`   // heads switched off by Ablation
}

// Defaults of a Request.
const (
	DefaultSteps = 64
	DefaultTopK  = 5
)

// Report is what the Explainer answers; each part is present when asked for.
type Report struct {
	Tokens      []string     `json:"tokens"`
	Target      *TargetInfo  `json:"target,omitempty"`
	Attribution *Attribution `json:"attribution,omitempty"`
	Lens        *Lens        `json:"lens,omitempty"`
	Ablation    *Ablation    `json:"ablation,omitempty"`
	Importance  *Importance  `json:"importance,omitempty"`
}

// TargetInfo is the resolved target with a readable name.
type TargetInfo struct {
	Target
	Label string `json:"label"` // e.g. `"paris" at token 6`, "IsNext", "class 1 (positive)"
}

// encoded is a request's text, encoded.
type encoded struct {
	in     Input
	tokens []string
	masks  []int // positions of [MASK]
}

func (e *Explainer) encode(r Request) (*encoded, error) {
	if tokenizer.IsNil(e.Tok) {
		return nil, fmt.Errorf("explain: no tokenizer (vocab.txt)")
	}
	if strings.TrimSpace(r.Text) == "" {
		return nil, fmt.Errorf("explain: empty text")
	}
	var enc tokenizer.Encoding
	var err error
	maxLen := e.Model.Bert.Config.MaxPositionEmbeddings
	var pair *string
	if r.Pair != "" {
		pair = &r.Pair
	}
	// pipeline.Encode reads the page's [MASK] as the model's own mask token (RoBERTa's <mask>).
	enc, err = pipeline.Encode(e.Tok, r.Text, pair, maxLen)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	x := &encoded{in: Input{IDs: enc.IDs, TypeIDs: enc.TypeIDs}, tokens: enc.Tokens}
	for i, id := range enc.IDs {
		if id == e.Tok.MaskID() {
			x.masks = append(x.masks, i)
		}
	}
	return x, nil
}

// resolve turns the request's target into a Target for the encoded text.
func (e *Explainer) resolve(r Request, x *encoded) (*TargetInfo, error) {
	m := e.Model
	s := strings.TrimSpace(r.Target)
	labels := func() []string {
		if m.Task == nil {
			return nil
		}
		return m.Task.Labels
	}
	index := func(v string, what string) (int, error) {
		if i, err := strconv.Atoi(v); err == nil {
			return i, nil
		}
		if i := slices.Index(labels(), v); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("explain: %s %q is neither a number nor a label of %q", what, v, labels())
	}
	var t Target
	switch {
	case s == "isnext":
		t = Target{Kind: IsNext}
	case strings.HasPrefix(s, "class:"):
		i, err := index(strings.TrimPrefix(s, "class:"), "class")
		if err != nil {
			return nil, err
		}
		t = Target{Kind: Class, Index: i}
	case strings.HasPrefix(s, "tag:"):
		p, n, ok := strings.Cut(strings.TrimPrefix(s, "tag:"), ":")
		pos, err := strconv.Atoi(p)
		if !ok || err != nil {
			return nil, fmt.Errorf("explain: target %q: want tag:TOKEN:TAG, e.g. tag:3:1", s)
		}
		i, err := index(n, "tag")
		if err != nil {
			return nil, err
		}
		t = Target{Kind: Tag, Position: pos, Index: i}
	case s == "":
		var err error
		if t, err = e.defaultTarget(x); err != nil {
			return nil, err
		}
	default: // a word at the first [MASK]
		if m.Task != nil {
			return nil, fmt.Errorf("explain: target %q: a fine-tuned model takes class:N or tag:I:N", s)
		}
		if len(x.masks) == 0 {
			return nil, fmt.Errorf("explain: target word %q needs a %s in the text", s, tokenizer.MaskToken(e.Tok))
		}
		// A WordPiece vocabulary token is taken as it stands (a continuation piece "##ing",
		// "[unused1]", which tokenizing would split); another word is tokenized, as a word after a
		// space first (BPE's and SentencePiece's "the" at the mask is "Ġthe" or "▁the", not the
		// bare entry "the", which only starts a text or continues a word).
		id, ok := e.Tok.TokenID(s)
		if !ok || e.Tok.Kind() != tokenizer.KindWordPiece {
			word, err := oneToken(e.Tok, s)
			switch {
			case err == nil:
				id = word
			case !ok:
				return nil, err
			}
		}
		t = Target{Kind: MaskedToken, Position: x.masks[0], Index: id}
	}
	if err := m.check(t, len(x.in.IDs)); err != nil {
		return nil, err
	}
	return &TargetInfo{Target: t, Label: e.label(t, x)}, nil
}

// oneToken is the id of word as one token after a space (BPE's "Ġmat", SentencePiece's "▁mat",
// WordPiece's "mat"), or else at the start of a text.
func oneToken(tok tokenizer.Encoder, word string) (int, error) {
	n := 0
	for _, text := range []string{" " + word, word} {
		enc, err := tok.Encode(text, 0)
		if err != nil {
			return 0, fmt.Errorf("explain: target word %q: %w", word, err)
		}
		id := -1
		n = 0
		for i, sp := range enc.Special {
			if !sp {
				id, n = enc.IDs[i], n+1
			}
		}
		if n == 1 {
			return id, nil
		}
	}
	return 0, fmt.Errorf("explain: target word %q is %d word pieces; give one vocabulary token", word, n)
}

// defaultTarget is the model's own answer: the top prediction at the first [MASK], the top
// class, or IsNext for a pair.
func (e *Explainer) defaultTarget(x *encoded) (Target, error) {
	m := e.Model
	switch {
	case m.Task != nil && m.Task.Task == bert.SequenceClassification:
		logits, err := m.Task.Forward(x.in.batch(1))
		if err != nil {
			return Target{}, err
		}
		return Target{Kind: Class, Index: argmax(logits.Data)}, nil
	case m.Task != nil:
		return Target{}, fmt.Errorf("explain: give the target as tag:TOKEN:TAG for a token classifier")
	case len(x.masks) > 0 && m.Bert.MLM != nil:
		out, err := m.Bert.Forward(x.in.batch(1), bert.Options{MLM: true, MLMRows: x.masks[:1]})
		if err != nil {
			return Target{}, err
		}
		return Target{Kind: MaskedToken, Position: x.masks[0], Index: argmax(out.MLMLogits.Data)}, nil
	case m.Bert.NSP != nil && slices.Contains(x.in.TypeIDs, 1):
		return Target{Kind: IsNext}, nil
	}
	return Target{}, fmt.Errorf("explain: no default target: write a [MASK] in the text, give a pair for IsNext, or pass a target")
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// label names a target for people.
func (e *Explainer) label(t Target, x *encoded) string {
	name := func(i int) string {
		if e.Model.Task != nil && i < len(e.Model.Task.Labels) {
			return fmt.Sprintf("%d (%s)", i, e.Model.Task.Labels[i])
		}
		return strconv.Itoa(i)
	}
	switch t.Kind {
	case MaskedToken:
		return fmt.Sprintf("%q at token %d", e.Tok.Token(t.Index), t.Position)
	case IsNext:
		return "IsNext"
	case Class:
		return "class " + name(t.Index)
	}
	return fmt.Sprintf("tag %s at token %d (%q)", name(t.Index), t.Position, x.tokens[t.Position])
}

// Attribute answers the attribution part of a request.
func (e *Explainer) Attribute(r Request) (*Report, error) {
	x, err := e.encode(r)
	if err != nil {
		return nil, err
	}
	return e.attribute(r, x)
}

func (e *Explainer) attribute(r Request, x *encoded) (*Report, error) {
	ti, err := e.resolve(r, x)
	if err != nil {
		return nil, err
	}
	rep := &Report{Tokens: x.tokens, Target: ti}
	switch r.Method {
	case "", MethodGXI:
		rep.Attribution, err = e.Model.GradientXInputOf(x.in, ti.Target)
	case MethodIG:
		steps := r.Steps
		if steps == 0 {
			steps = DefaultSteps
		}
		var bl Baseline
		if bl, err = e.baseline(r.Baseline); err != nil {
			return nil, err
		}
		rep.Attribution, err = e.Model.IntegratedGradientsOf(x.in, ti.Target, steps, bl)
	default:
		return nil, fmt.Errorf("explain: method %q: want %q or %q", r.Method, MethodGXI, MethodIG)
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func (e *Explainer) baseline(name string) (Baseline, error) {
	keep := []int{e.Tok.CLSID(), e.Tok.SEPID()}
	switch name {
	case "", "mask":
		return Baseline{Name: "mask", ID: e.Tok.MaskID(), Keep: keep}, nil
	case "pad":
		return Baseline{Name: "pad", ID: e.Tok.PadID(), Keep: keep}, nil
	}
	return Baseline{}, fmt.Errorf("explain: baseline %q: want mask or pad", name)
}

func topK(r Request) (int, error) {
	if r.TopK == 0 {
		return DefaultTopK, nil
	}
	if r.TopK < 1 || r.TopK > MaxTopK {
		return 0, fmt.Errorf("explain: top-k %d outside [1, %d]", r.TopK, MaxTopK)
	}
	return r.TopK, nil
}

// maskedReport is maskedLM with the report it starts: the tokens, and the target when the
// request names one.
func (e *Explainer) maskedReport(r Request, what string) (*encoded, int, *Report, error) {
	x, k, err := e.maskedLM(r, what)
	if err != nil {
		return nil, 0, nil, err
	}
	rep := &Report{Tokens: x.tokens}
	if r.Target != "" {
		if rep.Target, err = e.resolve(r, x); err != nil {
			return nil, 0, nil, err
		}
	}
	return x, k, rep, nil
}

// maskedLM checks that the request can be answered by the MLM head at the text's masks.
func (e *Explainer) maskedLM(r Request, what string) (*encoded, int, error) {
	if e.Model.Bert.MLM == nil {
		return nil, 0, fmt.Errorf("explain: %s needs the MLM head (cls.predictions), which the model lacks", what)
	}
	k, err := topK(r)
	if err != nil {
		return nil, 0, err
	}
	x, err := e.encode(r)
	if err != nil {
		return nil, 0, err
	}
	if len(x.masks) == 0 {
		return nil, 0, fmt.Errorf("explain: %s needs a %s in the text", what, tokenizer.MaskToken(e.Tok))
	}
	return x, k, nil
}

// Lens answers the logit lens at every [MASK] of the text; the candidate is the target word
// when the request names one.
func (e *Explainer) Lens(r Request) (*Report, error) {
	x, k, rep, err := e.maskedReport(r, "the logit lens")
	if err != nil {
		return nil, err
	}
	if rep.Lens, err = e.lens(x, k, rep.Target); err != nil {
		return nil, err
	}
	return rep, nil
}

// lens is the logit lens at x's masks with the candidate of an MLM target ti (may be nil).
func (e *Explainer) lens(x *encoded, k int, ti *TargetInfo) (*Lens, error) {
	var cands []int
	if ti != nil && ti.Kind == MaskedToken {
		cands = []int{ti.Index}
	}
	l, err := LogitLens(e.Model.Bert, x.in, x.masks, cands, k)
	if err != nil {
		return nil, err
	}
	for _, p := range l.Positions {
		for _, ly := range p.Layers {
			e.name(ly.Top)
		}
	}
	return l, nil
}

func (e *Explainer) name(ps []Prediction) {
	for i := range ps {
		ps[i].Token = e.Tok.Token(ps[i].ID)
	}
}

// Ablation answers the predictions at every [MASK] with the request's heads off.
func (e *Explainer) Ablation(r Request) (*Report, error) {
	x, k, err := e.maskedLM(r, "ablation")
	if err != nil {
		return nil, err
	}
	a, err := e.ablation(x, k, r.Ablate)
	if err != nil {
		return nil, err
	}
	return &Report{Tokens: x.tokens, Ablation: a}, nil
}

func (e *Explainer) ablation(x *encoded, k int, off []Head) (*Ablation, error) {
	a, err := Ablate(e.Model.Bert, x.in, x.masks, off, k)
	if err != nil {
		return nil, err
	}
	for _, p := range a.Positions {
		for _, list := range [][]Shift{p.Before, p.After} {
			for i := range list {
				list[i].Token = e.Tok.Token(list[i].ID)
			}
		}
	}
	return a, nil
}

// Importance answers head importance for the text's masked-LM loss: the label at each [MASK]
// is the target word where the request names one, else the model's top prediction there.
func (e *Explainer) Importance(r Request) (*Report, error) {
	x, _, rep, err := e.maskedReport(r, "head importance")
	if err != nil {
		return nil, err
	}
	if rep.Importance, err = e.importance(x, rep.Target); err != nil {
		return nil, err
	}
	return rep, nil
}

// importance is head importance for x's masked-LM loss, labelled with an MLM target ti's word
// at its position (ti may be nil) and the top predictions at the other masks.
func (e *Explainer) importance(x *encoded, ti *TargetInfo) (*Importance, error) {
	out, err := e.Model.Bert.Forward(x.in.batch(1), bert.Options{MLM: true, MLMRows: x.masks})
	if err != nil {
		return nil, err
	}
	ex := Example{Input: x.in, Labels: make([]int, len(x.in.IDs))}
	for i := range ex.Labels {
		ex.Labels[i] = bert.IgnoreIndex
	}
	for i, p := range x.masks {
		ex.Labels[p] = argmax(out.MLMLogits.Row(i))
	}
	if ti != nil && ti.Kind == MaskedToken {
		ex.Labels[ti.Position] = ti.Index
	}
	return HeadImportance(e.Model.Bert, []Example{ex})
}
