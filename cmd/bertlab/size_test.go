package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCommandLines bounds the command's own code: the CLI grows through the packages it calls
// (internal/, core/), not here (issue 27).
const maxCommandLines = 1500

func TestCommandStaysSmall(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
	}
	if total == 0 || total >= maxCommandLines {
		t.Errorf("cmd/bertlab has %d non-test lines, want fewer than %d: move code into a package", total, maxCommandLines)
	}
}
