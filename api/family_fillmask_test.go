package api

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/internal/familyfixture"
)

// TestFillMaskFamilies serves each family's fixture folder and asks /api/fill-mask for every
// sentence of its fixture: the PyTorch reference's top 5, with readable words; /api/tokenize
// gives HuggingFace tokenizers' ids.
func TestFillMaskFamilies(t *testing.T) {
	for _, family := range familyfixture.Families {
		t.Run(family, func(t *testing.T) {
			fx, err := familyfixture.Read(family)
			if err != nil {
				t.Fatal(err)
			}
			e, err := engine.Open(os.DirFS(familyfixture.Dir(family)), family)
			if err != nil {
				t.Fatal(err)
			}
			h, err := New(e, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range fx.Items {
				body, _ := json.Marshal(map[string]any{"text": it.Text, "top_k": 5})
				code, got, _ := do(t, h, http.MethodPost, "/api/fill-mask", string(body))
				if code != http.StatusOK {
					t.Fatalf("%q: status %d: %s", it.Text, code, got)
				}
				if err := familyfixture.Compare(got, it); err != nil {
					t.Error(err)
				}
				body, _ = json.Marshal(map[string]any{"text": it.Text})
				code, got, _ = do(t, h, http.MethodPost, "/api/tokenize", string(body))
				if code != http.StatusOK {
					t.Fatalf("tokenize %q: status %d: %s", it.Text, code, got)
				}
				var tok struct {
					IDs []int `json:"input_ids"`
				}
				if err := json.Unmarshal(got, &tok); err != nil {
					t.Fatalf("tokenize %q: %s (%v)", it.Text, got, err)
				}
				if !slices.Equal(tok.IDs, it.IDs) {
					t.Errorf("tokenize %q: ids %v, HF %v", it.Text, tok.IDs, it.IDs)
				}
			}
		})
	}
}
