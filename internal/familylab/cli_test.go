package familylab

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/internal/cli"
)

// TestCommand runs `bertlab family` on a small ALBERT-only budget and checks the command line's
// errors.
func TestCommand(t *testing.T) {
	out := t.TempDir()
	paths := []string{"--vocab", testVocab, "--data", testTrain, "--heldout", testHeldout, "--task-data", "../../tinydata", "--tasks", "sentiment"}
	var stdout, stderr bytes.Buffer
	args := append([]string{"--out", out, "--quick", "--variants", "albert", "--amount", "3000", "--evals", "1", "--max-docs", "40", "--heldout-seqs", "8"}, paths...)
	if err := Command(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| albert | AlbertForPreTraining |") || !strings.Contains(stdout.String(), "wrote family.md") ||
		!strings.Contains(stdout.String(), "| sentiment |\n") {
		t.Errorf("output:\n%s", stdout.String())
	}
	rec, err := readRecord(out, Config{})
	if err == nil || rec != nil {
		t.Error("the record of other settings was read as this one's")
	}
	if _, err := os.Stat(filepath.Join(out, "albert", "config.json")); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--out"},
		{[]string{"--out", out, "--quick", "--full"}, "exclude"},
		{[]string{"--out", out, "--variants", "bert,gpt"}, "gpt"},
		{[]string{"--out", out, "--budget", "flops"}, "--amount"},
		{[]string{"--out", out, "--budget", "steps", "--amount", "5"}, "budget"},
		{[]string{"--out", out, "extra"}, "unexpected"},
		{[]string{"--out", out, "--tasks", "sentiment,ner"}, "ner"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	} {
		err := Command(context.Background(), tc.args, &stdout, &stderr)
		if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error naming %q", tc.args, err, tc.want)
		}
	}
	if err := Command(context.Background(), []string{"-h"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestTrailingMean(t *testing.T) {
	got := trailingMean([]float64{2, 4, 6, 8}, 2)
	want := []float64{2, 3, 5, 7}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("trailingMean = %v, want %v", got, want)
		}
	}
}
