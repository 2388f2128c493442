package unigram

import (
	"fmt"
	"regexp"

	"golang.org/x/text/unicode/norm"
)

// Families of FromModelProto: which of transformers' converters (and slow
// tokenizers) decides the pipeline around a .model file.
const (
	// FamilyALBERT is AlbertConverter: <pad> <unk> [CLS] [SEP] [MASK], the
	// mask token taking the whitespace before it.
	FamilyALBERT = "albert"
	// FamilyDeBERTaV2 is DebertaV2Converter (DeBERTa-v2 and v3): [PAD] [CLS]
	// [SEP] [UNK] [MASK].
	FamilyDeBERTaV2 = "deberta-v2"
)

// ModelOptions are the settings of the slow tokenizer that go with a .model
// file (tokenizer_config.json), which decide the pipeline that transformers'
// converter builds around it.
type ModelOptions struct {
	// Family is FamilyALBERT or FamilyDeBERTaV2.
	Family string
	// DoLowerCase lowercases the text before the charsmap (ALBERT's default
	// is true, DeBERTa-v3's false).
	DoLowerCase bool
	// KeepAccents (ALBERT only): false adds NFKD and accent stripping.
	KeepAccents bool
	// AppendMask gives [MASK] the id after the last piece when the .model
	// has no such piece, as DeBERTa-v3's tokenizer does (id 128000).
	AppendMask bool
}

// FromModelFile reads a SentencePiece .model file (ALBERT's spiece.model,
// DeBERTa-v3's spm.model) and builds the tokenizer transformers' converter
// would build from it.
func FromModelFile(b []byte, o ModelOptions) (*Tokenizer, error) {
	m, err := ParseModelProto(b)
	if err != nil {
		return nil, err
	}
	return FromModelProto(m, o)
}

// FromModelProto builds the tokenizer of a parsed .model as transformers'
// AlbertConverter or DebertaV2Converter does: the pieces and scores become
// the Unigram vocabulary, the precompiled charsmap the normaliser (with the
// family's steps around it), add_dummy_prefix the Metaspace prepend scheme,
// and the family's special tokens the added tokens and the template
// "[CLS] A [SEP] (B [SEP])".
func FromModelProto(m *ModelProto, o ModelOptions) (*Tokenizer, error) {
	pieces := make([]string, len(m.Pieces))
	scores := make([]float64, len(m.Pieces))
	unk := -1
	for i, p := range m.Pieces {
		pieces[i], scores[i] = p.Piece, float64(p.Score)
		if p.Type == Unknown && unk < 0 {
			unk = i
		}
	}
	t := &Tokenizer{}
	var specials []string
	lstripMask := false
	var steps sequence
	switch o.Family {
	case FamilyALBERT:
		specials = []string{"<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"}
		lstripMask = true
		steps = append(steps, replace{literal: "``", content: `"`}, replace{literal: "''", content: `"`})
		if !o.KeepAccents {
			steps = append(steps, unicodeForm{norm.NFKD}, stripAccents{})
		}
		if o.DoLowerCase {
			steps = append(steps, lowercase{})
		}
	case FamilyDeBERTaV2:
		specials = []string{"[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"}
		if o.DoLowerCase {
			steps = append(steps, lowercase{})
		}
		steps = append(steps, strip{true, true})
	default:
		return nil, fmt.Errorf("sentencepiece model: family %q, want %q or %q", o.Family, FamilyALBERT, FamilyDeBERTaV2)
	}
	if len(m.Normalizer.PrecompiledCharsmap) > 0 {
		cm, err := ParseCharsmap(m.Normalizer.PrecompiledCharsmap)
		if err != nil {
			return nil, fmt.Errorf("sentencepiece model: normalizer_spec: %w", err)
		}
		steps = append(steps, precompiled{cm})
	}
	steps = append(steps, replace{re: regexp.MustCompile(" {2,}"), content: " "})
	t.norm = steps
	ids := map[string]int{}
	for i, p := range pieces {
		if _, ok := ids[p]; !ok {
			ids[p] = i
		}
	}
	for _, s := range specials {
		id, ok := ids[s]
		if !ok && s == "[MASK]" && o.AppendMask {
			id, ok = len(pieces), true
			pieces = append(pieces, s)
			scores = append(scores, 0)
		}
		if !ok {
			continue
		}
		t.added = append(t.added, AddedToken{ID: id, Content: s, LStrip: s == "[MASK]" && lstripMask, Special: true})
	}
	model, err := NewModel(pieces, scores, unk, m.ByteFallback)
	if err != nil {
		return nil, fmt.Errorf("sentencepiece model: %w", err)
	}
	t.model = model
	t.meta = Metaspace{Replacement: '▁', PrependScheme: PrependNever, Split: true}
	if m.Normalizer.AddDummyPrefix {
		t.meta.PrependScheme = PrependAlways
	}
	t.decodeTrim = t.meta.PrependScheme != PrependNever
	cls, okc := ids["[CLS]"]
	sep, oks := ids["[SEP]"]
	if !okc || !oks {
		return nil, fmt.Errorf("sentencepiece model: no [CLS] or [SEP] piece for the template")
	}
	c := TemplatePiece{Token: "[CLS]", ID: cls}
	s0 := TemplatePiece{Token: "[SEP]", ID: sep}
	s1 := TemplatePiece{Token: "[SEP]", ID: sep, TypeID: 1}
	t.single = []TemplatePiece{c, {Seq: "A", ID: -1}, s0}
	t.pair = []TemplatePiece{c, {Seq: "A", ID: -1}, s0, {Seq: "B", ID: -1, TypeID: 1}, s1}
	if err := t.init(); err != nil {
		return nil, fmt.Errorf("sentencepiece model: %w", err)
	}
	return t, nil
}
