package unigram

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxJSONBytes is the largest tokenizer.json accepted.
const MaxJSONBytes = 256 << 20

type jsonFile struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         struct {
		Type         string               `json:"type"`
		UnkID        *int                 `json:"unk_id"`
		Vocab        [][2]json.RawMessage `json:"vocab"`
		ByteFallback bool                 `json:"byte_fallback"`
	} `json:"model"`
}

type jsonComponent struct {
	Type string `json:"type"`
	// Sequence
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	// Precompiled
	PrecompiledCharsmap *string `json:"precompiled_charsmap"`
	// Strip
	StripLeft  bool `json:"strip_left"`
	StripRight bool `json:"strip_right"`
	// Replace
	Pattern *struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
	Content string `json:"content"`
	// Prepend
	Prepend string `json:"prepend"`
	// Metaspace
	Replacement    string `json:"replacement"`
	PrependScheme  string `json:"prepend_scheme"`
	AddPrefixSpace *bool  `json:"add_prefix_space"`
	Split          *bool  `json:"split"`
	// TemplateProcessing
	Single        []json.RawMessage `json:"single"`
	Pair          []json.RawMessage `json:"pair"`
	SpecialTokens map[string]struct {
		IDs    []int    `json:"ids"`
		Tokens []string `json:"tokens"`
	} `json:"special_tokens"`
}

// FromJSON reads a HuggingFace tokenizer.json whose model is Unigram, with a
// normaliser made of Sequence, Precompiled, NFC/NFD/NFKC/NFKD, Lowercase,
// Strip, StripAccents, Replace and Prepend, a Metaspace pre-tokenizer (alone
// or in a Sequence) and a TemplateProcessing post-processor. Anything else is
// an error that names it.
func FromJSON(b []byte) (*Tokenizer, error) {
	if len(b) > MaxJSONBytes {
		return nil, fmt.Errorf("tokenizer.json: %d bytes, more than %d", len(b), MaxJSONBytes)
	}
	var f jsonFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if f.Model.Type != "Unigram" {
		return nil, fmt.Errorf("tokenizer.json: model.type %q, want Unigram", f.Model.Type)
	}
	pieces := make([]string, len(f.Model.Vocab))
	scores := make([]float64, len(f.Model.Vocab))
	for i, v := range f.Model.Vocab {
		if err := json.Unmarshal(v[0], &pieces[i]); err != nil {
			return nil, fmt.Errorf("tokenizer.json: model.vocab[%d] piece: %w", i, err)
		}
		if err := json.Unmarshal(v[1], &scores[i]); err != nil {
			return nil, fmt.Errorf("tokenizer.json: model.vocab[%d] score: %w", i, err)
		}
	}
	unk := -1
	if f.Model.UnkID != nil {
		unk = *f.Model.UnkID
	}
	m, err := NewModel(pieces, scores, unk, f.Model.ByteFallback)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: model: %w", err)
	}
	t := &Tokenizer{model: m}
	for i, a := range f.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("tokenizer.json: added_tokens[%d]: id %d", i, a.ID)
		}
		t.added = append(t.added, AddedToken{ID: a.ID, Content: a.Content, SingleWord: a.SingleWord, LStrip: a.LStrip, RStrip: a.RStrip, Special: a.Special})
	}
	if t.norm, err = parseNormalizer(f.Normalizer, 0); err != nil {
		return nil, fmt.Errorf("tokenizer.json: normalizer: %w", err)
	}
	if err := t.parsePreTokenizer(f.PreTokenizer, 0); err != nil {
		return nil, fmt.Errorf("tokenizer.json: pre_tokenizer: %w", err)
	}
	t.decodeTrim = t.meta.Replacement != 0 && t.meta.PrependScheme != PrependNever
	if err := t.parsePostProcessor(f.PostProcessor); err != nil {
		return nil, fmt.Errorf("tokenizer.json: post_processor: %w", err)
	}
	if err := t.init(); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	return t, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

