// Package hf reads and writes HuggingFace's model files: safetensors (safetensors.go) and the
// HuggingFace folder layout of a BERT model (config.json, model.safetensors, vocab.txt,
// tokenizer_config.json), including the variants real checkpoints come in.
package hf

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/tokenizer/auto"
)

// File names of the HF folder layout.
const (
	ConfigFile          = "config.json"
	WeightsFile         = "model.safetensors"
	VocabFile           = "vocab.txt"
	TokenizerConfigFile = "tokenizer_config.json"
)

// Report says how a checkpoint's tensors were matched to the model.
type Report struct {
	File    string   // the weights file read
	DType   string   // storage dtype(s) found, e.g. "F32" or "F16"
	Absent  []string // heads not in the file: "pooler", "mlm", "nsp"
	Ignored []string // tensors in the file that the model does not use
	Notes   []string // variants handled: legacy names, tied decoder present, stale buffers
}

// Folder is a loaded HF model folder.
type Folder struct {
	Dir   string
	Model *bert.Model
	// Encoder is the folder's tokenizer, whichever kind (auto.LoadFS); nil when the folder has
	// no tokenizer files.
	Encoder tokenizer.Encoder
	// Tokenizer is Encoder when that is BERT's WordPiece (vocab.txt), which the training labs
	// need; nil otherwise.
	Tokenizer *tokenizer.Tokenizer
	// TokenizerFiles holds the folder's tokenizer files as they were read (auto.Files), so that a
	// writer of the folder keeps them (SaveOptions.TokenizerFiles).
	TokenizerFiles map[string][]byte
	Report         *Report
}

// LoadFolder loads config.json, model.safetensors and, when present, vocab.txt and
// tokenizer_config.json from dir.
func LoadFolder(dir string) (*Folder, error) {
	return LoadFS(dirFS(dir), dir)
}

