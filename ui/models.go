package ui

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer/auto"
	"github.com/vugu/vugu/js"
)

// MaxBrowserWeights is the largest model, in bytes of float32 weights, that the page offers to
// load. A WebAssembly module addresses at most 4 GiB, and a load holds the weights twice for a
// while (the file's bytes copied into the engine, and the model's tensors built from them), so
// 1.5 GB of weights is the most that fits with room for activations; BERT-large (1.3 GB) loads,
// anything bigger is refused before a byte is read.
const MaxBrowserWeights = 1.5e9

// Files of a HuggingFace model folder that the engine reads: config.json, the weights
// (model.safetensors, or model.safetensors.index.json with the shards it names, which
// hf.IsShardFile recognises) and the files of the tokenizer of any family (auto.Files: BERT's
// vocab.txt, RoBERTa's vocab.json and merges.txt or tokenizer.json, ALBERT's spiece.model,
// DeBERTa's spm.model).
var modelFileNames = append([]string{hf.ConfigFile, hf.WeightsFile, hf.WeightsIndexFile}, auto.Files...)

// missingTokenizer names what a folder lacks for a tokenizer, "" when it has one: vocab.txt (the
// usual file) when it has no tokenizer file at all.
func missingTokenizer(has func(string) bool) string {
	switch {
	case has("tokenizer.json") || has("vocab.txt") || has("spiece.model") || has("spm.model") || has("vocab.json") && has("merges.txt"):
		return ""
	case has("vocab.json"):
		return "merges.txt"
	case has("merges.txt"):
		return "vocab.json"
	}
	return "vocab.txt"
}

// LocalFile is a file the user picked or dropped.
type LocalFile struct {
	Name string // the base name
	// Path is the path inside a picked folder (webkitRelativePath), "" for single files.
	Path string
	Size int64
	// Handle is the browser's File object; zero outside the browser.
	Handle js.Value
	// Data holds the contents when they are already read (tests without a browser).
	Data []byte
}

// weightFormats are weight files of other formats, named when a folder has no
// model.safetensors.
var weightFormats = []string{"pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack"}

