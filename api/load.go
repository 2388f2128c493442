package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/checkpoint"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// LoadFS loads a model folder in HF layout (config.json, model.safetensors, vocab.txt and
// optionally tokenizer_config.json) from the root of fsys: an embedded folder in the Worker,
// which has no file system. Native code loads folders with checkpoint.LoadFolder.
func LoadFS(fsys fs.FS, name string) (Model, error) {
	fail := func(err error) (Model, error) { return Model{}, fmt.Errorf("model %s: %w", name, err) }
	cfgBytes, err := fs.ReadFile(fsys, checkpoint.ConfigFile)
	if err != nil {
		return fail(err)
	}
	cfg, err := bert.ParseConfig(cfgBytes)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", checkpoint.ConfigFile, err))
	}
	m, err := loadWeights(fsys, cfg)
	if err != nil {
		return fail(err)
	}
	vb, err := fs.ReadFile(fsys, checkpoint.VocabFile)
	if err != nil {
		return fail(err)
	}
	vocab, err := tokenizer.ReadVocab(bytes.NewReader(vb))
	if err != nil {
		return fail(fmt.Errorf("%s: %w", checkpoint.VocabFile, err))
	}
	if vocab.Len() > cfg.VocabSize {
		return fail(fmt.Errorf("%s has %d tokens but %s vocab_size is %d", checkpoint.VocabFile, vocab.Len(), checkpoint.ConfigFile, cfg.VocabSize))
	}
	tc := tokenizer.DefaultConfig()
	switch b, err := fs.ReadFile(fsys, checkpoint.TokenizerConfigFile); {
	case err == nil:
		if tc, err = tokenizer.ParseConfig(b); err != nil {
			return fail(fmt.Errorf("%s: %w", checkpoint.TokenizerConfigFile, err))
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fail(err)
	}
	tok, err := tokenizer.New(vocab, tc)
	if err != nil {
		return fail(err)
	}
	return Model{Name: name, Model: m, Tokenizer: tok}, nil
}

// loadWeights reads model.safetensors through io.ReaderAt when the file offers it (embed.FS and
// os.DirFS files do), so that the weights are copied once, straight into the model.
func loadWeights(fsys fs.FS, cfg bert.Config) (*bert.Model, error) {
	f, err := fsys.Open(checkpoint.WeightsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ra, ok := f.(io.ReaderAt)
	size := fi.Size()
	if !ok {
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, err
		}
		ra, size = bytes.NewReader(b), int64(len(b))
	}
	m, _, err := checkpoint.LoadModelReader(ra, size, checkpoint.WeightsFile, cfg)
	return m, err
}
