// Package auto loads whichever tokenizer a HuggingFace model folder holds, as
// transformers' AutoTokenizer picks one: BERT's WordPiece (vocab.txt),
// byte-level BPE (RoBERTa's vocab.json and merges.txt) or SentencePiece
// Unigram (ALBERT's spiece.model, DeBERTa's spm.model), or the one a
// tokenizer.json describes, with the settings of tokenizer_config.json and
// special_tokens_map.json. Everything above the tokenizer (the engine, the
// pipelines, the page) asks for a tokenizer.Encoder and never for a kind.
package auto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"testing/fstest"
	"time"

	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/tokenizer/unigram"
)

// File names of a model folder that decide the tokenizer, besides
// tokenizer.VocabFile, tokenizer.ConfigFile, tokenizer.TokenizerJSONFile,
// tokenizer.BPEVocabFile and tokenizer.BPEMergesFile.
const (
	// SpieceFile is ALBERT's SentencePiece model.
	SpieceFile = "spiece.model"
	// SpmFile is DeBERTa-v2/v3's SentencePiece model.
	SpmFile = "spm.model"
	// SpecialTokensMapFile names the special tokens; its entries override
	// tokenizer_config.json's, as in transformers' from_pretrained.
	SpecialTokensMapFile = "special_tokens_map.json"
)

// Files are every file of a model folder a tokenizer may read: what a
// writer of the folder copies and what the page accepts from a folder
// picker.
var Files = []string{
	tokenizer.TokenizerJSONFile, tokenizer.VocabFile, tokenizer.BPEVocabFile, tokenizer.BPEMergesFile,
	SpieceFile, SpmFile, tokenizer.ConfigFile, SpecialTokensMapFile,
}

// MaxConfigSize bounds tokenizer_config.json and special_tokens_map.json.
const MaxConfigSize = 1 << 20

// ErrNone is the error (wrapped) of LoadFS for a folder without any
// tokenizer file.
var ErrNone = errors.New("no tokenizer files")

// LoadFS loads the tokenizer of the model folder at the root of fsys; name
// is the folder as messages call it. It picks:
//   - tokenizer.json by its model's type: BPE (tokenizer.LoadBPEFS),
//     Unigram (unigram.LoadFS) or WordPiece (tokenizer.LoadFS, which reads
//     vocab.txt beside it);
//   - else vocab.txt (WordPiece), vocab.json and merges.txt (BPE),
//     spiece.model or spm.model (Unigram), in that order.
//
// A folder with none of these is an error wrapping ErrNone.
func LoadFS(fsys fs.FS, name string) (tokenizer.Encoder, error) {
	label := func(file string) string { return filepath.Join(name, file) }
	fsys, err := withSpecialTokensMap(fsys, label)
	if err != nil {
		return nil, err
	}
	exists := func(file string) bool {
		_, err := fs.Stat(fsys, file)
		return err == nil
	}
	if exists(tokenizer.TokenizerJSONFile) {
		typ, err := modelType(fsys)
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", label(tokenizer.TokenizerJSONFile), err)
		}
		switch typ {
		case "BPE":
			return tokenizer.LoadBPEFS(fsys, name)
		case "Unigram":
			return loadUnigram(fsys, name)
		case "WordPiece":
			if !exists(tokenizer.VocabFile) {
				return nil, fmt.Errorf("tokenizer %s: a WordPiece tokenizer.json needs %s beside it", label(tokenizer.TokenizerJSONFile), tokenizer.VocabFile)
			}
			return tokenizer.LoadFS(fsys, name)
		}
		return nil, fmt.Errorf("tokenizer %s: model.type %q is not supported (WordPiece, BPE or Unigram)", label(tokenizer.TokenizerJSONFile), typ)
	}
	switch {
	case exists(tokenizer.VocabFile):
		return tokenizer.LoadFS(fsys, name)
	case exists(tokenizer.BPEVocabFile) || exists(tokenizer.BPEMergesFile):
		return tokenizer.LoadBPEFS(fsys, name)
	case exists(SpieceFile) || exists(SpmFile):
		return loadUnigram(fsys, name)
	}
	return nil, fmt.Errorf("tokenizer: %s: %w (%s, %s, %s and %s, or %s or %s)", folder(name), ErrNone,
		tokenizer.TokenizerJSONFile, tokenizer.VocabFile, tokenizer.BPEVocabFile, tokenizer.BPEMergesFile, SpieceFile, SpmFile)
}

