package main

import (
	"os"
	"path/filepath"

	"github.com/bertlab/bertlab/core/hf"
)

// defaultModel is the model folder used when --model is not given: $BERTLAB_MODEL, else the
// built-in model under assets/models when run from the repository.
func defaultModel() string {
	if m := os.Getenv("BERTLAB_MODEL"); m != "" {
		return m
	}
	return firstModel("assets")
}

// firstModel is the first folder under assets/models that holds a config.json, as `make run`
// picks it ("" when there is none).
func firstModel(assets string) string {
	matches, _ := filepath.Glob(filepath.Join(assets, "models", "*", hf.ConfigFile))
	if len(matches) > 0 {
		return filepath.Dir(matches[0])
	}
	return ""
}

func loadModel(dir string) (*hf.Folder, error) {
	if dir == "" {
		return nil, usageErr("no model folder: pass --model DIR (a folder with config.json, model.safetensors, vocab.txt)")
	}
	return hf.LoadFolder(dir)
}
