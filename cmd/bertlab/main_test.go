package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

const fixture = "../../core/bert/testdata/bert-tiny-random"

// bertlab runs the command in-process and returns stdout, stderr and the exit status.
func bertlab(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestDumpMatchesFixture(t *testing.T) {
	dir := t.TempDir()
	outPath := filepath.Join(dir, "out.safetensors")
	stdout, stderr, code := bertlab(t, "", "dump", "--model", fixture, "--inputs", filepath.Join(fixture, "inputs.json"), "--out", outPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Log(stdout)
	matchSafetensors(t, outPath, filepath.Join(fixture, "outputs.safetensors"), func(name string) (float64, float64) {
		if strings.Contains(name, "logits") || strings.Contains(name, "loss") {
			return 1e-4, 1e-4
		}
		return 1e-5, 1e-4
	})
}

// matchSafetensors checks that the file at gotPath holds every tensor of wantPath, with the same
// shape and values within tol(name) = (atol, rtol), and no other tensors; it returns got's names.
func matchSafetensors(t *testing.T, gotPath, wantPath string, tol func(name string) (atol, rtol float64)) []string {
	t.Helper()
	got, err := hf.Open(gotPath)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	want, err := hf.Open(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	if len(got.Names()) != len(want.Names()) {
		t.Errorf("%s has %d tensors, %s has %d: %v", gotPath, len(got.Names()), wantPath, len(want.Names()), got.Names())
	}
	for _, name := range want.Names() {
		w, wshape, err := want.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		g, gshape, err := got.Float32(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !equalInts(gshape, wshape) {
			t.Errorf("%s: shape %v, want %v", name, gshape, wshape)
			continue
		}
		atol, rtol := tol(name)
		if err := approx.Check(name, g, w, atol, rtol); err != nil {
			t.Error(err)
		}
	}
	return got.Names()
}

func TestInfoPresetParameterCounts(t *testing.T) {
	// HF BertForPreTraining(BertConfig(...)).num_parameters() for the uncased vocabulary.
	tests := []struct{ preset, want string }{
		{"base", "110,106,428"},
		{"large", "336,226,108"},
	}
	for _, tc := range tests {
		stdout, stderr, code := bertlab(t, "", "info", "--preset", tc.preset)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "parameters  "+tc.want) {
			t.Errorf("info --preset %s:\n%s\nwant parameters %s", tc.preset, stdout, tc.want)
		}
	}
}

func TestFillMaskJSON(t *testing.T) {
	// The fixture model's vocabulary is random words, so only the shape of the answer is checked
	// here; the numbers are those of Forward, checked against the fixtures in core/bert.
	stdout, stderr, code := bertlab(t, "", "fill-mask", "--model", fixture, "--json", "--top-k", "3", "no [MASK] happiness [MASK] sound")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Masks []struct {
			Position    int `json:"position"`
			Predictions []struct {
				Token string  `json:"token"`
				ID    int     `json:"id"`
				Score float64 `json:"score"`
			} `json:"predictions"`
		} `json:"masks"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(res.Masks) != 2 || res.Masks[0].Position != 2 || res.Masks[1].Position != 4 {
		t.Fatalf("masks: %+v", res.Masks)
	}
	for _, m := range res.Masks {
		if len(m.Predictions) != 3 {
			t.Fatalf("want 3 predictions, got %d", len(m.Predictions))
		}
		for i := 1; i < len(m.Predictions); i++ {
			if m.Predictions[i].Score > m.Predictions[i-1].Score {
				t.Errorf("predictions not sorted: %+v", m.Predictions)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no mask", []string{"fill-mask", "--model", fixture, "a sentence without a mask"}, 1, "no [MASK]"},
		{"no text", []string{"fill-mask", "--model", fixture}, 2, "give the text"},
		{"missing folder", []string{"fill-mask", "--model", "does-not-exist", "a [MASK]"}, 1, "does-not-exist"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"bad preset", []string{"info", "--preset", "huge"}, 2, "unknown preset"},
		{"bad flag", []string{"info", "--nope"}, 2, "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := bertlab(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTokenizeJSONLMatchesFixtures pipes the tokenizer fixtures' cases through
// `bertlab tokenize --jsonl` for all five variants and compares with expected.jsonl.
func TestTokenizeJSONLMatchesFixtures(t *testing.T) {
	const dir = "../../core/tokenizer/testdata/fixtures"
	cases, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"uncased", "cased", "uncased_keep_accents", "cased_strip_accents", "uncased_no_chinese"} {
		t.Run(variant, func(t *testing.T) {
			stdout, stderr, code := bertlab(t, string(cases), "tokenize", "--jsonl", "--model", filepath.Join(dir, variant))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(filepath.Join(dir, variant, "expected.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			type enc struct {
				ID     string   `json:"id"`
				IDs    []int    `json:"input_ids"`
				Tokens []string `json:"tokens"`
				Types  []int    `json:"token_type_ids"`
			}
			parse := func(s string) []enc {
				var out []enc
				for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
					var e enc
					if err := json.Unmarshal([]byte(line), &e); err != nil {
						t.Fatalf("%v: %s", err, line)
					}
					out = append(out, e)
				}
				return out
			}
			got, exp := parse(stdout), parse(string(want))
			if len(got) != len(exp) {
				t.Fatalf("%d answers, want %d", len(got), len(exp))
			}
			for i := range exp {
				g, w := got[i], exp[i]
				if g.ID != w.ID || fmt.Sprint(g.IDs) != fmt.Sprint(w.IDs) || strings.Join(g.Tokens, " ") != strings.Join(w.Tokens, " ") || fmt.Sprint(g.Types) != fmt.Sprint(w.Types) {
					t.Errorf("case %s:\n got %v %q %v\nwant %v %q %v", w.ID, g.IDs, g.Tokens, g.Types, w.IDs, w.Tokens, w.Types)
				}
			}
		})
	}
}

// TestTokenizeBertBaseUncased checks the real bert-base-uncased vocabulary end to end.
func TestTokenizeBertBaseUncased(t *testing.T) {
	stdout, stderr, code := bertlab(t, "brown fox jumps over the lazy dog\n", "tokenize", "--model", "../../core/tokenizer/testdata/bert-base-uncased")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var e struct {
		IDs     []int    `json:"input_ids"`
		Offsets [][2]int `json:"offsets"`
	}
	if err := json.Unmarshal([]byte(stdout), &e); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(e.IDs); got != "[101 2829 4419 14523 2058 1996 13971 3899 102]" {
		t.Errorf("ids %s", got)
	}
	if got := fmt.Sprint(e.Offsets); got != "[[0 0] [0 5] [6 9] [10 15] [16 20] [21 24] [25 29] [30 33] [0 0]]" {
		t.Errorf("offsets %s", got)
	}
}
