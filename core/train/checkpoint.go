package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/hf"
)

// Files of a training checkpoint, beside the HF model files (config.json, model.safetensors,
// vocab.txt, tokenizer_config.json).
const (
	// OptimizerFile holds AdamW's moments as torch names them (exp_avg.<param>,
	// exp_avg_sq.<param>) and, in its metadata, the optimizer step, the data position and the
	// seeds: everything a resumed run needs to continue with the same numbers.
	OptimizerFile = "optimizer.safetensors"
	// TrainerStateFile is HF Trainer's trainer_state.json: global_step, epoch and log_history
	// (the loss curve), for people and plots.
	TrainerStateFile = "trainer_state.json"
	// CheckpointPrefix names checkpoint folders: <out>/checkpoint-<step>, as HF Trainer does.
	CheckpointPrefix = "checkpoint-"
)

// A checkpoint folder is written under a temporary name in the same parent and renamed when
// complete, so a folder named checkpoint-<step> is always whole, whatever kills the process.
const tmpPrefix = ".tmp-" + CheckpointPrefix

// SaveCheckpoint writes the model, tokenizer, optimizer state and trainer state to
// Config.OutDir/checkpoint-<step> and removes checkpoints beyond Config.KeepCheckpoints (oldest
// first), and leftovers of saves that were interrupted. A checkpoint of the current step that
// already exists is kept as it is (it holds the same state). It returns the folder.
func (p *Pretrainer) SaveCheckpoint() (string, error) {
	out := p.Config.OutDir
	if out == "" {
		return "", fmt.Errorf("checkpoint: no output folder")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(out, CheckpointPrefix+strconv.Itoa(p.State.Step))
	if _, err := os.Stat(filepath.Join(final, OptimizerFile)); err == nil {
		return final, nil
	}
	removeLeftovers(out)
	tmp, err := os.MkdirTemp(out, tmpPrefix+strconv.Itoa(p.State.Step)+"-")
	if err != nil {
		return "", err
	}
	if err := p.writeCheckpoint(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("checkpoint %s: %w", final, err)
	}
	syncDir(tmp)
	// A folder of this name without an optimizer file is not ours to trust: replace it.
	if err := os.RemoveAll(final); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("checkpoint %s: %w", final, err)
	}
	syncDir(out)
	if k := p.Config.KeepCheckpoints; k > 0 {
		steps, _ := checkpointSteps(out)
		for len(steps) > k {
			os.RemoveAll(filepath.Join(out, CheckpointPrefix+strconv.Itoa(steps[0])))
			steps = steps[1:]
		}
	}
	return final, nil
}

func (p *Pretrainer) writeCheckpoint(dir string) error {
	if err := hf.SaveFolder(dir, p.Model, p.Tokenizer, hf.SaveOptions{}); err != nil {
		return err
	}
	if err := p.saveGenerator(dir); err != nil {
		return err
	}
	o := p.Optimizer
	var ts []hf.Tensor
	for i, prm := range o.Params() {
		m, v := o.Moments(i)
		ts = append(ts, hf.Tensor{Name: "exp_avg." + prm.Name, Shape: prm.T.Shape, Data: m},
			hf.Tensor{Name: "exp_avg_sq." + prm.Name, Shape: prm.T.Shape, Data: v})
	}
	meta := map[string]string{
		"optimizer":       "AdamW",
		"optimizer_step":  strconv.Itoa(o.Step),
		"global_step":     strconv.Itoa(p.State.Step),
		"data_epoch":      strconv.Itoa(p.State.Position.Epoch),
		"data_index":      strconv.Itoa(p.State.Position.Index),
		"data_examples":   strconv.Itoa(p.Data.Len()),
		"data_seed":       strconv.FormatUint(p.Data.Config.Seed, 10),
		"train_seed":      strconv.FormatUint(p.Config.Seed, 10),
		"tokens":          strconv.FormatInt(p.State.Tokens, 10),
		"max_steps":       strconv.Itoa(p.Config.Steps),
		"sentence_task":   p.Data.Config.Instances.Task.String(),
		"max_seq_length":  strconv.Itoa(p.Data.Config.Instances.MaxSeqLength),
		"dynamic_masking": strconv.FormatBool(p.Data.Config.Dynamic),
		// The recipe, for the model card (a run carried on across machines keeps only the
		// newest part of its history, so the card cannot read these from the steps).
		"mask_prob":    strconv.FormatFloat(p.Data.Config.Masking.Prob, 'g', -1, 64),
		"whole_word":   strconv.FormatBool(p.Data.Config.Masking.WholeWord),
		"peak_lr":      strconv.FormatFloat(p.Config.LR, 'g', -1, 64),
		"warmup_steps": strconv.Itoa(p.Config.Warmup),
		"start_step":   strconv.Itoa(p.Config.StartStep),
	}
	if err := hf.Write(filepath.Join(dir, OptimizerFile), ts, hf.WriteOptions{Metadata: meta}); err != nil {
		return err
	}
	return p.writeTrainerState(dir)
}

