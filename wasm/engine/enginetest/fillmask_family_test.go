//go:build !js

package enginetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestFamiliesInNode loads every family's fixture folder into the page's engine in Node, with
// the worker's mapping of files to load's fields (assets/worker.js), and compares fill-mask with
// the PyTorch reference: the tokenizer files of each family reach the engine and work there.
func TestFamiliesInNode(t *testing.T) {
	node, wasm, wasmExec := buildEngine(t)
	type folder struct {
		Dir   string   `json:"dir"`
		Texts []string `json:"texts"`
	}
	var cases []folder
	var items []familyfixture.Item
	for _, family := range familyfixture.Families {
		fx, err := familyfixture.Read(family)
		if err != nil {
			t.Fatal(err)
		}
		c := folder{Dir: familyfixture.Dir(family)}
		for _, it := range fx.Items {
			c.Texts = append(c.Texts, it.Text)
			items = append(items, it)
		}
		cases = append(cases, c)
	}
	b, _ := json.Marshal(cases)
	casesFile := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(casesFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "run_fillmask.mjs", wasmExec, wasm, filepath.Join("..", "..", "..", "assets", "worker.js"), casesFile).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	k := 0
	for i, c := range cases {
		if k >= len(lines) {
			t.Fatalf("output ends early:\n%s", out)
		}
		var info struct {
			OK        bool   `json:"ok"`
			Tokenizer string `json:"tokenizer"`
			Error     string `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[k]), &info); err != nil || !info.OK {
			t.Fatalf("%s: load: %v %.300s", familyfixture.Families[i], err, lines[k])
		}
		k++
		for range c.Texts {
			it := items[0]
			items = items[1:]
			if err := familyfixture.Compare([]byte(lines[k]), it); err != nil {
				t.Errorf("%s (%s): %v", familyfixture.Families[i], info.Tokenizer, err)
			}
			k++
		}
	}
}
