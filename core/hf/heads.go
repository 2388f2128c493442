package hf

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// TaskLoadOptions say how a checkpoint becomes a model with a fine-tuning head.
type TaskLoadOptions struct {
	// Labels name the classes of a classifier about to be fine-tuned. nil takes the folder's
	// id2label (a fine-tuned model). When the checkpoint's classifier has the same set of labels
	// it is kept with the checkpoint's order: map names to ids through TaskModel.Labels.
	// QA takes none.
	Labels []string
	// Seed initialises what the checkpoint lacks: the head, and for sequence classification
	// the pooler.
	Seed uint64
	// RequireHead makes a checkpoint without the task's trained head an error (for evaluation).
	RequireHead bool
}

// TaskFolder is an HF model folder loaded as a task model.
type TaskFolder struct {
	Dir       string
	Model     *bert.TaskModel
	Tokenizer *tokenizer.Tokenizer // nil if the folder has no WordPiece tokenizer (vocab.txt)
	Report    *Report
}

// LoadTaskFolder loads an HF folder (a pre-training checkpoint, a plain BertModel or a
// fine-tuned task model) as a model of the task, as transformers' BertFor<Task>.from_pretrained
// does: the body from the "bert." tensors, the head from the file when it holds a head of this
// task for the labels asked, otherwise initialised (N(0, initializer_range²), bias 0), which the
// report's Notes say. Tensors the task model does not use (pre-training heads, the pooler of a
// task without one) are listed in Report.Ignored.
func LoadTaskFolder(dir string, task bert.Task, opt TaskLoadOptions) (*TaskFolder, error) {
	return LoadTaskFS(dirFS(dir), dir, task, opt)
}

