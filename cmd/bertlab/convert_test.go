package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
)

// TestConvert writes the fixture again as F16 and as BF16: the files are half the size of
// F32's weights, and the weights read back equal the originals rounded to each dtype.
func TestConvert(t *testing.T) {
	src, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dtype string
		tol   float64 // relative rounding of the dtype
	}{{"F16", 1.0 / 2048}, {"bf16", 1.0 / 256}} {
		out := filepath.Join(t.TempDir(), "m")
		if _, stderr, code := bertlab(t, "", "convert", "--model", fixture, "--out", out, "--dtype", c.dtype); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.dtype, code, stderr)
		}
		got, err := hf.LoadFolder(out)
		if err != nil {
			t.Fatal(err)
		}
		want := src.Model.Params()
		for i, p := range got.Model.Params() {
			for j, v := range p.T.Data {
				w := want[i].T.Data[j]
				if d := float64(v - w); d > c.tol*float64(abs32(w))+1e-7 || -d > c.tol*float64(abs32(w))+1e-7 {
					t.Fatalf("%s: %s[%d] = %g, want %g rounded", c.dtype, p.Name, j, v, w)
				}
			}
		}
		st, err := os.Stat(filepath.Join(out, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if n := int64(2 * src.Model.NumParams()); st.Size() < n || st.Size() > n+n/8 {
			t.Errorf("%s: %d bytes for %d parameters", c.dtype, st.Size(), src.Model.NumParams())
		}
	}
	if _, stderr, code := bertlab(t, "", "convert", "--model", fixture, "--out", t.TempDir(), "--dtype", "I8"); code != 2 || !strings.Contains(stderr, `"I8"`) {
		t.Errorf("dtype I8: exit %d, %s", code, stderr)
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// TestEvalCloze scores two sentences with the fixture model: the counts, the bounds of the
// shares, and the errors of a malformed file.
func TestEvalCloze(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "cloze.tsv")
	os.WriteFile(good, []byte("# two sentences\nthe cat sat on the [MASK] .\tmat|floor\nno [MASK] here\n[MASK] sound\tsound\n"), 0o644)
	stdout, stderr, code := bertlab(t, "", "eval", "--task", "cloze", "--model", fixture, "--data", good, "--json", "-v")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep clozeReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if rep.Sentences != 2 || len(rep.Results) != 3 || rep.Top1 > rep.Top5 || rep.Top5 > 1 {
		t.Errorf("report %+v", rep)
	}
	bad := filepath.Join(dir, "bad.tsv")
	os.WriteFile(bad, []byte("fine [MASK]\tok\nno mask\tx\n"), 0o644)
	if _, stderr, code := bertlab(t, "", "eval", "--task", "cloze", "--model", fixture, "--data", bad); code != 1 || !strings.Contains(stderr, "line 2") {
		t.Errorf("malformed file: exit %d, %s", code, stderr)
	}
}

// TestInitShape: --layers, --hidden, --heads and --intermediate override the preset's numbers.
func TestInitShape(t *testing.T) {
	for _, c := range []struct {
		args                   []string
		layers, hidden, heads  int
		intermediate, exitCode int
	}{
		{[]string{"--layers", "3", "--hidden", "96"}, 3, 96, 1, 384, 0},
		{[]string{"--hidden", "96", "--heads", "4", "--intermediate", "100"}, 2, 96, 4, 100, 0},
		{[]string{"--layers", "5"}, 5, 128, 2, 512, 0},
		{[]string{"--hidden", "20", "--heads", "3"}, 0, 0, 0, 0, 2},
		{[]string{"--layers", "-1"}, 0, 0, 0, 0, 2},
	} {
		out := filepath.Join(t.TempDir(), "m")
		_, stderr, code := bertlab(t, "", append([]string{"init", "--preset", "tiny", "--out", out}, c.args...)...)
		if code != c.exitCode {
			t.Fatalf("%v: exit %d, want %d: %s", c.args, code, c.exitCode, stderr)
		}
		if code != 0 {
			continue
		}
		f, err := hf.LoadFolder(out)
		if err != nil {
			t.Fatal(err)
		}
		mc := f.Model.Config
		if mc.NumHiddenLayers != c.layers || mc.HiddenSize != c.hidden || mc.NumAttentionHeads != c.heads || mc.IntermediateSize != c.intermediate {
			t.Errorf("%v: %d layers, hidden %d, %d heads, intermediate %d", c.args, mc.NumHiddenLayers, mc.HiddenSize, mc.NumAttentionHeads, mc.IntermediateSize)
		}
	}
}

// TestConvertShards writes the fixture in shards with --max-shard-size and back in one file:
// the index and shards hold the same weights (F32: bit for bit), `bertlab info` reads the
// sharded folder, and a size that is not one is a usage error naming the flag.
func TestConvertShards(t *testing.T) {
	src, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m")
	if _, stderr, code := bertlab(t, "", "convert", "--model", fixture, "--out", out, "--dtype", "F32", "--max-shard-size", "200kB"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, err := hf.WeightsFiles(os.DirFS(out), out)
	if err != nil || len(files) < 3 || files[0] != hf.WeightsIndexFile {
		t.Fatalf("weights %v (%v), want the index and shards", files, err)
	}
	got, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	want := src.Model.Params()
	for i, p := range got.Model.Params() {
		if !slices.Equal(p.T.Data, want[i].T.Data) {
			t.Errorf("%s differs after the sharded save", p.Name)
		}
	}
	if stdout, stderr, code := bertlab(t, "", "info", "--model", out); code != 0 || !strings.Contains(stdout, hf.WeightsIndexFile) {
		t.Errorf("info on the sharded folder: exit %d, %s%s", code, stdout, stderr)
	}
	if _, stderr, code := bertlab(t, "", "convert", "--model", out, "--out", out, "--dtype", "F32"); code != 0 {
		t.Fatalf("back to one file: exit %d: %s", code, stderr)
	}
	if files, err := hf.WeightsFiles(os.DirFS(out), out); err != nil || !slices.Equal(files, []string{hf.WeightsFile}) {
		t.Errorf("after saving one file again: %v (%v)", files, err)
	}
	if ents, _ := os.ReadDir(out); slices.ContainsFunc(ents, func(e os.DirEntry) bool { return hf.IsShardFile(e.Name()) || e.Name() == hf.WeightsIndexFile }) {
		t.Errorf("the shards of the earlier save are still there")
	}
	if _, stderr, code := bertlab(t, "", "convert", "--model", fixture, "--out", t.TempDir(), "--max-shard-size", "ten MB"); code != 2 || !strings.Contains(stderr, "--max-shard-size") {
		t.Errorf("a bad size: exit %d, %s", code, stderr)
	}
}
