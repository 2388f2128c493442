package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File names of a HuggingFace model folder that the tokenizer reads and
// writes.
const (
	// VocabFile holds the WordPiece vocabulary, one token per line.
	VocabFile = "vocab.txt"
	// ConfigFile holds the tokenizer settings (see Config).
	ConfigFile = "tokenizer_config.json"
)

// LoadDir loads a tokenizer from a HuggingFace model folder: vocab.txt and,
// when present, tokenizer_config.json (DefaultConfig otherwise).
func LoadDir(dir string) (*Tokenizer, error) {
	if dir == "" {
		dir = "."
	}
	return LoadFS(os.DirFS(dir), dir)
}

// LoadFS is LoadDir for the root of any file system: a folder on disk
// (os.DirFS), files embedded in the binary (embed.FS) or held in memory (the
// browser has no file system). name is the folder as messages call it.
func LoadFS(fsys fs.FS, name string) (*Tokenizer, error) {
	vpath := filepath.Join(name, VocabFile)
	f, err := fsys.Open(VocabFile)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", vpath, err)
	}
	v, err := ReadVocab(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", vpath, err)
	}
	cfg := DefaultConfig()
	cpath := filepath.Join(name, ConfigFile)
	data, err := fs.ReadFile(fsys, ConfigFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("tokenizer: %s: %w", cpath, err)
	default:
		if cfg, err = ParseConfig(data); err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", cpath, err)
		}
	}
	t, err := New(v, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	return t, nil
}

// SaveDir writes vocab.txt and tokenizer_config.json into dir, creating dir
// if needed. Each file is written to a temporary name in dir and then
// renamed, so a reader never sees half a file.
func (t *Tokenizer) SaveDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	var vocab bytes.Buffer
	if _, err := t.vocab.WriteTo(&vocab); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	cfg, err := json.MarshalIndent(t.cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, VocabFile), vocab.Bytes()); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ConfigFile), append(cfg, '\n'))
}

// writeFileAtomic writes data to a temporary file beside path and renames it
// to path.
func writeFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("tokenizer: write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("tokenizer: write %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; a model folder is meant to be shared.
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	return nil
}
