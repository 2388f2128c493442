package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/checkpoint"
	"github.com/bertlab/bertlab/internal/approx"
)

// TestDumpGradsMatchesFixture checks `bertlab dump --grads` against the fixture's
// grads.safetensors: all 47 names of model.safetensors, the tied decoder included.
func TestDumpGradsMatchesFixture(t *testing.T) {
	dir := t.TempDir()
	gradsPath := filepath.Join(dir, "g.safetensors")
	stdout, stderr, code := bertlab(t, "", "dump", "--model", fixture, "--inputs", filepath.Join(fixture, "inputs.json"),
		"--out", filepath.Join(dir, "out.safetensors"), "--grads", gradsPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote 47 gradients") {
		t.Errorf("stdout: %s", stdout)
	}
	got, err := checkpoint.Open(gradsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	want, err := checkpoint.Open(filepath.Join(fixture, "grads.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	weights, err := checkpoint.Open(filepath.Join(fixture, checkpoint.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer weights.Close()
	if g, w := strings.Join(got.Names(), " "), strings.Join(weights.Names(), " "); g != w {
		t.Errorf("gradient names differ from model.safetensors':\n got %s\nwant %s", g, w)
	}
	if len(want.Names()) != 47 {
		t.Errorf("fixture has %d gradients, want 47", len(want.Names()))
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
		rtol := 1e-4
		if strings.HasSuffix(name, "attention.self.key.bias") {
			rtol = 0 // zero in exact math: only rounding noise to compare
		}
		if err := approx.Check(name, g, w, 1e-5, rtol); err != nil {
			t.Error(err)
		}
	}
}

func TestDumpGradsNeedsLabels(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	if err := checkpoint.WriteFileAtomic(in, []byte(`{"input_ids": [[101, 490, 102]]}`)); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := bertlab(t, "", "dump", "--model", fixture, "--inputs", in, "--out", filepath.Join(dir, "o"), "--grads", filepath.Join(dir, "g"))
	if code != 1 || !strings.Contains(stderr, "no labels") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
