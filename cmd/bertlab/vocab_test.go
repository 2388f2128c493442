package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/tokenizer"
)

func TestVocabCommand(t *testing.T) {
	a := writeText(t, smallText)
	b := writeText(t, "Zebras and bread.\n\nThe cat sat.\n")
	out := filepath.Join(t.TempDir(), "vocab")
	stdout, stderr, code := bertlab(t, "", "vocab", "--data", a, b, "--size", "80", "--min-frequency", "1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"read 11 lines", "wrote 80 tokens to " + out, "0 of"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	tok, err := tokenizer.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Vocab().Len() != 80 || tok.PadID() != 0 || tok.UnkID() != 1 || tok.CLSID() != 2 || tok.SEPID() != 3 || tok.MaskID() != 4 {
		t.Errorf("%d tokens, specials pad %d unk %d cls %d sep %d mask %d", tok.Vocab().Len(), tok.PadID(), tok.UnkID(), tok.CLSID(), tok.SEPID(), tok.MaskID())
	}
	if c := tok.Config(); !c.DoLowerCase || c.ModelMaxLength != 512 {
		t.Errorf("config %+v", c)
	}
	// Both files were read ("z" is only in the second), and frequent words became tokens.
	for _, w := range []string{"the", "z", "##z", "bird"} {
		if _, ok := tok.Vocab().ID(w); !ok {
			t.Errorf("%q not in the vocabulary", w)
		}
	}

	// The same command again gives the same files.
	first, err := os.ReadFile(filepath.Join(out, tokenizer.VocabFile))
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "vocab")
	if _, stderr, code := bertlab(t, "", "vocab", "--data", a, "--data", b, "--size", "80", "--min-frequency", "1", "--out", out2); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if second, _ := os.ReadFile(filepath.Join(out2, tokenizer.VocabFile)); string(second) != string(first) {
		t.Error("a second run wrote a different vocab.txt")
	}

	// A size the corpus cannot fill, cased.
	out3 := filepath.Join(t.TempDir(), "vocab")
	stdout, stderr, code = bertlab(t, "", "vocab", "--data", b, "--size", "1000", "--cased", "--out", out3)
	if code != 0 || !strings.Contains(stdout, "smaller than --size 1000") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if tok, err := tokenizer.LoadDir(out3); err != nil || tok.Config().DoLowerCase {
		t.Errorf("cased vocabulary: %v", err)
	}
}

func TestVocabCommandErrors(t *testing.T) {
	data := writeText(t, smallText)
	empty := writeText(t, "\n\n")
	out := filepath.Join(t.TempDir(), "v")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"vocab", "--out", out}, 2, "usage"},
		{[]string{"vocab", "--data", data}, 2, "usage"},
		{[]string{"vocab", "--data", data, "--out", out, "--size", "0"}, 2, "--size 0"},
		{[]string{"vocab", "--data", filepath.Join(t.TempDir(), "missing.txt"), "--out", out}, 1, "missing.txt"},
		{[]string{"vocab", "--data", empty, "--out", out}, 1, "no text"},
	} {
		_, stderr, code := bertlab(t, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
