package hf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// WeightsIndexFile is the index of a checkpoint saved in shards (transformers'
// save_pretrained with max_shard_size): its weight_map names the shard file of every tensor.
const WeightsIndexFile = "model.safetensors.index.json"

// maxIndexSize bounds model.safetensors.index.json: a real one lists a few thousand tensors
// (BERT-Large about 400, a 70B model about 800), well under a MiB.
const maxIndexSize = 32 << 20

// ShardIndex is a parsed model.safetensors.index.json.
type ShardIndex struct {
	// TotalSize is metadata.total_size, the bytes of tensor data over all shards (0 if absent).
	TotalSize int64
	// WeightMap maps each tensor name to the shard file that holds it.
	WeightMap map[string]string
}

// Shards returns the shard files the index names, sorted, each once.
func (x *ShardIndex) Shards() []string {
	var s []string
	for _, f := range x.WeightMap {
		s = append(s, f)
	}
	sort.Strings(s)
	return slices.Compact(s)
}

// ParseShardIndex reads a model.safetensors.index.json. name is the file as messages call it.
// The weight_map must be a non-empty object of tensor name to shard file name; a shard file
// name must be a plain name in the same folder (no '/', no ".."), so that an index from the
// network cannot point the loader or the downloader elsewhere.
func ParseShardIndex(data []byte, name string) (*ShardIndex, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	if len(data) > maxIndexSize {
		return nil, fail("%d bytes, more than the %d MiB an index may have", len(data), maxIndexSize>>20)
	}
	var raw struct {
		Metadata  map[string]json.RawMessage `json:"metadata"`
		WeightMap map[string]json.RawMessage `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fail("%v", err)
	}
	if raw.WeightMap == nil {
		return nil, fail("no weight_map")
	}
	if len(raw.WeightMap) == 0 {
		return nil, fail("weight_map is empty")
	}
	x := &ShardIndex{WeightMap: make(map[string]string, len(raw.WeightMap))}
	if ts, ok := raw.Metadata["total_size"]; ok {
		var n float64 // transformers writes an integer; some tools write it as a float
		if err := json.Unmarshal(ts, &n); err != nil || n < 0 || n > 1<<62 || n != float64(int64(n)) {
			return nil, fail("metadata.total_size %s is not a byte count", ts)
		}
		x.TotalSize = int64(n)
	}
	for tensor, v := range raw.WeightMap {
		var shard string
		if err := json.Unmarshal(v, &shard); err != nil {
			return nil, fail("weight_map[%q]: %s is not a file name", tensor, v)
		}
		if shard == "" || shard == "." || shard == ".." || strings.ContainsAny(shard, "/\\\x00") {
			return nil, fail("weight_map[%q]: shard %q is not a plain file name in the model folder", tensor, shard)
		}
		x.WeightMap[tensor] = shard
	}
	return x, nil
}

// readShardIndex reads and parses the model.safetensors.index.json at the root of fsys (an
// error wrapping fs.ErrNotExist when there is none). name is the folder as messages call it.
func readShardIndex(fsys fs.FS, name string) (*ShardIndex, error) {
	b, err := fs.ReadFile(fsys, WeightsIndexFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", folderLabel(name), err)
	}
	return ParseShardIndex(b, filepath.Join(name, WeightsIndexFile))
}

// weights is what loadModel reads tensors from: one safetensors file, or the shards of an
// index seen as one.
type weights interface {
	Names() []string
	Info(name string) (TensorInfo, bool)
	ReadFloat32(name string, dst []float32) error
	Close() error
	// label names the weights in messages: the file, or the index.
	label() string
}

func (f *File) label() string { return f.name }

// Sharded is the shards of a checkpoint, read as one: each tensor comes from the shard the
// index names. Its errors name the shard and the tensor.
type Sharded struct {
	name   string           // the index, as messages call it
	shards map[string]*File // shard file name -> open file
	owner  map[string]*File // tensor -> the shard holding it
	names  []string
}

// OpenSharded opens the shards that the index x names at the root of fsys and checks them
// against it: every tensor of the weight_map must be in the shard it names, and no tensor may
// be in two shards. name is the folder as messages call it ("" for none).
func OpenSharded(fsys fs.FS, name string, x *ShardIndex) (*Sharded, error) {
	s := &Sharded{name: filepath.Join(name, WeightsIndexFile), shards: map[string]*File{}, owner: map[string]*File{}}
	for _, shard := range x.Shards() {
		f, err := openSafetensors(fsys, name, shard)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: shard %s: %w", s.name, shard, err)
		}
		s.shards[shard] = f
	}
	// Tensors are listed shard by shard in file order, so that reading them in this order
	// reads each shard front to back.
	for _, shard := range x.Shards() {
		f := s.shards[shard]
		for _, t := range f.Names() {
			if prev, dup := s.owner[t]; dup {
				s.Close()
				return nil, fmt.Errorf("%s: tensor %q is in both %s and %s", s.name, t, prev.name, f.name)
			}
			if want, ok := x.WeightMap[t]; ok && want != shard {
				s.Close()
				return nil, fmt.Errorf("%s: tensor %q is in shard %s but weight_map names %s", s.name, t, f.name, want)
			}
			s.owner[t] = f
			s.names = append(s.names, t)
		}
	}
	missing := []string{}
	for t, shard := range x.WeightMap {
		if _, ok := s.owner[t]; !ok {
			missing = append(missing, fmt.Sprintf("%q (weight_map: %s)", t, shard))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		s.Close()
		if len(missing) > 5 {
			missing = append(missing[:5], fmt.Sprintf("and %d more", len(missing)-5))
		}
		return nil, fmt.Errorf("%s: tensors missing from their shards: %s", s.name, strings.Join(missing, ", "))
	}
	return s, nil
}

// Names returns the tensor names, shard by shard in file order. The slice is the caller's.
func (s *Sharded) Names() []string { return slices.Clone(s.names) }

// Info returns the header entry of the named tensor in its shard.
func (s *Sharded) Info(name string) (TensorInfo, bool) {
	f, ok := s.owner[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Info(name)
}

// ReadFloat32 reads the named tensor from its shard (see File.ReadFloat32); errors name the
// shard file and the tensor.
func (s *Sharded) ReadFloat32(name string, dst []float32) error {
	f, ok := s.owner[name]
	if !ok {
		return fmt.Errorf("%s: tensor %q not found in any shard", s.name, name)
	}
	return f.ReadFloat32(name, dst)
}

// Close closes every shard.
func (s *Sharded) Close() error {
	var first error
	for _, f := range s.shards {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Sharded) label() string { return s.name }

// openSafetensors opens the safetensors file file at the root of fsys, read through
// io.ReaderAt when the file offers it (os.DirFS, embed.FS and fstest.MapFS files do), so that
// the weights are copied once, straight into the model; any other file is read into memory
// first.
func openSafetensors(fsys fs.FS, name, file string) (*File, error) {
	wpath := filepath.Join(name, file)
	osf, err := fsys.Open(file)
	if err != nil {
		return nil, err
	}
	st, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("checkpoint %s: %w", wpath, err)
	}
	ra, ok := osf.(io.ReaderAt)
	size := st.Size()
	if !ok {
		b, err := io.ReadAll(osf)
		if err != nil {
			osf.Close()
			return nil, fmt.Errorf("checkpoint %s: %w", wpath, err)
		}
		ra, size = bytes.NewReader(b), int64(len(b))
	}
	f, err := NewReader(ra, size, wpath)
	if err != nil {
		osf.Close()
		return nil, err
	}
	f.closer = osf
	return f, nil
}
