package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
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
	names := matchSafetensors(t, gradsPath, filepath.Join(fixture, "grads.safetensors"), func(name string) (float64, float64) {
		if strings.HasSuffix(name, "attention.self.key.bias") {
			return 1e-5, 0 // zero in exact math: only rounding noise to compare
		}
		return 1e-5, 1e-4
	})
	if len(names) != 47 {
		t.Errorf("dump wrote %d gradients, want 47", len(names))
	}
	weights, err := hf.Open(filepath.Join(fixture, hf.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer weights.Close()
	if g, w := strings.Join(names, " "), strings.Join(weights.Names(), " "); g != w {
		t.Errorf("gradient names differ from model.safetensors':\n got %s\nwant %s", g, w)
	}
}

func TestDumpGradsNeedsLabels(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	if err := hf.WriteFileAtomic(in, []byte(`{"input_ids": [[101, 490, 102]]}`)); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := bertlab(t, "", "dump", "--model", fixture, "--inputs", in, "--out", filepath.Join(dir, "o"), "--grads", filepath.Join(dir, "g"))
	if code != 1 || !strings.Contains(stderr, "no labels") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
