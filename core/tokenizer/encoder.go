package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
)

// Encoder is what a model needs of its tokenizer, whichever kind it is:
// BERT's WordPiece (*Tokenizer) and byte-level BPE (*BPE) both are one.
// Encodings of both hold the same fields with the same meaning; ids a
// tokenizer lacks are -1.
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
}

var (
	_ Encoder = (*Tokenizer)(nil)
	_ Encoder = (*BPE)(nil)
)

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
