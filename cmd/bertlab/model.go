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

// builtinModel is the folder under assets/models of the model the page opens with (the
// Makefile's DEFAULT_MODEL).
const builtinModel = "bertlab-mini"

// firstModel is the built-in model's folder under assets/models when it is there, else the
// first folder there that holds a config.json ("" when there is none).
func firstModel(assets string) string {
	dir := filepath.Join(assets, "models", builtinModel)
	if _, err := os.Stat(filepath.Join(dir, hf.ConfigFile)); err == nil {
		return dir
	}
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
