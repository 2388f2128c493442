package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// recipeRun trains a Tiny model of family fam on the toy corpus with the family's recipe for
// the given steps, saving to a temporary folder, and returns the trainer and the folder.
func recipeRun(t *testing.T, fam bert.Family, steps int) (*Pretrainer, string) {
	t.Helper()
	tok, docs := toyCorpus(t)
	dc := DefaultData(32, 3)
	if err := ApplyRecipe(fam, &dc); err != nil {
		t.Fatal(err)
	}
	data, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := FamilyConfig(fam, "tiny", tok)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bert.NewRandom(c, RecipeHeads(fam), 5)
	if err != nil {
		t.Fatal(err)
	}
	pc := DefaultPretrain(steps)
	pc.BatchSize, pc.LR, pc.Warmup, pc.Seed, pc.OutDir = 8, 2e-3, 3, 1, t.TempDir()
	p, err := NewPretrainer(m, tok, data, pc)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return p, pc.OutDir
}

// TestRobertaRecipe trains RoBERTa's recipe and checks what makes it RoBERTa's: no sentence
// task, segments packed across document ends, dynamic masks, position ids from pad_token_id+1,
// and a RobertaForMaskedLM folder that core/hf loads back with the same predictions.
func TestRobertaRecipe(t *testing.T) {
	p, out := recipeRun(t, bert.FamilyRoBERTa, 12)
	d := p.Data
	if d.Config.Instances.Task != NoSentenceTask || !d.Config.Dynamic {
		t.Errorf("data: task %s, dynamic %v; want none and dynamic", d.Config.Instances.Task, d.Config.Dynamic)
	}
	// FULL-SENTENCES: some segment crosses a document end (an inner [SEP]); none has a B segment.
	crossed := false
	for _, in := range d.Instances {
		if slices.Contains(in.InputIDs[1:len(in.InputIDs)-1], tSEP) {
			crossed = true
		}
		if slices.ContainsFunc(in.TokenTypeIDs, func(x int) bool { return x != 0 }) || in.NextSentenceLabel != bert.IgnoreIndex {
			t.Fatalf("instance with a second segment or a sentence label: %+v", in)
		}
	}
	if !crossed {
		t.Error("no segment crosses a document end")
	}
	// Dynamic masking: the same instance is masked differently in two epochs.
	differ := 0
	for i := range d.Instances {
		m0 := d.Instances[i].Masked(d.Masker, newRNG(d.Config.Seed, streamMask, 0, uint64(i)))
		m1 := d.Instances[i].Masked(d.Masker, newRNG(d.Config.Seed, streamMask, 1, uint64(i)))
		if !slices.Equal(m0.Labels, m1.Labels) {
			differ++
		}
	}
	if differ < len(d.Instances)/2 {
		t.Errorf("only %d of %d instances masked differently in epochs 0 and 1", differ, len(d.Instances))
	}

	// The folder: RobertaForMaskedLM under transformers' names, WordPiece tokenizer files.
	raw, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["model_type"] != "roberta" || cfg["tokenizer_class"] != "BertTokenizer" || cfg["type_vocab_size"] != 1.0 ||
		cfg["max_position_embeddings"] != float64(512+tPad+1) || cfg["pad_token_id"] != float64(tPad) {
		t.Errorf("config.json: %s", raw)
	}
	if a, _ := cfg["architectures"].([]any); len(a) != 1 || a[0] != "RobertaForMaskedLM" {
		t.Errorf("architectures %v, want [RobertaForMaskedLM]", cfg["architectures"])
	}
	w, err := hf.Open(filepath.Join(out, hf.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	names := w.Names()
	w.Close()
	for _, n := range []string{"roberta.embeddings.position_embeddings.weight", "lm_head.dense.weight", "lm_head.layer_norm.weight", "lm_head.bias"} {
		if !slices.Contains(names, n) {
			t.Errorf("model.safetensors has no %s", n)
		}
	}
	for _, n := range names {
		if n == "roberta.pooler.dense.weight" || n == "cls.seq_relationship.weight" {
			t.Errorf("model.safetensors has %s, which RobertaForMaskedLM lacks", n)
		}
	}
	if tc, err := os.ReadFile(filepath.Join(out, hf.TokenizerConfigFile)); err != nil || !strings.Contains(string(tc), `"tokenizer_class": "BertTokenizer"`) {
		t.Errorf("tokenizer_config.json: %s, %v", tc, err)
	}
	// Positions count from pad_token_id+1 over the non-pad ids; a pad keeps pad_token_id.
	ids := []int{tCLS, 7, 8, tSEP, tPad, tPad}
	pos := make([]int, len(ids))
	p.Model.Config.PositionIDs(pos, ids, len(ids))
	if want := []int{tPad + 1, tPad + 2, tPad + 3, tPad + 4, tPad, tPad}; !slices.Equal(pos, want) {
		t.Errorf("position ids %v, want %v", pos, want)
	}
	checkLoadsBack(t, p, out)
}

// checkLoadsBack loads the folder out through core/hf and compares its masked-LM predictions
// on evaluation instances with the trained model's, bit for bit (the folder holds F32).
func checkLoadsBack(t *testing.T, p *Pretrainer, out string) {
	t.Helper()
	f, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.Config.FamilyOf() != p.Model.Config.FamilyOf() || f.Tokenizer == nil {
		t.Fatalf("loaded family %s, tokenizer %v; trained %s", f.Model.Config.FamilyOf(), f.Tokenizer != nil, p.Model.Config.FamilyOf())
	}
	if !slices.Equal(f.Model.HeadNames(), p.Model.HeadNames()) {
		t.Errorf("loaded heads %v, trained %v", f.Model.HeadNames(), p.Model.HeadNames())
	}
	b, err := NewPretrainBatch(p.Data.Fixed()[:4], p.Data.PadID, 0)
	if err != nil {
		t.Fatal(err)
	}
	opt := bert.Options{MLM: true, NSP: p.Model.NSP != nil}
	want, err := p.Model.Forward(b.Batch, opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Model.Forward(b.Batch, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.MLMLogits.Data, want.MLMLogits.Data) {
		t.Error("the loaded model's masked-LM logits differ from the trained model's")
	}
	if opt.NSP && !slices.Equal(got.NSPLogits.Data, want.NSPLogits.Data) {
		t.Error("the loaded model's sentence-order logits differ from the trained model's")
	}
}

// TestRecipeLossFalls: each recipe learns the toy corpus, its masked-LM loss falling by a third
// in 60 steps.
func TestRecipeLossFalls(t *testing.T) {
	for _, fam := range []bert.Family{bert.FamilyRoBERTa, bert.FamilyALBERT} {
		t.Run(string(fam), func(t *testing.T) {
			p, _ := recipeRun(t, fam, 60)
			var steps []Event
			for _, e := range p.History {
				if e.Kind == EventStep {
					steps = append(steps, e)
				}
			}
			mean := func(es []Event) (s float64) {
				for _, e := range es {
					s += e.MLMLoss / float64(len(es))
				}
				return s
			}
			first, last := mean(steps[:5]), mean(steps[len(steps)-5:])
			t.Logf("%s: masked-LM loss %.3f -> %.3f, sentence loss %.3f -> %.3f", fam, first, last, steps[0].NSPLoss, steps[len(steps)-1].NSPLoss)
			if !(last < 0.67*first) {
				t.Errorf("masked-LM loss %.3f -> %.3f: want a fall by a third", first, last)
			}
		})
	}
}

// TestAlbertRecipe trains ALBERT's recipe: sentence-order pairs, an embedding size below the
// hidden size, every block sharing one layer, and an AlbertForPreTraining folder that core/hf
// loads back with the same predictions.
func TestAlbertRecipe(t *testing.T) {
	p, out := recipeRun(t, bert.FamilyALBERT, 8)
	c := p.Model.Config
	if p.Data.Config.Instances.Task != SentenceOrder {
		t.Errorf("task %s, want sentence-order", p.Data.Config.Instances.Task)
	}
	if c.EmbDim() != 32 || c.HiddenSize != 128 || len(p.Model.Layers) != 1 || p.Model.NumBlocks() != 2 {
		t.Errorf("embedding size %d, hidden %d, %d distinct layers for %d blocks; want 32, 128, 1, 2", c.EmbDim(), c.HiddenSize, len(p.Model.Layers), p.Model.NumBlocks())
	}
	// Both sentence orders occur.
	var labels [2]int
	for _, in := range p.Data.Instances {
		labels[in.NextSentenceLabel]++
	}
	if labels[0] == 0 || labels[1] == 0 {
		t.Errorf("sentence-order labels %v: want both", labels)
	}
	raw, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if a, _ := cfg["architectures"].([]any); cfg["model_type"] != "albert" || len(a) != 1 || a[0] != "AlbertForPreTraining" ||
		cfg["embedding_size"] != 32.0 || cfg["num_hidden_groups"] != 1.0 {
		t.Errorf("config.json: %s", raw)
	}
	w, err := hf.Open(filepath.Join(out, hf.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	names := w.Names()
	w.Close()
	for _, n := range []string{"albert.encoder.embedding_hidden_mapping_in.weight", "albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight",
		"sop_classifier.classifier.weight", "predictions.dense.weight"} {
		if !slices.Contains(names, n) {
			t.Errorf("model.safetensors has no %s", n)
		}
	}
	checkLoadsBack(t, p, out)
}

func TestParseRecipeFamily(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bert.Family
		ok   bool
	}{{"", bert.FamilyBERT, true}, {"RoBERTa", bert.FamilyRoBERTa, true}, {"albert", bert.FamilyALBERT, true}, {"ELECTRA", bert.FamilyELECTRA, true}, {"distilbert", bert.FamilyDistilBERT, true}, {"deberta-v2", bert.FamilyDeBERTaV2, true}, {"mpnet", "", false}, {"gpt", "", false}} {
		got, err := ParseRecipeFamily(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRecipeFamily(%q) = %q, %v", tc.in, got, err)
		}
	}
}

// TestDebertaRecipe trains DeBERTa's recipe: a DebertaV2ForMaskedLM with disentangled attention
// and no absolute positions learns the toy corpus, and its folder loads back with the same
// logits.
func TestDebertaRecipe(t *testing.T) {
	p, out := recipeRun(t, bert.FamilyDeBERTaV2, 50)
	c := p.Model.Config
	if d := c.Disentangled; d == nil || !d.C2P || !d.P2C || !d.NormRelEmb || p.Model.PosEmb != nil || p.Model.TypeEmb != nil || p.Model.RelEmb == nil {
		t.Fatalf("config %+v", c)
	}
	var steps []Event
	for _, e := range p.History {
		if e.Kind == EventStep {
			steps = append(steps, e)
		}
	}
	first, last := (steps[0].MLMLoss+steps[1].MLMLoss+steps[2].MLMLoss)/3, (steps[47].MLMLoss+steps[48].MLMLoss+steps[49].MLMLoss)/3
	t.Logf("masked-LM loss %.3f -> %.3f", first, last)
	if !(last < 0.8*first) {
		t.Errorf("masked-LM loss %.3f -> %.3f: want a fall by a fifth", first, last)
	}
	raw, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if a, _ := cfg["architectures"].([]any); cfg["model_type"] != "deberta-v2" || len(a) != 1 || a[0] != "DebertaV2ForMaskedLM" ||
		cfg["position_biased_input"] != false || cfg["relative_attention"] != true {
		t.Errorf("config.json: %s", raw)
	}
	checkLoadsBack(t, p, out)
}

// TestStartFamilyModelFolders: a folder of one family starts that family's recipe and no other;
// BERT's recipe points a folder of another family to its own.
func TestStartFamilyModelFolders(t *testing.T) {
	p, out := recipeRun(t, bert.FamilyRoBERTa, 2)
	m, tok, _, err := StartFamilyModel(bert.FamilyRoBERTa, out, "", "", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.WordEmb.Data, p.Model.WordEmb.Data) || tok == nil {
		t.Error("the RoBERTa folder did not start its recipe with its weights and tokenizer")
	}
	for _, tc := range []struct {
		fam  bert.Family
		want string
	}{{bert.FamilyALBERT, "holds a roberta model, not albert"}, {bert.FamilyBERT, "--family roberta"}, {bert.FamilyELECTRA, "starts from a preset"}} {
		if _, _, _, err := StartFamilyModel(tc.fam, out, "", "", "", 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s recipe from a RoBERTa folder: %v, want %q", tc.fam, err, tc.want)
		}
	}
}
