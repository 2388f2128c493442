package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// shardPattern matches the shard files transformers' save_pretrained writes
// (model-00001-of-00002.safetensors).
var shardPattern = regexp.MustCompile(`^model-[0-9]{5}-of-[0-9]{5}\.safetensors$`)

// IsShardFile reports whether name is a shard file as transformers names them
// (model-00001-of-00002.safetensors): the files a folder's index may point to, which pickers
// of a model folder's files take along with model.safetensors.index.json.
func IsShardFile(name string) bool { return shardPattern.MatchString(name) }

// ShardFile names shard i (from 1) of n as transformers does: model-00001-of-00002.safetensors.
func ShardFile(i, n int) string { return fmt.Sprintf("model-%05d-of-%05d.safetensors", i, n) }

// shardIndexJSON is model.safetensors.index.json as transformers writes it.
type shardIndexJSON struct {
	Metadata struct {
		TotalSize int64 `json:"total_size"`
	} `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// splitShards splits tensors, in order, into shards of at most max bytes of data each, as
// huggingface_hub's split_state_dict_into_shards does: a tensor goes into the current shard
// unless it would take it past max, and a tensor larger than max has a shard of its own.
// size gives a tensor's bytes.
func splitShards(n int, size func(i int) int64, max int64) [][2]int {
	var shards [][2]int
	start, cur := 0, int64(0)
	for i := range n {
		s := size(i)
		if cur > 0 && cur+s > max {
			shards = append(shards, [2]int{start, i})
			start, cur = i, 0
		}
		cur += s
	}
	if n > start || len(shards) == 0 {
		shards = append(shards, [2]int{start, n})
	}
	return shards
}

// WeightsFiles lists the weight files of the model folder at the root of fsys, as a loader
// reads them: model.safetensors when it is there, or else model.safetensors.index.json and the
// shards it names, sorted. name is the folder as messages call it.
func WeightsFiles(fsys fs.FS, name string) ([]string, error) {
	if _, err := fs.Stat(fsys, WeightsFile); err == nil {
		return []string{WeightsFile}, nil
	}
	x, err := readShardIndex(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s and no %s", folderLabel(name), WeightsFile, WeightsIndexFile)
	}
	if err != nil {
		return nil, err
	}
	files := []string{WeightsIndexFile}
	for _, s := range x.Shards() {
		if _, err := fs.Stat(fsys, s); err != nil {
			return nil, fmt.Errorf("%s: shard %s: %w", filepath.Join(name, WeightsIndexFile), s, err)
		}
		files = append(files, s)
	}
	return files, nil
}

// WeightsSize lists the weight files of the model folder dir (WeightsFiles) and their bytes.
func WeightsSize(dir string) ([]string, int64, error) {
	files, err := WeightsFiles(dirFS(dir), dir)
	if err != nil {
		return nil, 0, err
	}
	var n int64
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			return nil, 0, err
		}
		n += fi.Size()
	}
	return files, n, nil
}

// writeSharded writes ts to dir as the shards of at most max bytes of data each and their
// index, then removes the folder's model.safetensors and shard files of an earlier save that
// the new index does not name (so that a loader, which prefers model.safetensors, reads what
// was just written). Each file is written atomically, the index after the shards.
func writeSharded(dir string, ts []Tensor, dt DType, max int64) error {
	size := func(i int) int64 { return int64(len(ts[i].Data)) * int64(dt.Size()) }
	parts := splitShards(len(ts), size, max)
	var x shardIndexJSON
	x.WeightMap = map[string]string{}
	keep := map[string]bool{}
	for i, p := range parts {
		name := ShardFile(i+1, len(parts))
		keep[name] = true
		if err := Write(filepath.Join(dir, name), ts[p[0]:p[1]], WriteOptions{DType: dt, Metadata: map[string]string{"format": "pt"}}); err != nil {
			return fmt.Errorf("save %s: %w", dir, err)
		}
		for j := p[0]; j < p[1]; j++ {
			x.WeightMap[ts[j].Name] = name
			x.Metadata.TotalSize += size(j)
		}
	}
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return fmt.Errorf("save %s: index: %w", dir, err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, WeightsIndexFile), append(b, '\n')); err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	if err := os.Remove(filepath.Join(dir, WeightsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	return removeShards(dir, keep)
}

// removeShards removes the shard files in dir (IsShardFile) that keep does not hold.
func removeShards(dir string, keep map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	for _, e := range entries {
		if IsShardFile(e.Name()) && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("save %s: %w", dir, err)
			}
		}
	}
	return nil
}
