package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFirstModel: the built-in model is the default even when another folder sorts before it
// (bert-base-uncased does), and any folder with a config.json stands in when it is absent.
func TestFirstModel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		folders []string // under assets/models, each with a config.json
		want    string
	}{
		{"none", nil, ""},
		{"built-in only", []string{builtinModel}, builtinModel},
		{"built-in after another", []string{"bert-base-uncased", builtinModel}, builtinModel},
		{"no built-in", []string{"bert-base-uncased", "zz"}, "bert-base-uncased"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assets := t.TempDir()
			for _, f := range tc.folders {
				dir := filepath.Join(assets, "models", f)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := ""
			if tc.want != "" {
				want = filepath.Join(assets, "models", tc.want)
			}
			if got := firstModel(assets); got != want {
				t.Errorf("firstModel = %q, want %q", got, want)
			}
		})
	}
}
