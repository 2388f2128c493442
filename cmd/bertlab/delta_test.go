package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
)

// TestDelta: the fixture's weights (as F32, in the clean layout) as a delta from their own F16 rounding come back closer
// than the F16 copy, as the printed figures say; the usage errors exit 2.
func TestDelta(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range []string{"F16", "F32"} {
		if _, stderr, code := bertlab(t, "", "convert", "--model", fixture, "--out", filepath.Join(dir, dt), "--dtype", dt); code != 0 {
			t.Fatalf("convert: exit %d: %s", code, stderr)
		}
	}
	base := filepath.Join(dir, "F16", "model.safetensors")
	target := filepath.Join(dir, "F32", "model.safetensors")
	delta := filepath.Join(dir, "model.delta.safetensors")
	out, stderr, code := bertlab(t, "", "delta", "--base", base, "--target", target, "--out", delta)
	if code != 0 {
		t.Fatalf("delta: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "wrote "+delta) || !strings.Contains(out, "distance from the target: max") {
		t.Errorf("delta printed %q", out)
	}
	applied := filepath.Join(dir, "applied.safetensors")
	if _, stderr, code := bertlab(t, "", "delta", "--base", base, "--apply", delta, "--out", applied); code != 0 {
		t.Fatalf("delta --apply: exit %d: %s", code, stderr)
	}
	open := func(p string) *hf.File {
		f, err := hf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	want, got, f16 := open(target), open(applied), open(base)
	var errDelta, errF16 float64
	for _, name := range want.Names() {
		w, _, err := want.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		g, _, err := got.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		h, _, _ := f16.Float32(name)
		for i := range w {
			errDelta = max(errDelta, math.Abs(float64(g[i]-w[i])))
			errF16 = max(errF16, math.Abs(float64(h[i]-w[i])))
		}
	}
	// The delta carries only F16's rounding error, itself at most 2^-11 of each value.
	if errDelta == 0 || errDelta >= errF16/50 {
		t.Errorf("applied delta off by %g at most, the F16 copy by %g: want the delta far closer", errDelta, errF16)
	}
	for _, args := range [][]string{
		{"delta", "--base", base, "--out", delta},
		{"delta", "--base", base, "--target", target, "--apply", delta, "--out", delta},
		{"delta", "--target", target, "--out", delta},
	} {
		if _, stderr, code := bertlab(t, "", args...); code != 2 || !strings.Contains(stderr, "bertlab delta --base FILE") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	if _, stderr, code := bertlab(t, "", "delta", "--base", base, "--apply", target, "--out", applied); code != 1 || !strings.Contains(stderr, "scales") {
		t.Errorf("applying weights that are no delta: exit %d, %s", code, stderr)
	}
}
