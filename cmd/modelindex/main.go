// Command modelindex writes models/index.json, the list of model folders the page offers:
//
//	go run ./cmd/modelindex [-default NAME] assets/models
//
// Every sub-folder with a config.json is listed with the files the engine loads (the weights as
// model.safetensors, or as model.safetensors.index.json and the shards it names). A folder's
// optional note.txt (one line, e.g. "random weights: the predictions are noise") is shown on
// the page under the header.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer/auto"
	"github.com/bertlab/bertlab/ui"
)

func main() {
	def := flag.String("default", "", "the model the page loads first (default: the first by name)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: modelindex [-default NAME] MODELS_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := Write(flag.Arg(0), *def); err != nil {
		fmt.Fprintln(os.Stderr, "modelindex:", err)
		os.Exit(1)
	}
}

// Index lists the model folders under dir.
func Index(dir, def string) (*ui.ModelIndex, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	idx := &ui.ModelIndex{Default: def, Models: []ui.ModelRef{}}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		folder := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(folder, hf.ConfigFile)); err != nil {
			continue
		}
		// The files the engine loads, in the order it wants them: the config, the weights
		// (model.safetensors, or the index and its shards) and the tokenizer's files of any
		// family (auto.Files).
		weights, err := hf.WeightsFiles(os.DirFS(folder), folder)
		if err != nil {
			return nil, err
		}
		ref := ui.ModelRef{Name: e.Name(), Path: e.Name() + "/", Files: append([]string{hf.ConfigFile}, weights...)}
		for _, f := range auto.Files {
			if _, err := os.Stat(filepath.Join(folder, f)); err == nil {
				ref.Files = append(ref.Files, f)
			}
		}
		if _, err := auto.LoadFS(os.DirFS(folder), folder); err != nil {
			return nil, err
		}
		if b, err := os.ReadFile(filepath.Join(folder, "note.txt")); err == nil {
			ref.Note = strings.TrimSpace(string(b))
		}
		idx.Models = append(idx.Models, ref)
	}
	sort.Slice(idx.Models, func(i, j int) bool { return idx.Models[i].Name < idx.Models[j].Name })
	if def != "" && !func() bool {
		for _, m := range idx.Models {
			if m.Name == def {
				return true
			}
		}
		return false
	}() {
		return nil, fmt.Errorf("-default %s: no such model folder in %s", def, dir)
	}
	return idx, nil
}

// Write writes dir/index.json.
func Write(dir, def string) error {
	idx, err := Index(dir, def)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return hf.WriteFileAtomic(filepath.Join(dir, "index.json"), append(b, '\n'))
}