func folder(name string) string {
	if name == "" {
		return "the model folder"
	}
	return name
}

func loadUnigram(fsys fs.FS, name string) (tokenizer.Encoder, error) {
	t, err := unigram.LoadFS(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", folder(name), err)
	}
	return t, nil
}

// modelType reads the "type" of tokenizer.json's "model" ("BPE" when a
// model without one has merges, as HuggingFace guesses).
func modelType(fsys fs.FS) (string, error) {
	f, err := fsys.Open(tokenizer.TokenizerJSONFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var head struct {
		Model *struct {
			Type   *string         `json:"type"`
			Merges json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.NewDecoder(io.LimitReader(f, tokenizer.MaxBPEFileSize)).Decode(&head); err != nil {
		return "", err
	}
	switch {
	case head.Model == nil:
		return "", errors.New("model: missing")
	case head.Model.Type != nil:
		return *head.Model.Type, nil
	case head.Model.Merges != nil:
		return "BPE", nil
	}
	return "", errors.New(`model: no "type"`)
}

// specialKeys are the entries of special_tokens_map.json that override
// tokenizer_config.json's.
var specialKeys = []string{"unk_token", "sep_token", "pad_token", "cls_token", "mask_token", "bos_token", "eos_token"}

// withSpecialTokensMap returns fsys with its tokenizer_config.json holding
// special_tokens_map.json's special tokens (which win, as transformers reads
// them after the config), or fsys itself when there is no such map.
func withSpecialTokensMap(fsys fs.FS, label func(string) string) (fs.FS, error) {
	smap, err := readSmall(fsys, SpecialTokensMapFile)
	if errors.Is(err, fs.ErrNotExist) {
		return fsys, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", label(SpecialTokensMapFile), err)
	}
	var specials map[string]json.RawMessage
	if err := json.Unmarshal(smap, &specials); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", label(SpecialTokensMapFile), err)
	}
	cfg := map[string]json.RawMessage{}
	data, err := readSmall(fsys, tokenizer.ConfigFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("tokenizer: %s: %w", label(tokenizer.ConfigFile), err)
	default:
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", label(tokenizer.ConfigFile), err)
		}
		if cfg == nil { // the file said null
			return nil, fmt.Errorf("tokenizer %s: not a JSON object", label(tokenizer.ConfigFile))
		}
	}
	changed := false
	for _, k := range specialKeys {
		v, ok := specials[k]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			continue
		}
		if err := checkTokenName(v); err != nil {
			return nil, fmt.Errorf("tokenizer %s: %s: %w", label(SpecialTokensMapFile), k, err)
		}
		cfg[k] = v
		changed = true
	}
	if !changed {
		return fsys, nil
	}
	merged, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", label(tokenizer.ConfigFile), err)
	}
	return overlay{fsys, fstest.MapFS{tokenizer.ConfigFile: {Data: merged, ModTime: time.Time{}}}}, nil
}

// checkTokenName accepts a special token written as a string or as an
// AddedToken object with a "content" string.
func checkTokenName(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == nil {
		return errors.New(`want a string or an object with a "content" string`)
	}
	return nil
}

// readSmall reads a settings file of at most MaxConfigSize bytes.
func readSmall(fsys fs.FS, file string) ([]byte, error) {
	f, err := fsys.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxConfigSize)
	}
	return data, nil
}

// overlay is fsys with the files of top in place of its own.
type overlay struct {
	fsys fs.FS
	top  fstest.MapFS
}

func (o overlay) Open(name string) (fs.File, error) {
	if _, ok := o.top[name]; ok {
		return o.top.Open(name)
	}
	return o.fsys.Open(name)
}
