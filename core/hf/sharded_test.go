package hf_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// shardedFolder writes the fixture's config and vocab, and ts split into shards at the given
// tensor positions, named and indexed as transformers' save_pretrained(max_shard_size=...)
// names and indexes them. It returns the folder and the index's weight_map.
func shardedFolder(t *testing.T, ts []hf.Tensor, cuts ...int) (string, map[string]string) {
	t.Helper()
	dir := variantFolder(t, ts, hf.F32)
	if err := os.Remove(filepath.Join(dir, hf.WeightsFile)); err != nil {
		t.Fatal(err)
	}
	bounds := append(append([]int{0}, cuts...), len(ts))
	n := len(bounds) - 1
	wm := map[string]string{}
	var total int64
	for i := range n {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, n)
		part := ts[bounds[i]:bounds[i+1]]
		if err := hf.Write(filepath.Join(dir, name), part, hf.WriteOptions{DType: hf.F32, Metadata: map[string]string{"format": "pt"}}); err != nil {
			t.Fatal(err)
		}
		for _, x := range part {
			wm[x.Name] = name
			total += 4 * int64(len(x.Data))
		}
	}
	writeIndex(t, dir, map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": wm})
	return dir, wm
}

// sameParams checks that every parameter of got equals want's of that name, bit for bit.
func sameParams(t *testing.T, got, want *bert.Model, what string) {
	t.Helper()
	w := map[string][]float32{}
	for _, p := range want.Params() {
		w[p.Name] = p.T.Data
	}
	for _, p := range got.Params() {
		if !slices.Equal(p.T.Data, w[p.Name]) {
			t.Errorf("parameter %s differs %s", p.Name, what)
		}
	}
}