// PickModelFiles keeps the files of files that a model folder needs, by name: config.json,
// model.safetensors (or model.safetensors.index.json and the shards,
// model-00001-of-00002.safetensors, ...) and the tokenizer's files (vocab.txt, tokenizer.json, vocab.json and
// merges.txt, spiece.model or spm.model, with tokenizer_config.json and
// special_tokens_map.json when there are). A folder picked or dropped whole brings its other
// files too, and maybe subfolders (checkpoint-500/, onnx/): the files are taken from the
// shallowest folder that holds the three needed ones (config, weights, a tokenizer; the first
// by name among equals), never mixed from two folders. Otherwise the error says what is
// missing, and where.
func PickModelFiles(files []LocalFile) ([]LocalFile, error) {
	byDir := map[string]map[string]LocalFile{}
	others := map[string][]string{} // folder -> weight files of other formats
	for _, f := range files {
		p := f.Path
		if p == "" {
			p = f.Name
		}
		p = strings.TrimPrefix(strings.ReplaceAll(p, "\\", "/"), "/")
		dir, name := path.Dir(p), path.Base(p)
		if slices.Contains(weightFormats, name) {
			others[dir] = append(others[dir], name)
		}
		if !slices.Contains(modelFileNames, name) && !hf.IsShardFile(name) {
			continue
		}
		if byDir[dir] == nil {
			byDir[dir] = map[string]LocalFile{}
		}
		if _, dup := byDir[dir][name]; !dup {
			f.Name = name
			byDir[dir][name] = f
		}
	}
	depth := func(dir string) int {
		if dir == "." {
			return 0
		}
		return strings.Count(dir, "/") + 1
	}
	dirs := slices.Collect(maps.Keys(byDir))
	// Shallowest first, then the one with most of the needed files, then by name.
	missing := func(dir string) []string {
		has := func(name string) bool { _, ok := byDir[dir][name]; return ok }
		var m []string
		if !has(hf.ConfigFile) {
			m = append(m, hf.ConfigFile)
		}
		if !has(hf.WeightsFile) && !has(hf.WeightsIndexFile) {
			m = append(m, hf.WeightsFile)
		}
		if t := missingTokenizer(has); t != "" {
			m = append(m, t)
		}
		return m
	}
	needed := func(dir string) int { return 3 - len(missing(dir)) }
	slices.SortFunc(dirs, func(a, b string) int {
		if c := cmp.Compare(needed(b)/3, needed(a)/3); c != 0 { // complete folders first
			return c
		}
		if c := cmp.Compare(depth(a), depth(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(needed(b), needed(a)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(dirs) > 0 && needed(dirs[0]) == 3 {
		var picked []LocalFile
		for _, want := range modelFileNames {
			if f, ok := byDir[dirs[0]][want]; ok {
				picked = append(picked, f)
			}
		}
		// The shards, by name, when the weights are the index (model.safetensors is read
		// alone when there is one, as the loader does).
		if _, one := byDir[dirs[0]][hf.WeightsFile]; !one {
			for _, name := range slices.Sorted(maps.Keys(byDir[dirs[0]])) {
				if hf.IsShardFile(name) {
					picked = append(picked, byDir[dirs[0]][name])
				}
			}
		}
		return picked, nil
	}
	best := "."
	if len(dirs) > 0 {
		best = dirs[0]
	}
	lacks := missing(best)
	where := ""
	if best != "." {
		where = fmt.Sprintf(" in %s/", best)
	}
	msg := fmt.Sprintf("missing %s%s: a model folder needs config.json, model.safetensors and its tokenizer's files (vocab.txt; or tokenizer.json; or vocab.json and merges.txt; or spiece.model or spm.model)", strings.Join(lacks, ", "), where)
	if o := others[best]; len(o) > 0 && slices.Contains(lacks, "model.safetensors") {
		msg += fmt.Sprintf(". The folder has %s: the page reads safetensors weights, one file or shards (convert with transformers: model.save_pretrained(dir, safe_serialization=True))", strings.Join(o, ", "))
	}
	return nil, errors.New(msg)
}

// CheckModelSize reads config.json's sizes and refuses a model too large for the browser.
func CheckModelSize(config []byte) (bert.Config, int64, error) {
	c, err := bert.ParseConfig(config)
	if err != nil {
		return c, 0, fmt.Errorf("config.json: %w", err)
	}
	n := c.ParamCount(bert.AllHeads) // a page model has every head; tied embeddings counted once
	if float64(n)*4 > MaxBrowserWeights {
		return c, n, fmt.Errorf("config.json describes %s parameters, about %s of float32 weights: too large for the browser, which can load at most %s (a WebAssembly page has 4 GiB of memory and a load briefly holds the weights twice). Use the bertlab command line for this model.",
			humanCount(n), humanBytes(float64(n)*4), humanBytes(MaxBrowserWeights))
	}
	return c, n, nil
}

// localName names the user's model after the folder its files come from, when a folder was
// picked or dropped.
func localName(files []LocalFile) string {
	for _, f := range files {
		if dir := path.Base(path.Dir(strings.TrimPrefix(f.Path, "/"))); f.Path != "" && dir != "." && dir != "/" {
			return dir + " (yours)"
		}
	}
	return "your model"
}

// groupDigits writes n with thousands separators (110,106,428).
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func humanBytes(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	}
	return fmt.Sprintf("%.0f kB", b/1e3)
}

// readLocal returns a picked file's contents (File.text() in the browser).
func readLocal(f LocalFile) ([]byte, error) {
	if f.Data != nil {
		return f.Data, nil
	}
	if f.Handle.IsUndefined() || f.Handle.IsNull() {
		return nil, errors.New(f.Name + ": no contents")
	}
	type answer struct {
		s   string
		err error
	}
	ch := make(chan answer, 1)
	var ok, fail js.Func
	ok = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- answer{s: args[0].String()}
		return nil
	})
	fail = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- answer{err: fmt.Errorf("%s: %s", f.Name, args[0].Call("toString").String())}
		return nil
	})
	f.Handle.Call("text").Call("then", ok, fail)
	a := <-ch
	ok.Release()
	fail.Release()
	return []byte(a.s), a.err
}

// LoadLocal loads the BERT folder the user picked or dropped: it checks the files and the
// model's size first, then hands the files to the engine. A failed load keeps the model the
// page had.
func (a *App) LoadLocal(files []LocalFile) {
	a.LoadErr, a.LoadMsg = "", ""
	picked, err := PickModelFiles(files)
	if err != nil {
		a.LoadErr = err.Error()
		return
	}
	var cfgFile LocalFile
	for _, f := range picked {
		if f.Name == "config.json" {
			cfgFile = f
		}
	}
	a.busy++
	a.Loading = true
	a.spawn(func() {
		defer a.Do(func() { a.busy--; a.Loading = false })
		cfg, err := readLocal(cfgFile)
		if err == nil {
			_, _, err = CheckModelSize(cfg)
		}
		if err != nil {
			a.Do(func() { a.LoadErr = err.Error() })
			return
		}
		info, err := a.Eng.LoadFiles(picked)
		a.Do(func() {
			if err != nil {
				a.LoadErr = "the engine could not load your files: " + err.Error() + ". The previous model is still loaded."
				return
			}
			a.Model = ModelRef{Name: localName(picked)}
			a.Info, a.Loaded = info, true
			a.Training.setModel(info.Config.HiddenSize)
			a.LoadMsg = fmt.Sprintf("Loaded your model: %s parameters.", humanCount(info.Parameters))
			// Answers of the old model are stale: ask again.
			a.Preds, a.PredsText, a.Att, a.AttText, a.Steps, a.stepsKey = nil, "", nil, "", nil, ""
			a.refresh()
		})
	})
}
