//go:build !js && !wasip1

package train

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// killChildEnv makes the test binary the child of TestKillDuringSave: it trains and saves a
// checkpoint after every step until killed.
const killChildEnv = "BERTLAB_TRAIN_KILL_CHILD"

// TestKillDuringSave kills (SIGKILL) a process that saves a checkpoint after every step, at
// random moments, several times over: each time the latest checkpoint must load and resume.
func TestKillDuringSave(t *testing.T) {
	if out := os.Getenv(killChildEnv); out != "" {
		c := DefaultPretrain(1 << 30)
		c.BatchSize, c.OutDir, c.SaveEvery, c.KeepCheckpoints = 2, out, 1, 2
		dc := DefaultData(32, 1)
		var p *Pretrainer
		if latest, _ := LatestCheckpoint(out); latest != "" {
			tok, docs := toyCorpus(t)
			data, err := NewPretrainData(tok, docs, dc)
			if err != nil {
				t.Fatal(err)
			}
			if p, err = ResumePretrainer(latest, data, c); err != nil {
				t.Fatal(err)
			}
		} else {
			p = toyPretrainer(t, dc, c)
		}
		t.Fatal(p.Run(context.Background(), nil)) // runs until killed
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := t.TempDir()
	rng := newRNG(uint64(time.Now().UnixNano()))
	lastStep := 0
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringSave$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for two new checkpoints, then kill at a random moment of the next steps.
		deadline := time.Now().Add(60 * time.Second)
		for {
			steps, _ := checkpointSteps(out)
			if len(steps) > 0 && steps[len(steps)-1] >= lastStep+2 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: no new checkpoint in 60 s", round)
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		leftovers, _ := filepath.Glob(filepath.Join(out, tmpPrefix+"*"))
		latest, err := LatestCheckpoint(out)
		if err != nil || latest == "" {
			t.Fatalf("round %d: latest checkpoint %q, %v", round, latest, err)
		}
		tok, docs := toyCorpus(t)
		data, err := NewPretrainData(tok, docs, DefaultData(32, 1))
		if err != nil {
			t.Fatal(err)
		}
		c := DefaultPretrain(1 << 30)
		c.BatchSize = 2
		p, err := ResumePretrainer(latest, data, c)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := p.Step(context.Background()); err != nil {
			t.Fatalf("round %d: a step after resuming: %v", round, err)
		}
		lastStep = p.State.Step - 1
		t.Logf("round %d: killed after checkpoint %s (%d interrupted saves left behind)", round, filepath.Base(latest), len(leftovers))
	}
}