// LoadFS is the one loader of an HF model folder: it reads the folder at the root of fsys, a
// folder on disk (os.DirFS, see LoadFolder), files embedded in the binary (embed.FS, the
// Cloudflare Worker) or files held in memory (fstest.MapFS, the browser). name is the folder as
// messages and Folder.Dir call it ("" for none). A vocabulary larger than the config's
// vocab_size is an error here, at load, rather than at the first query.
func LoadFS(fsys fs.FS, name string) (*Folder, error) {
	cfg, err := folderConfig(fsys, name)
	if err != nil {
		return nil, err
	}
	f, err := openWeights(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, rep, err := loadModel(f, f.label(), cfg)
	if err != nil {
		return nil, err
	}
	enc, files, err := folderTokenizer(fsys, name, cfg)
	if err != nil {
		return nil, err
	}
	wp, _ := enc.(*tokenizer.Tokenizer)
	return &Folder{Dir: name, Model: m, Encoder: enc, Tokenizer: wp, TokenizerFiles: files, Report: rep}, nil
}

// CompleteHeads gives f's model the heads it lacks (pooler, masked LM, next sentence),
// initialised as transformers initialises them (N(0, initializer_range²), biases 0, LayerNorm
// 1 and 0) from seed, keeping every tensor the folder had; the report's Notes name the new
// tensors. Pre-training a loaded model starts from here.
func (f *Folder) CompleteHeads(seed uint64) error {
	m := f.Model
	if fam := m.Config.Family; fam != "" && fam != bert.FamilyBERT {
		// BERT's pre-training heads (NSP) are not these families' own (RoBERTa and DistilBERT
		// have none, ALBERT has SOP, ELECTRA a discriminator).
		return fmt.Errorf("%s: pre-training a %s model is not supported yet (only BERT's MLM+NSP recipe)", folderLabel(f.Dir), fam)
	}
	if m.Pooler != nil && m.MLM != nil && m.NSP != nil {
		return nil
	}
	full, err := bert.NewRandom(m.Config, bert.AllHeads, seed)
	if err != nil {
		return fmt.Errorf("%s: %w", folderLabel(f.Dir), err)
	}
	have := map[string]bert.Param{}
	for _, p := range m.Params() {
		have[p.Name] = p
	}
	var fresh []string
	for _, p := range full.Params() {
		if q, ok := have[p.Name]; ok {
			copy(p.T.Data, q.T.Data)
		} else {
			fresh = append(fresh, p.Name)
		}
	}
	f.Model = full
	f.Report.Notes = append(f.Report.Notes, fmt.Sprintf("%s has no %s: initialised at random", f.Dir, strings.Join(fresh, ", ")))
	return nil
}

// dirFS is os.DirFS of dir, "" meaning the current directory (os.DirFS("") is the root).
func dirFS(dir string) fs.FS {
	if dir == "" {
		dir = "."
	}
	return os.DirFS(dir)
}

// folderLabel names a folder in messages: "model folder NAME", or "model folder" for files
// without a folder's name (the browser's).
func folderLabel(name string) string {
	if name == "" {
		return "model folder"
	}
	return "model folder " + name
}

// folderConfig reads the config.json at the root of fsys.
func folderConfig(fsys fs.FS, name string) (bert.Config, error) {
	cfgBytes, err := fs.ReadFile(fsys, ConfigFile)
	if err != nil {
		return bert.Config{}, fmt.Errorf("%s: %w", folderLabel(name), err)
	}
	cfg, err := bert.ParseConfig(cfgBytes)
	if err != nil {
		return bert.Config{}, fmt.Errorf("%s: %s: %w", folderLabel(name), ConfigFile, err)
	}
	return cfg, nil
}

// openWeights opens the weights at the root of fsys: model.safetensors, or else the shards
// that model.safetensors.index.json names, read as one. One of them must exist (a folder with
// only pytorch_model.bin gets the one-line conversion to run).
func openWeights(fsys fs.FS, name string) (weights, error) {
	f, err := openSafetensors(fsys, name, WeightsFile)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if x, err2 := readShardIndex(fsys, name); err2 == nil {
		return OpenSharded(fsys, name, x)
	} else if !errors.Is(err2, fs.ErrNotExist) {
		return nil, err2
	}
	if _, err2 := fs.Stat(fsys, "pytorch_model.bin"); err2 == nil {
		return nil, fmt.Errorf("%s: has pytorch_model.bin but no %s; convert it with transformers (model.save_pretrained(dir, safe_serialization=True))", folderLabel(name), WeightsFile)
	}
	return nil, fmt.Errorf("%s: %w", folderLabel(name), err)
}

// folderTokenizer loads the tokenizer at the root of fsys (auto.LoadFS) and the files it was
// made from, or returns nil when the folder has no tokenizer files.
func folderTokenizer(fsys fs.FS, name string, cfg bert.Config) (tokenizer.Encoder, map[string][]byte, error) {
	tok, err := auto.LoadFS(fsys, name)
	if errors.Is(err, auto.ErrNone) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", folderLabel(name), err)
	}
	if n := tok.VocabSize(); n > cfg.VocabSize {
		return nil, nil, fmt.Errorf("%s: the %s tokenizer has %d tokens but config.json vocab_size is %d", folderLabel(name), tok.Kind(), n, cfg.VocabSize)
	}
	files := map[string][]byte{}
	for _, file := range auto.Files {
		b, err := fs.ReadFile(fsys, file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", folderLabel(name), err)
		}
		files[file] = b
	}
	return tok, files, nil
}

// bodyKey maps a file's tensor name to the name Model.Params uses: legacy gamma/beta renamed,
// and a BertModel checkpoint's bare "embeddings."/"encoder."/"pooler." given the "bert." prefix.
func bodyKey(name string) string {
	n := CanonicalName(name)
	for _, p := range []string{"embeddings.", "encoder.", "pooler."} {
		if strings.HasPrefix(n, p) {
			return "bert." + n
		}
	}
	return n
}

// LoadModel reads the safetensors file at path into a new model of config cfg. The heads
// present in the file decide the model's heads. Tensors are read straight into the model's
// parameters (no second copy of the weights).
func LoadModel(path string, cfg bert.Config) (*bert.Model, *Report, error) {
	f, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return loadModel(f, path, cfg)
}

