package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
)

// Kinds of tokenizer, as Encoder.Kind reports them.
const (
	// KindWordPiece is BERT's basic tokenizer and WordPiece (vocab.txt):
	// BERT, DistilBERT, ELECTRA.
	KindWordPiece = "wordpiece"
	// KindBPE is byte-level BPE (vocab.json and merges.txt): RoBERTa.
	KindBPE = "bpe"
	// KindUnigram is SentencePiece Unigram (spiece.model, spm.model): ALBERT,
	// DeBERTa-v2/v3.
	KindUnigram = "unigram"
)

// Encoder is what a model needs of its tokenizer, whichever kind it is:
// BERT's WordPiece (*Tokenizer), byte-level BPE (*BPE) and SentencePiece
// Unigram (unigram.Tokenizer) all are one. Encodings of all hold the same
// fields with the same meaning; ids a tokenizer lacks are -1.
type Encoder interface {
	// Encode tokenizes one text and adds the model's special tokens; maxLen
	// > 0 caps the number of tokens.
	Encode(text string, maxLen int) (Encoding, error)
	// EncodePair does the same for a pair of texts.
	EncodePair(a, b string, maxLen int) (Encoding, error)
	// CLSID is the token that starts a sequence ([CLS], <s>).
	CLSID() int
	// SEPID is the token that ends a text ([SEP], </s>).
	SEPID() int
	// MaskID is the mask token ([MASK], <mask>).
	MaskID() int
	// PadID is the padding token ([PAD], <pad>).
	PadID() int
	// UnkID is the unknown token ([UNK], <unk>).
	UnkID() int
	// VocabSize is one more than the largest id the tokenizer can give:
	// at most the model's vocab_size.
	VocabSize() int
	// Token is the vocabulary entry (or added token) of id as the
	// tokenizer writes it ("##ing", "Ġcat", "▁cat"), "" for none.
	Token(id int) string
	// TokenID is the id of a vocabulary entry or added token.
	TokenID(token string) (int, bool)
	// Decode turns ids back into text as HuggingFace's decode does; with
	// skipSpecial the special tokens are left out.
	Decode(ids []int, skipSpecial bool) string
	// Kind is KindWordPiece, KindBPE or KindUnigram.
	Kind() string
	// Word is id's token as a reader would write it: without WordPiece's
	// "##", BPE's "Ġ" (a space) or SentencePiece's "▁", bytes read back as
	// UTF-8; special tokens as they are.
	Word(id int) string
}

var (
	_ Encoder = (*Tokenizer)(nil)
	_ Encoder = (*BPE)(nil)
)

// Specials are the special tokens of a tokenizer as text ("" where it has
// none): [CLS] [SEP] [MASK] [PAD] [UNK] for BERT, ALBERT and DeBERTa,
// <s> </s> <mask> <pad> <unk> for RoBERTa.
type Specials struct {
	CLS  string `json:"cls"`
	SEP  string `json:"sep"`
	Mask string `json:"mask"`
	Pad  string `json:"pad"`
	Unk  string `json:"unk"`
}

// SpecialsOf returns e's special tokens.
func SpecialsOf(e Encoder) Specials {
	return Specials{CLS: e.Token(e.CLSID()), SEP: e.Token(e.SEPID()), Mask: e.Token(e.MaskID()), Pad: e.Token(e.PadID()), Unk: e.Token(e.UnkID())}
}

// MaskToken is e's mask token as it is written in text ("[MASK]",
// "<mask>"), "" when e has none.
func MaskToken(e Encoder) string { return e.Token(e.MaskID()) }

// IsNil reports whether e is nil or holds a nil pointer to a tokenizer (a
// nil *Tokenizer passed where an Encoder is asked for is not a nil
// interface).
func IsNil(e Encoder) bool {
	if e == nil {
		return true
	}
	v := reflect.ValueOf(e)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// LoadEncoderFS loads whichever tokenizer a model folder holds: the
// byte-level BPE when its tokenizer.json has a BPE model or, without a
// tokenizer.json, when it has vocab.json and merges.txt; BERT's WordPiece
// (LoadFS) when it has vocab.txt and its tokenizer.json, if any, has a
// WordPiece model. name is the folder as messages call it.
func LoadEncoderFS(fsys fs.FS, name string) (Encoder, error) {
	exists := func(file string) bool {
		_, err := fs.Stat(fsys, file)
		return err == nil
	}
	if exists(TokenizerJSONFile) {
		f, err := fsys.Open(TokenizerJSONFile)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", filepath.Join(name, TokenizerJSONFile), err)
		}
		typ, err := modelType(io.LimitReader(f, MaxBPEFileSize))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", filepath.Join(name, TokenizerJSONFile), err)
		}
		switch typ {
		case "BPE":
			return LoadBPEFS(fsys, name)
		case "WordPiece":
			return LoadFS(fsys, name)
		}
		return nil, fmt.Errorf("tokenizer %s: model.type %q is not supported (BPE or WordPiece)", filepath.Join(name, TokenizerJSONFile), typ)
	}
	switch {
	case exists(VocabFile):
		return LoadFS(fsys, name)
	case exists(BPEVocabFile) || exists(BPEMergesFile):
		return LoadBPEFS(fsys, name)
	}
	return nil, fmt.Errorf("tokenizer: %s holds none of %s, %s, %s and %s", name, TokenizerJSONFile, VocabFile, BPEVocabFile, BPEMergesFile)
}

// modelType reads the "type" of a tokenizer.json's "model" ("BPE" when a
// model without one has merges, as HuggingFace guesses), without keeping
// the rest of the file.
func modelType(r io.Reader) (string, error) {
	var f struct {
		Model *struct {
			Type   *string         `json:"type"`
			Merges json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return "", err
	}
	switch {
	case f.Model == nil:
		return "", errors.New("model: missing")
	case f.Model.Type != nil:
		return *f.Model.Type, nil
	case f.Model.Merges != nil:
		return "BPE", nil
	}
	return "", errors.New(`model: no "type"`)
}
