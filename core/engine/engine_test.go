package engine

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// fixture is the random-weight Tiny BERT of the reference fixtures (32 positions, 2 layers,
// 4 heads, hidden 64, 2,000 tokens).
const fixture = "../bert/testdata/bert-tiny-random"

// noReaderAt hides the io.ReaderAt of a file system's files.
type noReaderAt struct{ fsys fstest.MapFS }

func (n noReaderAt) Open(name string) (fs.File, error) {
	f, err := n.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	return struct{ fs.File }{f}, nil
}

// TestOpen loads the fixture through every kind of file system the engine's homes use (a
// folder on disk, files in memory, files without io.ReaderAt) and checks that each answers as
// the folder loaded by hf.LoadFolder does; broken folders are errors naming the file and
// the folder.
func TestOpen(t *testing.T) {
	want, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	const text = "paris is the [MASK] of france"
	exp, err := pipeline.FillMask(want.Model, want.Tokenizer, text, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	files := fstest.MapFS{}
	for _, name := range []string{"config.json", "model.safetensors", "vocab.txt"} {
		b, err := os.ReadFile(fixture + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = &fstest.MapFile{Data: b}
	}
	for _, tc := range []struct {
		name string
		fsys fs.FS
	}{
		{"os.DirFS", os.DirFS(fixture)},
		{"MapFS", files},
		{"no ReaderAt", noReaderAt{files}},
	} {
		e, err := Open(tc.fsys, "tiny")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if e.Name() != "tiny" {
			t.Errorf("%s: name %q", tc.name, e.Name())
		}
		got, err := e.FillMask(text, nil, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Masks) != len(exp.Masks) || len(got.Masks) == 0 {
			t.Fatalf("%s: %d masks, want %d", tc.name, len(got.Masks), len(exp.Masks))
		}
		for i := range exp.Masks {
			for j := range exp.Masks[i].Predictions {
				g, w := got.Masks[i].Predictions[j], exp.Masks[i].Predictions[j]
				if g.Token != w.Token || g.Score != w.Score {
					t.Errorf("%s: mask %d prediction %d: %+v, want %+v", tc.name, i, j, g, w)
				}
			}
		}
	}
	// A tokenizer_config.json is read; broken or missing files are errors that name the file.
	withCfg := fstest.MapFS{}
	for k, v := range files {
		withCfg[k] = v
	}
	withCfg["tokenizer_config.json"] = &fstest.MapFile{Data: []byte(`{"do_lower_case": false, "model_max_length": 16}`)}
	e, err := Open(withCfg, "cased")
	if err != nil {
		t.Fatal(err)
	}
	if c := e.Tokenizer().(*tokenizer.Tokenizer).Config(); c.DoLowerCase || c.ModelMaxLength != 16 {
		t.Errorf("tokenizer_config.json not applied: %+v", c)
	}
	for _, tc := range []struct {
		drop, replace, with, says string
	}{
		{drop: "config.json", says: "config.json"},
		{drop: "model.safetensors", says: "model.safetensors"},
		{drop: "vocab.txt", says: "vocab.txt"},
		{replace: "config.json", with: `{"hidden_size": 7}`, says: "config.json"},
		{replace: "model.safetensors", with: "junk", says: "model.safetensors"},
		{replace: "vocab.txt", with: "a\na\n", says: "vocab.txt"},
		{replace: "tokenizer_config.json", with: "{", says: "tokenizer_config.json"},
	} {
		broken := fstest.MapFS{}
		for k, v := range files {
			broken[k] = v
		}
		delete(broken, tc.drop)
		if tc.replace != "" {
			broken[tc.replace] = &fstest.MapFile{Data: []byte(tc.with)}
		}
		_, err := Open(broken, "broken")
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "broken") {
			t.Errorf("drop %q replace %q: error %v, want one naming %s and the model", tc.drop, tc.replace, err, tc.says)
		}
	}
	// A vocabulary larger than the model's is refused at load, and a failed load keeps the
	// model there was.
	big := fstest.MapFS{}
	for k, v := range files {
		big[k] = v
	}
	big["vocab.txt"] = &fstest.MapFile{Data: append(append([]byte{}, files["vocab.txt"].Data...), []byte("extra1\nextra2\n")...)}
	if _, err := e.Load(big, "big"); err == nil || !strings.Contains(err.Error(), "vocab_size") {
		t.Errorf("vocab larger than vocab_size: %v", err)
	}
	if e.Name() != "cased" || e.Model() == nil {
		t.Errorf("a failed load replaced the model: now %q", e.Name())
	}
}

// TestNoModel: every question before a load is an error, not a panic.
func TestNoModel(t *testing.T) {
	e := &Engine{}
	if _, err := e.FillMask("a [MASK]", nil, 5); err != ErrNoModel {
		t.Errorf("FillMask: %v", err)
	}
	if _, err := e.Tokenize("a", nil); err != ErrNoModel {
		t.Errorf("Tokenize: %v", err)
	}
	if _, err := e.TrainStep(t.Context()); err != ErrNoRun {
		t.Errorf("TrainStep: %v", err)
	}
	if e.Info() != nil {
		t.Error("Info before a load")
	}
}