func loadModel(f weights, path string, cfg bert.Config) (*bert.Model, *Report, error) {
	rep := &Report{File: path}
	fam := cfg.Family
	// fname names a parameter as the family's checkpoints do, for messages.
	fname := func(key string) string { return FamilyName(fam, key) }

	byKey := map[string]string{} // our name -> file name
	dtypes := map[string]bool{}
	var foreign []string // tensors that are not the family's
	for _, name := range f.Names() {
		key, ok := BERTName(fam, name)
		if !ok {
			foreign = append(foreign, name)
			continue
		}
		if CanonicalName(name) != name {
			rep.Notes = appendOnce(rep.Notes, "legacy LayerNorm gamma/beta names")
		}
		if prev, dup := byKey[key]; dup {
			return nil, nil, fmt.Errorf("checkpoint %s: tensors %q and %q both map to %q", path, prev, name, key)
		}
		byKey[key] = name
		info, _ := f.Info(name)
		dtypes[string(info.DType)] = true
	}
	for d := range dtypes {
		rep.DType = joinSorted(rep.DType, d)
	}
	has := func(k string) bool { _, ok := byKey[k]; return ok }
	heads := bert.Heads{
		Pooler: has("bert.pooler.dense.weight"),
		MLM:    has("cls.predictions.transform.dense.weight"),
		NSP:    has("cls.seq_relationship.weight"),
		RTD:    has("discriminator_predictions.dense.weight"),
	}
	if heads.NSP && !heads.Pooler {
		return nil, nil, fmt.Errorf("checkpoint %s: has %s but no %s", path, fname("cls.seq_relationship.weight"), fname("bert.pooler.dense.weight"))
	}
	for _, h := range []struct {
		on   bool
		name string
	}{{heads.Pooler, "pooler"}, {heads.MLM, "mlm"}, {heads.NSP, "nsp"}} {
		if !h.on {
			rep.Absent = append(rep.Absent, h.name)
		}
	}
	m, err := bert.NewModel(cfg, heads)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	used := map[string]bool{}
	read := func(key string, t *tensor.Tensor) error {
		name := byKey[key]
		used[key] = true
		info, _ := f.Info(name)
		if !tensor.SameShape(info.Shape, t.Shape) {
			return fmt.Errorf("checkpoint %s: tensor %q: shape %s, config.json expects %s", path, name, tensor.ShapeString(info.Shape), tensor.ShapeString(t.Shape))
		}
		// ReadFloat32's errors already name the file and the tensor.
		if err := f.ReadFloat32(name, t.Data); err != nil {
			return err
		}
		return nil
	}
	for _, p := range m.Params() {
		if !has(p.Name) {
			if p.Name == "cls.predictions.bias" && has("cls.predictions.decoder.bias") {
				if err := read("cls.predictions.decoder.bias", p.T); err != nil {
					return nil, nil, err
				}
				rep.Notes = append(rep.Notes, "MLM bias read from "+fname("cls.predictions.decoder.bias"))
				continue
			}
			if p.Name == "cls.predictions.bias" {
				rep.Notes = append(rep.Notes, fname("cls.predictions.bias")+" absent: initialised to 0")
				continue
			}
			if p.Name == "bert.embeddings.position_embeddings.weight" && cfg.SinusoidalPosEmbds {
				bert.DistilBERTSinusoids(p.T.Data, cfg.MaxPositionEmbeddings, cfg.HiddenSize)
				rep.Notes = append(rep.Notes, fname(p.Name)+" absent: the sinusoids of sinusoidal_pos_embds")
				continue
			}
			return nil, nil, fmt.Errorf("checkpoint %s: tensor %q missing (shape %s expected)", path, fname(p.Name), tensor.ShapeString(p.T.Shape))
		}
		if err := read(p.Name, p.T); err != nil {
			return nil, nil, err
		}
	}
	if heads.MLM {
		const dec = "cls.predictions.decoder.weight"
		switch {
		case cfg.TieWordEmbeddings && has(dec):
			used[dec] = true
			rep.Notes = append(rep.Notes, "decoder weight present; tied to the word embeddings as transformers does")
		case cfg.TieWordEmbeddings:
			rep.Notes = append(rep.Notes, "decoder weight absent; tied to the word embeddings")
		}
		if has("cls.predictions.decoder.bias") {
			used["cls.predictions.decoder.bias"] = true
		}
	}
	for key, name := range byKey {
		if used[key] {
			continue
		}
		if strings.HasSuffix(key, "embeddings.position_ids") || (fam != "" && strings.HasSuffix(key, "embeddings.token_type_ids")) {
			rep.Notes = append(rep.Notes, "stale buffer "+name+" ignored")
			continue
		}
		rep.Ignored = append(rep.Ignored, name)
	}
	rep.Ignored = append(rep.Ignored, foreign...)
	sort.Strings(rep.Ignored)
	return m, rep, nil
}

// SaveOptions choose how SaveFolder stores the weights.
type SaveOptions struct {
	// DType of the weights: "F32" (default), "F16" or "BF16".
	DType DType
	// TokenizerFiles are tokenizer files to write as they are (a loaded Folder's
	// TokenizerFiles: tokenizer.json, vocab.json, merges.txt, spiece.model, ...). When
	// SaveFolder is given a WordPiece tokenizer, that writes vocab.txt and
	// tokenizer_config.json instead of the copies.
	TokenizerFiles map[string][]byte
	// MaxShardSize, when above 0, splits weights of more bytes than that into shards of at
	// most that many bytes of tensor data each (model-00001-of-00002.safetensors, ...) with
	// their index, model.safetensors.index.json, as transformers' save_pretrained does with
	// max_shard_size; a single tensor larger than that has a shard of its own. 0 writes one
	// model.safetensors.
	MaxShardSize int64
}