// LoadTaskFS is LoadTaskFolder for the folder at the root of fsys (see LoadFS).
func LoadTaskFS(fsys fs.FS, name string, task bert.Task, opt TaskLoadOptions) (*TaskFolder, error) {
	cfg, err := folderConfig(fsys, name)
	if err != nil {
		return nil, err
	}
	f, err := openWeights(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, rep, err := loadTaskModel(f, f.label(), cfg, task, opt)
	if err != nil {
		return nil, err
	}
	enc, _, err := folderTokenizer(fsys, name, cfg)
	if err != nil {
		return nil, err
	}
	tok, _ := enc.(*tokenizer.Tokenizer) // the task models are BERT's: WordPiece
	return &TaskFolder{Dir: name, Model: m, Tokenizer: tok, Report: rep}, nil
}

// LoadTaskModel reads the safetensors file at path as a task model of config cfg (see
// LoadTaskFolder).
func LoadTaskModel(path string, cfg bert.Config, task bert.Task, opt TaskLoadOptions) (*bert.TaskModel, *Report, error) {
	f, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return loadTaskModel(f, path, cfg, task, opt)
}

// LoadTaskModelReader is LoadTaskModel for a safetensors file held in memory or any io.ReaderAt.
func LoadTaskModelReader(r io.ReaderAt, size int64, name string, cfg bert.Config, task bert.Task, opt TaskLoadOptions) (*bert.TaskModel, *Report, error) {
	f, err := NewReader(r, size, name)
	if err != nil {
		return nil, nil, err
	}
	return loadTaskModel(f, name, cfg, task, opt)
}

func loadTaskModel(f weights, path string, cfg bert.Config, task bert.Task, opt TaskLoadOptions) (*bert.TaskModel, *Report, error) {
	if _, err := bert.ParseTask(string(task)); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if _, ok := families[cfg.Family]; ok {
		return nil, nil, fmt.Errorf("checkpoint %s: task heads of model_type %q are not supported yet (only bert's)", path, cfg.Family)
	}
	head := task.HeadName()
	wName, bName := head+".weight", head+".bias"
	wInfo, hasW := f.Info(wName)
	_, hasB := f.Info(bName)
	hasHead := hasW && hasB && len(wInfo.Shape) == 2 && wInfo.Shape[1] == cfg.HiddenSize
	if (hasW || hasB) && !hasHead {
		return nil, nil, fmt.Errorf("checkpoint %s: head %s: want %s [n, %d] and %s [n]", path, head, wName, cfg.HiddenSize, bName)
	}
	var notes []string
	// A head of another task with the same name (a classifier) is not this task's head.
	if hasHead {
		if arch := architectures(cfg); len(arch) > 0 && !slices.Contains(arch, string(task)) {
			notes = append(notes, fmt.Sprintf("%s of %v not used for %s", head, arch, task))
			hasHead = false
		}
	}
	fileLabels, err := bert.ConfigLabels(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	labels := opt.Labels
	if task == bert.QuestionAnswering {
		if labels != nil {
			return nil, nil, fmt.Errorf("checkpoint %s: %s takes no labels", path, task)
		}
		if hasHead && wInfo.Shape[0] != 2 {
			return nil, nil, fmt.Errorf("checkpoint %s: %s has %d outputs, want 2 (start, end)", path, wName, wInfo.Shape[0])
		}
	} else if hasHead {
		n := wInfo.Shape[0]
		if len(fileLabels) != n {
			fileLabels = bert.DefaultLabelNames(n)
		}
		switch {
		case labels == nil:
			labels = fileLabels
		case sameSet(labels, fileLabels):
			labels = fileLabels
		default:
			notes = append(notes, fmt.Sprintf("%s in the file classifies %q, not %q: not used", head, fileLabels, labels))
			hasHead = false
		}
	}
	if !hasHead && opt.RequireHead {
		return nil, nil, fmt.Errorf("checkpoint %s: no trained %s head (%s) for %s: fine-tune the model first", path, task, head, task)
	}
	if labels == nil && task != bert.QuestionAnswering {
		return nil, nil, fmt.Errorf("checkpoint %s: no labels for the new %s head", path, task)
	}

	body, rep, err := loadModel(f, path, cfg)
	if err != nil {
		return nil, nil, err
	}
	hadPooler := body.Pooler != nil
	m, err := bert.NewTaskModel(body, task, labels, opt.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	rep.Absent = nil
	if m.Bert.Pooler != nil && !hadPooler {
		rep.Absent = append(rep.Absent, "pooler")
		notes = append(notes, "bert.pooler absent: initialised from N(0, initializer_range²)")
	}
	if hasHead {
		for _, p := range []struct {
			name string
			t    *tensor.Tensor
		}{{wName, m.Head.W}, {bName, m.Head.B}} {
			if err := f.ReadFloat32(p.name, p.t.Data); err != nil {
				return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
			}
		}
	} else {
		rep.Absent = append(rep.Absent, head)
		notes = append(notes, fmt.Sprintf("%s initialised from N(0, initializer_range²), bias 0: train it before use", head))
	}
	// What the task model does not read from the file, as transformers lists unused weights.
	used := map[string]bool{}
	for _, p := range m.Bert.Params() {
		used[p.Name] = true
	}
	used[wName], used[bName] = hasHead, hasHead
	rep.Ignored = nil
	for _, name := range f.Names() {
		key := bodyKey(name)
		if !used[key] && !strings.HasSuffix(key, "embeddings.position_ids") {
			rep.Ignored = append(rep.Ignored, name)
		}
	}
	sort.Strings(rep.Ignored)
	rep.Notes = slices.DeleteFunc(rep.Notes, func(n string) bool {
		return strings.Contains(n, "decoder") || strings.Contains(n, "cls.predictions")
	})
	rep.Notes = append(rep.Notes, notes...)
	return m, rep, nil
}

// architectures returns config.json's "architectures" list.
func architectures(cfg bert.Config) []string {
	var a []string
	if raw, ok := cfg.Extra["architectures"]; ok {
		_ = json.Unmarshal(raw, &a) // not a list of strings: as if absent
	}
	return a
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// SaveTaskFolder writes a task model (and tok, if not nil) to dir in HF layout, loadable by
// transformers' BertFor<Task>.from_pretrained: config.json with "architectures" and the labels,
// model.safetensors with the body under "bert." and the head. Files are written atomically.
func SaveTaskFolder(dir string, m *bert.TaskModel, tok *tokenizer.Tokenizer, opt SaveOptions) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	if fam := m.Bert.Config.Family; !fam.Is(bert.FamilyBERT) {
		return fmt.Errorf("save %s: a %s body with BERT's %s head is a lab probe, not an HF task class of model_type %q", dir, fam.Name(), m.Task, fam)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	cfg, err := m.HFConfig()
	if err != nil {
		return fmt.Errorf("save %s: config: %w", dir, err)
	}
	cj, err := cfg.MarshalJSON()
	if err != nil {
		return fmt.Errorf("save %s: config: %w", dir, err)
	}
	// Weights first: a folder whose config.json names the task always has the task's weights.
	if err := writeWeights(dir, m.Params(), opt.DType, opt.MaxShardSize); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, ConfigFile), append(cj, '\n')); err != nil {
		return err
	}
	if tok != nil {
		if err := tok.SaveDir(dir); err != nil {
			return fmt.Errorf("save %s: %w", dir, err)
		}
	}
	return nil
}