func writeIndex(t *testing.T, dir string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, hf.WeightsIndexFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestShardedLoadsAsOne splits the fixture into two shards and checks the model loads with
// every parameter and every output bit for bit equal to the single-file model's, from disk and
// from files in memory (the browser's way), as a plain model and as a task model.
func TestShardedLoadsAsOne(t *testing.T) {
	ref, err := hf.LoadFolder(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	opts := bert.Options{MLM: true, NSP: true}
	refOut, err := ref.Model.Forward(fixtureBatch(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := fixtureTensors(t)
	dir, wm := shardedFolder(t, ts, len(ts)/2)
	if got := len(slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, v := range wm {
			if !yield(v) {
				return
			}
		}
	}))); got != 2 {
		t.Fatalf("%d shards written, want 2", got)
	}
	mem := fstest.MapFS{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		mem[e.Name()] = &fstest.MapFile{Data: b}
	}
	loads := map[string]func() (*hf.Folder, error){
		"disk":   func() (*hf.Folder, error) { return hf.LoadFolder(dir) },
		"memory": func() (*hf.Folder, error) { return hf.LoadFS(mem, "") },
	}
	for name, load := range loads {
		t.Run(name, func(t *testing.T) {
			f, err := load()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(f.Report.File, hf.WeightsIndexFile) {
				t.Errorf("report names %q, want the index", f.Report.File)
			}
			if len(f.Report.Ignored) != 0 {
				t.Errorf("ignored: %v", f.Report.Ignored)
			}
			sameParams(t, f.Model, ref.Model, "from the single-file model's")
			out, err := f.Model.Forward(fixtureBatch(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out.Hidden.Data, refOut.Hidden.Data) || !slices.Equal(out.MLMLogits.Data, refOut.MLMLogits.Data) || !slices.Equal(out.NSPLogits.Data, refOut.NSPLogits.Data) {
				t.Error("outputs differ from the single-file model's")
			}
		})
	}
	tf, err := hf.LoadTaskFolder(dir, bert.SequenceClassification, hf.TaskLoadOptions{Labels: []string{"neg", "pos"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tf.Model.Bert.Params() {
		for _, q := range ref.Model.Params() {
			if p.Name == q.Name && !slices.Equal(p.T.Data, q.T.Data) {
				t.Errorf("task model: %s differs", p.Name)
			}
		}
	}
}

// TestShardedErrors checks that a broken sharded folder gets an error naming the shard and
// the tensor.
func TestShardedErrors(t *testing.T) {
	ts := fixtureTensors(t)
	const s1, s2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
	first, last := ts[0].Name, ts[len(ts)-1].Name
	tests := []struct {
		name  string
		edit  func(dir string, wm map[string]string)
		wants []string
	}{
		{"shard file missing", func(dir string, _ map[string]string) {
			os.Remove(filepath.Join(dir, s2))
		}, []string{hf.WeightsIndexFile, "shard " + s2}},
		{"tensor not in its shard", func(dir string, wm map[string]string) {
			wm["bert.extra.weight"] = s1
			writeIndex(t, dir, map[string]any{"weight_map": wm})
		}, []string{`"bert.extra.weight"`, s1, "missing"}},
		{"weight_map names the wrong shard", func(dir string, wm map[string]string) {
			wm[last] = s1
			writeIndex(t, dir, map[string]any{"weight_map": wm})
		}, []string{last, s2, "names " + s1}},
		{"tensor in two shards", func(dir string, wm map[string]string) {
			if err := hf.Write(filepath.Join(dir, s2), append([]hf.Tensor{ts[0]}, ts[len(ts)/2:]...), hf.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, []string{first, s1, s2}},
		{"shard outside the folder", func(dir string, wm map[string]string) {
			wm[first] = "../" + s1
			writeIndex(t, dir, map[string]any{"weight_map": wm})
		}, []string{first, "not a plain file name"}},
		{"broken shard", func(dir string, _ map[string]string) {
			os.WriteFile(filepath.Join(dir, s1), []byte("not safetensors at all"), 0o644)
		}, []string{s1, "header length"}},
		{"bad index", func(dir string, _ map[string]string) {
			os.WriteFile(filepath.Join(dir, hf.WeightsIndexFile), []byte(`{"weight_map": []}`), 0o644)
		}, []string{hf.WeightsIndexFile, "weight_map"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, wm := shardedFolder(t, ts, len(ts)/2)
			tc.edit(dir, wm)
			_, err := hf.LoadFolder(dir)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q should name %q", err, w)
				}
			}
		})
	}
}

// TestSaveFolderShards saves the fixture model with SaveOptions.MaxShardSize and checks the
// layout transformers' save_pretrained(max_shard_size=...) writes: shards of at most the size
// (a larger tensor alone), named model-0000i-of-0000n.safetensors, an index whose total_size is
// their data and whose weight_map names each tensor's shard; the folder loads back with every
// parameter equal; and a later save in the other layout leaves no file of the earlier one.
func TestSaveFolderShards(t *testing.T) {
	ref, err := hf.LoadFolder(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var total, largest int64
	for _, p := range ref.Model.Params() {
		n := 4 * int64(len(p.T.Data))
		total += n
		largest = max(largest, n)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		max   int64
		wantN int // shards; 0: one model.safetensors
	}{
		{"no limit", 0, 0},
		{"limit above the total", total, 0},
		{"half", total/2 + 1, 2},
		{"below the largest tensor", largest / 2, -1},
		{"one file again", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := hf.SaveFolder(dir, ref.Model, ref.Tokenizer, hf.SaveOptions{MaxShardSize: tc.max}); err != nil {
				t.Fatal(err)
			}
			files, err := hf.WeightsFiles(os.DirFS(dir), dir)
			if err != nil {
				t.Fatal(err)
			}
			var shards []string
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if hf.IsShardFile(e.Name()) {
					shards = append(shards, e.Name())
				}
			}
			_, single := os.Stat(filepath.Join(dir, hf.WeightsFile))
			_, index := os.Stat(filepath.Join(dir, hf.WeightsIndexFile))
			if tc.wantN == 0 {
				if single != nil || index == nil || len(shards) != 0 || !slices.Equal(files, []string{hf.WeightsFile}) {
					t.Fatalf("want model.safetensors alone; files %v, shards %v, index %v", files, shards, index)
				}
			} else {
				if single == nil || index != nil {
					t.Fatalf("want the index and no model.safetensors (stat: %v, %v)", single, index)
				}
				if tc.wantN > 0 && len(shards) != tc.wantN {
					t.Fatalf("%d shards %v, want %d", len(shards), shards, tc.wantN)
				}
				if !slices.Equal(files, append([]string{hf.WeightsIndexFile}, shards...)) {
					t.Errorf("WeightsFiles %v, want the index and %v", files, shards)
				}
				b, err := os.ReadFile(filepath.Join(dir, hf.WeightsIndexFile))
				if err != nil {
					t.Fatal(err)
				}
				x, err := hf.ParseShardIndex(b, "index")
				if err != nil {
					t.Fatal(err)
				}
				if x.TotalSize != total {
					t.Errorf("total_size %d, want %d", x.TotalSize, total)
				}
				var sum int64
				for i, s := range shards {
					if want := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(shards)); s != want {
						t.Errorf("shard %d is %s, want %s", i, s, want)
					}
					f, err := hf.Open(filepath.Join(dir, s))
					if err != nil {
						t.Fatal(err)
					}
					var data int64
					for _, n := range f.Names() {
						ti, _ := f.Info(n)
						data += int64(ti.NumElements()) * 4
						if x.WeightMap[n] != s {
							t.Errorf("weight_map[%s] = %q, the tensor is in %s", n, x.WeightMap[n], s)
						}
					}
					if len(f.Names()) > 1 && data > tc.max {
						t.Errorf("%s holds %d bytes of %d tensors, over the limit %d", s, data, len(f.Names()), tc.max)
					}
					if f.Metadata()["format"] != "pt" {
						t.Errorf("%s: metadata %v, want format pt", s, f.Metadata())
					}
					sum += data
					f.Close()
				}
				if sum != total || len(x.WeightMap) != len(ref.Model.Params()) {
					t.Errorf("shards hold %d bytes and the index %d tensors, want %d and %d", sum, len(x.WeightMap), total, len(ref.Model.Params()))
				}
			}
			got, err := hf.LoadFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			sameParams(t, got.Model, ref.Model, "after the save")
			_, size, err := hf.WeightsSize(dir)
			if err != nil || size < total {
				t.Errorf("WeightsSize %d (%v), want at least the %d bytes of data", size, err, total)
			}
		})
	}
}
