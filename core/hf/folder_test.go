package hf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

const fixtureDir = "../bert/testdata/bert-tiny-random"

// fixtureTensors reads the fixture model's tensors in file order.
func fixtureTensors(t *testing.T) []hf.Tensor {
	t.Helper()
	f, err := hf.Open(filepath.Join(fixtureDir, hf.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ts []hf.Tensor
	for _, n := range f.Names() {
		d, shape, err := f.Float32(n)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, hf.Tensor{Name: n, Shape: shape, Data: d})
	}
	return ts
}

// variantFolder writes a model folder holding the fixture's config and vocab and the given tensors.
func variantFolder(t *testing.T, ts []hf.Tensor, dt hf.DType) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{hf.ConfigFile, hf.VocabFile} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := hf.Write(filepath.Join(dir, hf.WeightsFile), ts, hf.WriteOptions{DType: dt}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rename(ts []hf.Tensor, fn func(string) string) []hf.Tensor {
	var out []hf.Tensor
	for _, x := range ts {
		if n := fn(x.Name); n != "" {
			x.Name = n
			out = append(out, x)
		}
	}
	return out
}

func fixtureBatch() bert.Batch {
	// inputs.json of the fixture, sequence 0.
	return bert.Batch{B: 1, S: 12,
		InputIDs:     []int{101, 490, 103, 103, 1248, 102, 1655, 996, 0, 489, 1057, 102},
		TokenTypeIDs: []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}}
}

// TestRealWorldVariantsLoad builds the variants real checkpoints come in from the fixture and
// checks each loads to the same numbers as the clean file.
func TestRealWorldVariantsLoad(t *testing.T) {
	ref, err := hf.LoadFolder(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	refOut, err := ref.Model.Forward(fixtureBatch(), bert.Options{MLM: true, NSP: true})
	if err != nil {
		t.Fatal(err)
	}
	clean := fixtureTensors(t)
	tests := []struct {
		name      string
		tensors   []hf.Tensor
		dtype     hf.DType
		tol       float64 // on outputs, relative to the clean model's
		heads     []string
		wantNote  string
		wantAbsnt []string
	}{
		{name: "clean", tensors: clean, heads: []string{"pooler", "mlm", "nsp"}},
		{name: "legacy gamma/beta", tensors: rename(clean, func(n string) string {
			n = strings.Replace(n, "LayerNorm.weight", "LayerNorm.gamma", 1)
			return strings.Replace(n, "LayerNorm.bias", "LayerNorm.beta", 1)
		}), heads: []string{"pooler", "mlm", "nsp"}, wantNote: "gamma/beta"},
		{name: "no decoder weight", tensors: rename(clean, func(n string) string {
			if n == "cls.predictions.decoder.weight" {
				return ""
			}
			return n
		}), heads: []string{"pooler", "mlm", "nsp"}, wantNote: "decoder weight absent"},
		{name: "stale position_ids", tensors: append(append([]hf.Tensor(nil), clean...),
			hf.Tensor{Name: "bert.embeddings.position_ids", Shape: []int{1, 32}, Data: make([]float32, 32)}),
			heads: []string{"pooler", "mlm", "nsp"}, wantNote: "position_ids"},
		{name: "BertModel without bert. prefix", tensors: rename(clean, func(n string) string {
			if strings.HasPrefix(n, "cls.") {
				return ""
			}
			return strings.TrimPrefix(n, "bert.")
		}), heads: []string{"pooler"}, wantAbsnt: []string{"mlm", "nsp"}},
		{name: "F16 storage", tensors: clean, dtype: hf.F16, tol: 2e-2, heads: []string{"pooler", "mlm", "nsp"}},
		{name: "BF16 storage", tensors: clean, dtype: hf.BF16, tol: 2e-1, heads: []string{"pooler", "mlm", "nsp"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := variantFolder(t, tc.tensors, tc.dtype)
			f, err := hf.LoadFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.Model.HeadNames(), ","); got != strings.Join(tc.heads, ",") {
				t.Errorf("heads %q, want %q", got, strings.Join(tc.heads, ","))
			}
			if got := strings.Join(f.Report.Absent, ","); got != strings.Join(tc.wantAbsnt, ",") {
				t.Errorf("absent %q, want %q", got, strings.Join(tc.wantAbsnt, ","))
			}
			if tc.wantNote != "" && !strings.Contains(strings.Join(f.Report.Notes, "; "), tc.wantNote) {
				t.Errorf("notes %q should mention %q", f.Report.Notes, tc.wantNote)
			}
			if len(f.Report.Ignored) != 0 {
				t.Errorf("ignored tensors: %v", f.Report.Ignored)
			}
			out, err := f.Model.Forward(fixtureBatch(), bert.Options{MLM: f.Model.MLM != nil, NSP: f.Model.NSP != nil})
			if err != nil {
				t.Fatal(err)
			}
			tol := tc.tol
			if tol == 0 {
				tol = 1e-6
			}
			if err := approx.Check("last_hidden_state", out.Hidden.Data, refOut.Hidden.Data, tol, tol); err != nil {
				t.Error(err)
			}
			if out.MLMLogits != nil {
				if err := approx.Check("prediction_logits", out.MLMLogits.Data, refOut.MLMLogits.Data, 10*tol, tol); err != nil {
					t.Error(err)
				}
			}
			t.Logf("max |diff| of the last hidden state vs F32: %.3g", approx.MaxAbsDiff(out.Hidden.Data, refOut.Hidden.Data))
		})
	}
}

// TestF16WeightsConvertExactly checks that F16 storage loads to exactly the F16-rounded weights.
func TestF16WeightsConvertExactly(t *testing.T) {
	clean := fixtureTensors(t)
	dir := variantFolder(t, clean, hf.F16)
	f, err := hf.LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Report.DType != "F16" {
		t.Errorf("report dtype %q, want F16", f.Report.DType)
	}
	byName := map[string][]float32{}
	for _, p := range f.Model.Params() {
		byName[p.Name] = p.T.Data
	}
	for _, c := range clean {
		got, ok := byName[c.Name]
		if !ok {
			continue // the tied decoder
		}
		for i, v := range c.Data {
			if want := hf.F16ToF32(hf.F32ToF16(v)); got[i] != want {
				t.Fatalf("%s[%d] = %g, want F16-rounded %g", c.Name, i, got[i], want)
			}
		}
	}
}

func TestBrokenFoldersGiveClearErrors(t *testing.T) {
	clean := fixtureTensors(t)
	drop := func(name string) []hf.Tensor {
		return rename(clean, func(n string) string {
			if n == name {
				return ""
			}
			return n
		})
	}
	reshape := func(name string, shape []int) []hf.Tensor {
		var out []hf.Tensor
		for _, x := range clean {
			if x.Name == name {
				x.Shape = shape
			}
			out = append(out, x)
		}
		return out
	}
	tests := []struct {
		name    string
		tensors []hf.Tensor
		want    []string
	}{
		{"missing tensor", drop("bert.encoder.layer.1.output.dense.weight"), []string{"bert.encoder.layer.1.output.dense.weight", "missing", "[64,128]"}},
		{"shape mismatch", reshape("bert.pooler.dense.weight", []int{32, 128}), []string{"bert.pooler.dense.weight", "[32,128]", "[64,64]", "model.safetensors"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := variantFolder(t, tc.tensors, "")
			_, err := hf.LoadFolder(dir)
			if err == nil {
				t.Fatal("loaded a broken folder")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q should mention %q", err, w)
				}
			}
		})
	}
	t.Run("pytorch_model.bin only", func(t *testing.T) {
		dir := t.TempDir()
		b, _ := os.ReadFile(filepath.Join(fixtureDir, hf.ConfigFile))
		os.WriteFile(filepath.Join(dir, hf.ConfigFile), b, 0o644)
		os.WriteFile(filepath.Join(dir, "pytorch_model.bin"), []byte("x"), 0o644)
		_, err := hf.LoadFolder(dir)
		if err == nil || !strings.Contains(err.Error(), "safe_serialization") {
			t.Errorf("error %v should explain the conversion", err)
		}
	})
}

