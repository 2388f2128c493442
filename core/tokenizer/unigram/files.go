package unigram

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// LoadFS loads the Unigram tokenizer of a HuggingFace model folder: its
// tokenizer.json when that holds a Unigram model, else spiece.model (ALBERT)
// or spm.model (DeBERTa-v2/v3) with the settings of tokenizer_config.json
// (do_lower_case, keep_accents; the family from tokenizer_class or the file
// name). dir is a path within fsys ("." for its root).
func LoadFS(fsys fs.FS, dir string) (*Tokenizer, error) {
	if b, err := fs.ReadFile(fsys, path.Join(dir, "tokenizer.json")); err == nil {
		var head struct {
			Model struct {
				Type string `json:"type"`
			} `json:"model"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, "tokenizer.json"), err)
		}
		if head.Model.Type == "Unigram" {
			t, err := FromJSON(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path.Join(dir, "tokenizer.json"), err)
			}
			return t, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var cfg struct {
		Class       string `json:"tokenizer_class"`
		DoLowerCase *bool  `json:"do_lower_case"`
		KeepAccents *bool  `json:"keep_accents"`
	}
	if b, err := fs.ReadFile(fsys, path.Join(dir, "tokenizer_config.json")); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, "tokenizer_config.json"), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, f := range []struct{ file, family string }{{"spiece.model", FamilyALBERT}, {"spm.model", FamilyDeBERTaV2}} {
		name := path.Join(dir, f.file)
		b, err := fs.ReadFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		o := ModelOptions{Family: f.family}
		switch cfg.Class {
		case "AlbertTokenizer", "AlbertTokenizerFast":
			o.Family = FamilyALBERT
		case "DebertaV2Tokenizer", "DebertaV2TokenizerFast":
			o.Family = FamilyDeBERTaV2
		}
		o.DoLowerCase = o.Family == FamilyALBERT
		if cfg.DoLowerCase != nil {
			o.DoLowerCase = *cfg.DoLowerCase
		}
		if cfg.KeepAccents != nil {
			o.KeepAccents = *cfg.KeepAccents
		}
		o.AppendMask = o.Family == FamilyDeBERTaV2
		t, err := FromModelFile(b, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return t, nil
	}
	return nil, fmt.Errorf("%s: no Unigram tokenizer.json, spiece.model or spm.model", dir)
}