// TrainerState is the part of HF's trainer_state.json that bertlab writes.
type TrainerState struct {
	GlobalStep int     `json:"global_step"`
	MaxSteps   int     `json:"max_steps"`
	Epoch      float64 `json:"epoch"`
	BatchSize  int     `json:"train_batch_size"`
	LogHistory []Event `json:"log_history"`
}

func (p *Pretrainer) writeTrainerState(dir string) error {
	history := p.History
	if history == nil {
		history = []Event{}
	}
	data, err := json.MarshalIndent(TrainerState{GlobalStep: p.State.Step, MaxSteps: p.Config.Steps,
		Epoch: p.Data.EpochFloat(p.State.Position), BatchSize: p.Config.BatchSize, LogHistory: history}, "", "  ")
	if err != nil {
		return err
	}
	return hf.WriteFileAtomic(filepath.Join(dir, TrainerStateFile), append(data, '\n'))
}

// ReadTrainerState reads dir's trainer_state.json (a run's output folder or a checkpoint).
func ReadTrainerState(dir string) (*TrainerState, error) {
	path := filepath.Join(dir, TrainerStateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ts TrainerState
	if err := json.Unmarshal(data, &ts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &ts, nil
}

// LoadState restores the optimizer moments, the optimizer step, the training state and the
// history of the checkpoint in dir into p, whose model must already hold that checkpoint's
// weights (ResumePretrainer does both). The data must be the one the checkpoint was trained on.
func (p *Pretrainer) LoadState(dir string) error {
	path := filepath.Join(dir, OptimizerFile)
	f, err := hf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	meta := f.Metadata()
	num := func(key string) (int64, error) {
		v, err := strconv.ParseInt(meta[key], 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%s: metadata %q = %q, want a count", path, key, meta[key])
		}
		return v, nil
	}
	var vals [6]int64
	for i, k := range []string{"optimizer_step", "global_step", "data_epoch", "data_index", "data_examples", "tokens"} {
		if vals[i], err = num(k); err != nil {
			return err
		}
	}
	if n := int(vals[4]); n != p.Data.Len() {
		return fmt.Errorf("%s: trained on %d examples an epoch, the data now gives %d: resume with the same data and settings", path, n, p.Data.Len())
	}
	if s := meta["data_seed"]; s != strconv.FormatUint(p.Data.Config.Seed, 10) {
		return fmt.Errorf("%s: data seed %s, this run's is %d", path, s, p.Data.Config.Seed)
	}
	o := p.Optimizer
	for i, prm := range o.Params() {
		m, v := o.Moments(i)
		for _, t := range []struct {
			name string
			dst  []float32
		}{{"exp_avg." + prm.Name, m}, {"exp_avg_sq." + prm.Name, v}} {
			if err := f.ReadFloat32(t.name, t.dst); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	o.Step = int(vals[0])
	p.State = TrainState{Step: int(vals[1]), Position: Position{Epoch: int(vals[2]), Index: int(vals[3])}, Tokens: vals[5]}
	p.History = nil
	if ts, err := ReadTrainerState(dir); err == nil {
		p.History = ts.LogHistory
	}
	return nil
}

// ResumePretrainer continues a run from the checkpoint folder dir (see LatestCheckpoint): the
// model and tokenizer are loaded from it, then the optimizer and training state. data must be
// made as for the original run (same corpus, settings and seed); c may change the number of
// steps, the output folder and how often to save, though a new step count also changes the
// learning-rate schedule.
func ResumePretrainer(dir string, data *PretrainData, c PretrainConfig) (*Pretrainer, error) {
	f, err := hf.LoadFolder(dir)
	if err != nil {
		return nil, err
	}
	p, err := NewPretrainer(f.Model, f.Tokenizer, data, c)
	if err != nil {
		return nil, err
	}
	if err := p.LoadState(dir); err != nil {
		return nil, err
	}
	return p, nil
}

// LatestCheckpoint returns the folder of the newest complete checkpoint under out, or "" when
// there is none. Folders of interrupted saves are never returned.
func LatestCheckpoint(out string) (string, error) {
	steps, err := checkpointSteps(out)
	if err != nil || len(steps) == 0 {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return "", err
	}
	return filepath.Join(out, CheckpointPrefix+strconv.Itoa(steps[len(steps)-1])), nil
}

// checkpointSteps lists the steps of the complete checkpoints in out, ascending.
func checkpointSteps(out string) ([]int, error) {
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil, err
	}
	var steps []int
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), CheckpointPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || strconv.Itoa(n) != rest {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, e.Name(), OptimizerFile)); err == nil {
			steps = append(steps, n)
		}
	}
	sort.Ints(steps)
	return steps, nil
}

// removeLeftovers deletes the temporary folders of saves that did not finish.
func removeLeftovers(out string) {
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			os.RemoveAll(filepath.Join(out, e.Name()))
		}
	}
}

// syncDir flushes a folder's entries to disk where the system allows it (best effort: some
// file systems and the browser's have no directory sync).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