// SaveFolder writes m (and tok, if not nil, and opt.TokenizerFiles) to dir in HF layout, each
// file written to a temporary name and renamed, so a crash never leaves a half-written file.
func SaveFolder(dir string, m *bert.Model, tok *tokenizer.Tokenizer, opt SaveOptions) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	cfg := m.Config
	arch := "BertModel"
	switch {
	case m.MLM != nil && m.NSP != nil:
		arch = "BertForPreTraining"
	case m.MLM != nil:
		arch = "BertForMaskedLM"
	}
	params := m.Params()
	if fn, ok := families[cfg.Family]; ok {
		arch = familyArchs[cfg.Family][0]
		switch {
		case m.NSP != nil && cfg.Family == bert.FamilyALBERT && m.MLM != nil:
			arch = "AlbertForPreTraining" // its SOP head is the NSP head's shape
		case m.NSP != nil:
			return fmt.Errorf("save %s: %s has no next-sentence head", dir, cfg.Family)
		case m.RTD != nil && m.MLM != nil:
			return fmt.Errorf("save %s: no transformers class has both ELECTRA's discriminator and generator heads", dir)
		case m.RTD != nil:
			arch = "ElectraForPreTraining"
		case m.MLM != nil:
			arch = familyArchs[cfg.Family][1]
		}
		// HF saves a model with heads with the body's prefix, a bare model without it.
		named := make([]bert.Param, len(params))
		for i, p := range params {
			n := FamilyName(cfg.Family, p.Name)
			if m.MLM == nil && m.NSP == nil && m.RTD == nil {
				n = strings.TrimPrefix(n, fn.prefix)
			}
			named[i] = bert.Param{Name: n, T: p.T}
		}
		params = named
	}
	if _, ok := cfg.Extra["architectures"]; !ok {
		if err := cfg.SetExtra("architectures", []string{arch}); err != nil {
			return err
		}
	}
	cj, err := cfg.MarshalJSON()
	if err != nil {
		return fmt.Errorf("save %s: config: %w", dir, err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, ConfigFile), append(cj, '\n')); err != nil {
		return err
	}
	if err := writeWeights(dir, params, opt.DType, opt.MaxShardSize); err != nil {
		return err
	}
	for _, file := range auto.Files {
		data, ok := opt.TokenizerFiles[file]
		if !ok || tok != nil && (file == tokenizer.VocabFile || file == tokenizer.ConfigFile) {
			continue
		}
		if err := WriteFileAtomic(filepath.Join(dir, file), data); err != nil {
			return fmt.Errorf("save %s: %w", dir, err)
		}
	}
	if tok != nil {
		if err := tok.SaveDir(dir); err != nil {
			return fmt.Errorf("save %s: %w", dir, err)
		}
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and renames it over
// path, so that a crash never leaves a half-written file.
func WriteFileAtomic(path string, data []byte) error {
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func joinSorted(a, b string) string {
	if a == "" {
		return b
	}
	parts := append(strings.Split(a, "+"), b)
	sort.Strings(parts)
	return strings.Join(parts, "+")
}

// writeWeights writes params to dir/WeightsFile as dt (F32 when empty), with the "format": "pt"
// metadata that transformers reads, or, when they hold more than maxShard bytes (maxShard > 0),
// as shards with their index (writeSharded). Either way it then removes the other layout's
// files that an earlier save left, so that the folder holds one set of weights.
func writeWeights(dir string, params []bert.Param, dt DType, maxShard int64) error {
	ts := make([]Tensor, 0, len(params))
	var total int64
	if dt == "" {
		dt = F32
	}
	for _, p := range params {
		ts = append(ts, Tensor{Name: p.Name, Shape: p.T.Shape, Data: p.T.Data})
		total += int64(len(p.T.Data)) * int64(dt.Size())
	}
	if maxShard > 0 && total > maxShard {
		return writeSharded(dir, ts, dt, maxShard)
	}
	if err := Write(filepath.Join(dir, WeightsFile), ts, WriteOptions{DType: dt, Metadata: map[string]string{"format": "pt"}}); err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	if err := os.Remove(filepath.Join(dir, WeightsIndexFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	return removeShards(dir, nil)
}
