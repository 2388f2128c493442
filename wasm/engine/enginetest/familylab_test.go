//go:build !js

package enginetest

import (
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/lab"
)

// TestFamilyLabInNodeMatchesNative races two variants in the engine wasm under Node, as the
// page's worker does, and the same race natively: the same variants, plans, interleaving,
// losses and held-out figures; and a bad request is an error, not a crash.
func TestFamilyLabInNodeMatchesNative(t *testing.T) {
	node, wasm, wasmExec := buildEngine(t)
	req := engine.FamilyRequest{Variants: []string{"bert", "albert"}, Budget: engine.BudgetTokens, Amount: 2048, Seed: 1}
	rb, _ := json.Marshal(req)
	out, err := exec.Command(node, "run_familylab.mjs", wasmExec, wasm, string(rb)).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	race, err := lab.NewFamilyRace(req)
	if err != nil {
		t.Fatal(err)
	}
	var info engine.FamilyInfo
	if err := json.Unmarshal([]byte(lines[0]), &info); err != nil || len(info.Variants) != 2 {
		t.Fatalf("info %s (%v)", lines[0], err)
	}
	for i, v := range info.Variants {
		w := race.Info().Variants[i]
		if v.Family != w.Family || v.Params != w.Params || v.Steps != w.Steps || v.Tokens != w.Tokens || v.FLOPs != w.FLOPs || !(v.ForwardMs > 0) {
			t.Errorf("variant %d: engine %+v, native %+v", i, v, w)
		}
	}
	i := 1
	for !race.Done() {
		want, err := race.Advance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			continue
		}
		if i >= len(lines) {
			t.Fatalf("the engine stopped early:\n%s", out)
		}
		var got engine.FamilyEvents
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("%v: %s", err, lines[i])
		}
		i++
		if len(got.Events) != len(want) || got.Done != race.Done() {
			t.Fatalf("answer %d: engine %s, native %+v", i-1, lines[i-1], want)
		}
		for k, w := range want {
			g := got.Events[k]
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-4*max(1, math.Abs(b)) }
			if g.Variant != w.Variant || g.Kind != w.Kind || g.Step != w.Step || g.Tokens != w.Tokens || g.FLOPs != w.FLOPs ||
				!close(g.Loss, w.Loss) || !close(g.SentenceLoss, w.SentenceLoss) || !close(g.Perplexity, w.Perplexity) || !close(g.Accuracy, w.Accuracy) {
				t.Errorf("event: engine %+v, native %+v", g, w)
			}
		}
	}
	t.Logf("%d answers matched", i-1)

	bad, _ := json.Marshal(engine.FamilyRequest{Variants: []string{"bert"}})
	out, err = exec.Command(node, "run_familylab.mjs", wasmExec, wasm, string(bad)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"error":"family lab: pick two or more variants`) {
		t.Errorf("one variant: %v\n%s", err, out)
	}
}
