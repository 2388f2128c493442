package explain

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// LoadFolder loads a model folder for explaining: as the fine-tuned classifier its
// config.json's "architectures" names (BertForSequenceClassification,
// BertForTokenClassification), else as a pre-training model.
func LoadFolder(dir string) (*Explainer, error) {
	var cfg struct {
		Architectures []string `json:"architectures"`
	}
	if raw, err := os.ReadFile(filepath.Join(dir, hf.ConfigFile)); err == nil {
		_ = json.Unmarshal(raw, &cfg) // a bad config.json gets its error from the loader below
	}
	var e *Explainer
	for _, task := range []bert.Task{bert.SequenceClassification, bert.TokenClassification} {
		if slices.Contains(cfg.Architectures, string(task)) {
			f, err := hf.LoadTaskFolder(dir, task, hf.TaskLoadOptions{RequireHead: true})
			if err != nil {
				return nil, err
			}
			if f.Tokenizer == nil {
				return nil, fmt.Errorf("model folder %s has no vocab.txt", dir)
			}
			e = &Explainer{Model: FineTuned(f.Model), Tok: f.Tokenizer}
		}
	}
	if e == nil {
		f, err := hf.LoadFolder(dir)
		if err != nil {
			return nil, err
		}
		if f.Encoder == nil {
			return nil, fmt.Errorf("model folder %s has no tokenizer files", dir)
		}
		e = &Explainer{Model: PreTraining(f.Model), Tok: f.Encoder}
	}
	return e, nil
}