// TestSaveFolderRoundTrip saves a random model with a tokenizer and loads it back unchanged.
func TestSaveFolderRoundTrip(t *testing.T) {
	ref, err := hf.LoadFolder(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bert.NewRandom(ref.Model.Config, bert.AllHeads, 7)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "saved")
	if err := hf.SaveFolder(dir, m, ref.Tokenizer, hf.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := hf.LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, want := back.Model.Params(), m.Params()
	if len(got) != len(want) {
		t.Fatalf("%d params back, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || approx.MaxAbsDiff(got[i].T.Data, want[i].T.Data) != 0 {
			t.Fatalf("param %s did not round-trip", want[i].Name)
		}
	}
	if back.Tokenizer == nil || back.Tokenizer.Vocab().Len() != ref.Tokenizer.Vocab().Len() {
		t.Fatal("tokenizer did not round-trip")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestCompleteHeads: a BertModel folder (no pooler, MLM or NSP head) gets every head; the
// tensors it had are kept bit for bit, and the note names the new ones.
func TestCompleteHeads(t *testing.T) {
	keep := rename(fixtureTensors(t), func(n string) string {
		if strings.HasPrefix(n, "cls.") || strings.Contains(n, "pooler") {
			return ""
		}
		return n
	})
	dir := variantFolder(t, keep, "")
	f, err := hf.LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.MLM != nil || f.Model.NSP != nil || f.Model.Pooler != nil {
		t.Fatal("the folder should load without heads")
	}
	if err := f.CompleteHeads(3); err != nil {
		t.Fatal(err)
	}
	m := f.Model
	if m.MLM == nil || m.NSP == nil || m.Pooler == nil {
		t.Fatalf("heads after CompleteHeads: %v", m.HeadNames())
	}
	had := map[string][]float32{}
	for _, x := range keep {
		had[x.Name] = x.Data
	}
	kept := 0
	for _, p := range m.Params() {
		if want, ok := had[p.Name]; ok {
			kept++
			for i := range want {
				if p.T.Data[i] != want[i] {
					t.Fatalf("%s[%d] = %g, the folder had %g", p.Name, i, p.T.Data[i], want[i])
				}
			}
		}
	}
	if kept != len(keep) {
		t.Errorf("%d of the folder's %d tensors found in the model", kept, len(keep))
	}
	note := f.Report.Notes[len(f.Report.Notes)-1]
	for _, w := range []string{"cls.seq_relationship.weight", "bert.pooler.dense.weight", "initialised at random"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q should name %s", note, w)
		}
	}
}