func parseNormalizer(raw json.RawMessage, depth int) (normalizer, error) {
	if isNull(raw) {
		return sequence(nil), nil
	}
	if depth > 8 {
		return nil, fmt.Errorf("sequences nested too deep")
	}
	var c jsonComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		var q sequence
		for i, r := range c.Normalizers {
			n, err := parseNormalizer(r, depth+1)
			if err != nil {
				return nil, fmt.Errorf("normalizers[%d]: %w", i, err)
			}
			q = append(q, n)
		}
		return q, nil
	case "Precompiled":
		if c.PrecompiledCharsmap == nil || *c.PrecompiledCharsmap == "" {
			return sequence(nil), nil
		}
		b, err := base64.StdEncoding.DecodeString(*c.PrecompiledCharsmap)
		if err != nil {
			return nil, fmt.Errorf("Precompiled: precompiled_charsmap: %w", err)
		}
		cm, err := ParseCharsmap(b)
		if err != nil {
			return nil, fmt.Errorf("Precompiled: %w", err)
		}
		return precompiled{cm}, nil
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFD":
		return unicodeForm{norm.NFD}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "StripAccents":
		return stripAccents{}, nil
	case "Strip":
		return strip{c.StripLeft, c.StripRight}, nil
	case "Prepend":
		return prepend{c.Prepend}, nil
	case "Replace":
		if c.Pattern == nil {
			return nil, fmt.Errorf("Replace: no pattern")
		}
		switch {
		case c.Pattern.String != nil:
			return replace{literal: *c.Pattern.String, content: c.Content}, nil
		case c.Pattern.Regex != nil:
			re, err := regexp.Compile(*c.Pattern.Regex)
			if err != nil {
				return nil, fmt.Errorf("Replace: pattern %q: %w", *c.Pattern.Regex, err)
			}
			return replace{re: re, content: c.Content}, nil
		}
		return nil, fmt.Errorf("Replace: pattern is neither String nor Regex")
	}
	return nil, fmt.Errorf("unsupported normalizer type %q", c.Type)
}

func (t *Tokenizer) parsePreTokenizer(raw json.RawMessage, depth int) error {
	if isNull(raw) {
		return nil
	}
	if depth > 8 {
		return fmt.Errorf("sequences nested too deep")
	}
	var c jsonComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	switch c.Type {
	case "Sequence":
		for i, r := range c.PreTokenizers {
			if err := t.parsePreTokenizer(r, depth+1); err != nil {
				return fmt.Errorf("pretokenizers[%d]: %w", i, err)
			}
		}
		return nil
	case "Metaspace":
		if t.meta.Replacement != 0 {
			return fmt.Errorf("more than one Metaspace")
		}
		r, n := utf8.DecodeRuneInString(c.Replacement)
		if n == 0 || n != len(c.Replacement) || r == utf8.RuneError {
			return fmt.Errorf("Metaspace: replacement %q is not one character", c.Replacement)
		}
		t.meta = Metaspace{Replacement: r, PrependScheme: PrependAlways, Split: true}
		switch {
		case c.PrependScheme != "":
			switch c.PrependScheme {
			case PrependAlways, PrependFirst, PrependNever:
				t.meta.PrependScheme = c.PrependScheme
			default:
				return fmt.Errorf("Metaspace: prepend_scheme %q", c.PrependScheme)
			}
		case c.AddPrefixSpace != nil && !*c.AddPrefixSpace:
			t.meta.PrependScheme = PrependNever
		}
		if c.Split != nil {
			t.meta.Split = *c.Split
		}
		return nil
	}
	return fmt.Errorf("unsupported pre_tokenizer type %q", c.Type)
}

func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) error {
	t.single = []TemplatePiece{{Seq: "A"}}
	t.pair = []TemplatePiece{{Seq: "A"}, {Seq: "B", TypeID: 1}}
	if isNull(raw) {
		return nil
	}
	var c jsonComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	if c.Type != "TemplateProcessing" {
		return fmt.Errorf("unsupported post_processor type %q", c.Type)
	}
	var err error
	if t.single, err = parseTemplate(c.Single, c.SpecialTokens); err != nil {
		return fmt.Errorf("single: %w", err)
	}
	if t.pair, err = parseTemplate(c.Pair, c.SpecialTokens); err != nil {
		return fmt.Errorf("pair: %w", err)
	}
	return nil
}

func parseTemplate(raw []json.RawMessage, specials map[string]struct {
	IDs    []int    `json:"ids"`
	Tokens []string `json:"tokens"`
}) ([]TemplatePiece, error) {
	var out []TemplatePiece
	for i, r := range raw {
		var p struct {
			SpecialToken *struct {
				ID     string `json:"id"`
				TypeID int    `json:"type_id"`
			}
			Sequence *struct {
				ID     string `json:"id"`
				TypeID int    `json:"type_id"`
			}
		}
		if err := json.Unmarshal(r, &p); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		switch {
		case p.Sequence != nil:
			if p.Sequence.ID != "A" && p.Sequence.ID != "B" {
				return nil, fmt.Errorf("[%d]: sequence %q", i, p.Sequence.ID)
			}
			out = append(out, TemplatePiece{Seq: p.Sequence.ID, ID: -1, TypeID: p.Sequence.TypeID})
		case p.SpecialToken != nil:
			s, ok := specials[p.SpecialToken.ID]
			if !ok || len(s.IDs) != len(s.Tokens) || len(s.IDs) == 0 {
				return nil, fmt.Errorf("[%d]: special token %q not in special_tokens", i, p.SpecialToken.ID)
			}
			for k := range s.IDs {
				out = append(out, TemplatePiece{Token: s.Tokens[k], ID: s.IDs[k], TypeID: p.SpecialToken.TypeID})
			}
		default:
			return nil, fmt.Errorf("[%d]: neither SpecialToken nor Sequence", i)
		}
	}
	return out, nil
}
