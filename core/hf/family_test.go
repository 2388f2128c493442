package hf_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// The family fixtures of scripts/familyref (core/bert's testdata).
const (
	distilDir     = "../bert/testdata/distilbert-tiny-random"
	distilSinDir  = "../bert/testdata/distilbert-tiny-sinusoidal"
	robertaDir    = "../bert/testdata/roberta-tiny-random"
	robertaPadIdx = 1
	albertDir     = "../bert/testdata/albert-tiny-random"
	albertGrpDir  = "../bert/testdata/albert-tiny-groups"
	electraDisc   = "../bert/testdata/electra-tiny-discriminator"
	electraGen    = "../bert/testdata/electra-tiny-generator"
	debertaDir    = "../bert/testdata/deberta-tiny-random"
	debertaNoBkt  = "../bert/testdata/deberta-tiny-nobuckets"
)

func TestFamilyNames(t *testing.T) {
	tests := []struct {
		fam        bert.Family
		file, bert string // file "" : bert has no counterpart in the family
	}{
		{bert.FamilyDistilBERT, "distilbert.embeddings.word_embeddings.weight", "bert.embeddings.word_embeddings.weight"},
		{bert.FamilyDistilBERT, "distilbert.embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.weight"},
		{bert.FamilyDistilBERT, "distilbert.transformer.layer.2.attention.q_lin.weight", "bert.encoder.layer.2.attention.self.query.weight"},
		{bert.FamilyDistilBERT, "distilbert.transformer.layer.0.attention.out_lin.bias", "bert.encoder.layer.0.attention.output.dense.bias"},
		{bert.FamilyDistilBERT, "distilbert.transformer.layer.0.sa_layer_norm.weight", "bert.encoder.layer.0.attention.output.LayerNorm.weight"},
		{bert.FamilyDistilBERT, "distilbert.transformer.layer.5.ffn.lin1.weight", "bert.encoder.layer.5.intermediate.dense.weight"},
		{bert.FamilyDistilBERT, "distilbert.transformer.layer.5.ffn.lin2.weight", "bert.encoder.layer.5.output.dense.weight"},
		{bert.FamilyDistilBERT, "distilbert.transformer.layer.5.output_layer_norm.bias", "bert.encoder.layer.5.output.LayerNorm.bias"},
		{bert.FamilyDistilBERT, "vocab_transform.weight", "cls.predictions.transform.dense.weight"},
		{bert.FamilyDistilBERT, "vocab_layer_norm.bias", "cls.predictions.transform.LayerNorm.bias"},
		{bert.FamilyDistilBERT, "vocab_projector.weight", "cls.predictions.decoder.weight"},
		{bert.FamilyDistilBERT, "vocab_projector.bias", "cls.predictions.bias"},
		{bert.FamilyRoBERTa, "roberta.embeddings.token_type_embeddings.weight", "bert.embeddings.token_type_embeddings.weight"},
		{bert.FamilyRoBERTa, "roberta.encoder.layer.1.attention.self.key.bias", "bert.encoder.layer.1.attention.self.key.bias"},
		{bert.FamilyRoBERTa, "roberta.pooler.dense.weight", "bert.pooler.dense.weight"},
		{bert.FamilyRoBERTa, "lm_head.dense.weight", "cls.predictions.transform.dense.weight"},
		{bert.FamilyRoBERTa, "lm_head.layer_norm.weight", "cls.predictions.transform.LayerNorm.weight"},
		{bert.FamilyRoBERTa, "lm_head.decoder.weight", "cls.predictions.decoder.weight"},
		{bert.FamilyRoBERTa, "lm_head.decoder.bias", "cls.predictions.decoder.bias"},
		{bert.FamilyRoBERTa, "lm_head.bias", "cls.predictions.bias"},
		{bert.FamilyBERT, "bert.encoder.layer.0.output.dense.weight", "bert.encoder.layer.0.output.dense.weight"},
		{bert.FamilyALBERT, "albert.encoder.embedding_hidden_mapping_in.weight", "bert.encoder.embedding_hidden_mapping_in.weight"},
		{bert.FamilyALBERT, "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight", "bert.encoder.layer.0.attention.self.query.weight"},
		{bert.FamilyALBERT, "albert.encoder.albert_layer_groups.1.albert_layers.0.attention.dense.bias", "bert.encoder.layer.1.attention.output.dense.bias"},
		{bert.FamilyALBERT, "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.LayerNorm.weight", "bert.encoder.layer.0.attention.output.LayerNorm.weight"},
		{bert.FamilyALBERT, "albert.encoder.albert_layer_groups.11.albert_layers.0.ffn.weight", "bert.encoder.layer.11.intermediate.dense.weight"},
		{bert.FamilyALBERT, "albert.encoder.albert_layer_groups.0.albert_layers.0.ffn_output.bias", "bert.encoder.layer.0.output.dense.bias"},
		{bert.FamilyALBERT, "albert.encoder.albert_layer_groups.0.albert_layers.0.full_layer_layer_norm.bias", "bert.encoder.layer.0.output.LayerNorm.bias"},
		{bert.FamilyALBERT, "albert.pooler.weight", "bert.pooler.dense.weight"},
		{bert.FamilyALBERT, "predictions.dense.weight", "cls.predictions.transform.dense.weight"},
		{bert.FamilyALBERT, "predictions.LayerNorm.bias", "cls.predictions.transform.LayerNorm.bias"},
		{bert.FamilyALBERT, "predictions.decoder.weight", "cls.predictions.decoder.weight"},
		{bert.FamilyALBERT, "predictions.decoder.bias", "cls.predictions.decoder.bias"},
		{bert.FamilyALBERT, "predictions.bias", "cls.predictions.bias"},
		{bert.FamilyALBERT, "sop_classifier.classifier.weight", "cls.seq_relationship.weight"},
		{bert.FamilyELECTRA, "electra.embeddings_project.weight", "bert.encoder.embedding_hidden_mapping_in.weight"},
		{bert.FamilyELECTRA, "electra.encoder.layer.2.output.dense.bias", "bert.encoder.layer.2.output.dense.bias"},
		{bert.FamilyELECTRA, "generator_predictions.dense.weight", "cls.predictions.transform.dense.weight"},
		{bert.FamilyELECTRA, "generator_predictions.LayerNorm.bias", "cls.predictions.transform.LayerNorm.bias"},
		{bert.FamilyELECTRA, "generator_lm_head.weight", "cls.predictions.decoder.weight"},
		{bert.FamilyELECTRA, "generator_lm_head.bias", "cls.predictions.bias"},
		{bert.FamilyELECTRA, "discriminator_predictions.dense_prediction.weight", "discriminator_predictions.dense_prediction.weight"},
		{bert.FamilyDeBERTaV2, "deberta.encoder.layer.0.attention.self.query_proj.weight", "bert.encoder.layer.0.attention.self.query.weight"},
		{bert.FamilyDeBERTaV2, "deberta.encoder.layer.3.attention.self.value_proj.bias", "bert.encoder.layer.3.attention.self.value.bias"},
		{bert.FamilyDeBERTaV2, "deberta.encoder.rel_embeddings.weight", "bert.encoder.rel_embeddings.weight"},
		{bert.FamilyDeBERTaV2, "deberta.encoder.LayerNorm.bias", "bert.encoder.LayerNorm.bias"},
		{bert.FamilyDeBERTaV2, "cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.weight"},
		{bert.FamilyDeBERTaV2, "cls.predictions.bias", "cls.predictions.bias"},
	}
	for _, tc := range tests {
		if got, ok := hf.BERTName(tc.fam, tc.file); !ok || got != tc.bert {
			t.Errorf("BERTName(%s, %q) = %q, %v; want %q", tc.fam, tc.file, got, ok, tc.bert)
		}
		if got := hf.FamilyName(tc.fam, tc.bert); got != tc.file {
			t.Errorf("FamilyName(%s, %q) = %q, want %q", tc.fam, tc.bert, got, tc.file)
		}
	}
	// A bare model's names (saved without the prefix) and legacy LayerNorm names map too.
	bare := []struct {
		fam        bert.Family
		file, bert string
	}{
		{bert.FamilyDistilBERT, "transformer.layer.1.ffn.lin2.bias", "bert.encoder.layer.1.output.dense.bias"},
		{bert.FamilyDistilBERT, "embeddings.position_embeddings.weight", "bert.embeddings.position_embeddings.weight"},
		{bert.FamilyRoBERTa, "encoder.layer.0.output.LayerNorm.gamma", "bert.encoder.layer.0.output.LayerNorm.weight"},
		{bert.FamilyRoBERTa, "pooler.dense.bias", "bert.pooler.dense.bias"},
		{bert.FamilyRoBERTa, "roberta.embeddings.position_ids", "bert.embeddings.position_ids"},
		{bert.FamilyALBERT, "encoder.albert_layer_groups.1.albert_layers.0.ffn.bias", "bert.encoder.layer.1.intermediate.dense.bias"},
		{bert.FamilyALBERT, "pooler.bias", "bert.pooler.dense.bias"},
		{bert.FamilyDeBERTaV2, "lm_predictions.lm_head.dense.weight", "cls.predictions.transform.dense.weight"},
		{bert.FamilyDeBERTaV2, "lm_predictions.lm_head.LayerNorm.weight", "cls.predictions.transform.LayerNorm.weight"},
		{bert.FamilyDeBERTaV2, "lm_predictions.lm_head.bias", "cls.predictions.bias"},
		{bert.FamilyDeBERTaV2, "encoder.rel_embeddings.weight", "bert.encoder.rel_embeddings.weight"},
		// A second layer in a group (inner_group_num 2) has no parameter to go to: reported as ignored.
		{bert.FamilyALBERT, "albert.encoder.albert_layer_groups.0.albert_layers.1.ffn.bias", "bert.encoder.layer.0.albert_layers.1.intermediate.dense.bias"},
	}
	for _, tc := range bare {
		if got, ok := hf.BERTName(tc.fam, tc.file); !ok || got != tc.bert {
			t.Errorf("BERTName(%s, %q) = %q, %v; want %q", tc.fam, tc.file, got, ok, tc.bert)
		}
	}
	// Names that are not the family's.
	for _, tc := range []struct {
		fam  bert.Family
		name string
	}{
		{bert.FamilyDistilBERT, "bert.encoder.layer.0.output.dense.weight"},
		{bert.FamilyDistilBERT, "classifier.weight"},
		{bert.FamilyRoBERTa, "cls.predictions.bias"},
		{bert.FamilyRoBERTa, "classifier.dense.weight"},
	} {
		if got, ok := hf.BERTName(tc.fam, tc.name); ok {
			t.Errorf("BERTName(%s, %q) = %q, want not the family's", tc.fam, tc.name, got)
		}
	}
}

// TestFamilyNamesRoundTrip maps every parameter of a model of each family to the family's name
// and back.
func TestFamilyNamesRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"model_type":"distilbert","dim":8,"n_heads":2,"n_layers":3,"hidden_dim":16,"vocab_size":20,"max_position_embeddings":6}`,
		`{"model_type":"roberta","hidden_size":8,"num_attention_heads":2,"num_hidden_layers":3,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8,"type_vocab_size":1,"tie_word_embeddings":false}`,
		`{"model_type":"albert","embedding_size":4,"hidden_size":8,"num_attention_heads":2,"num_hidden_layers":3,"num_hidden_groups":2,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8,"tie_word_embeddings":false}`,
		`{"model_type":"electra","embedding_size":4,"hidden_size":8,"num_attention_heads":2,"num_hidden_layers":3,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8,"tie_word_embeddings":false}`,
		`{"model_type":"deberta-v2","hidden_size":8,"num_attention_heads":2,"num_hidden_layers":3,"intermediate_size":16,"vocab_size":20,"max_position_embeddings":8,"relative_attention":true,"pos_att_type":["c2p","p2c"],"position_buckets":4,"norm_rel_ebd":"layer_norm","share_att_key":true,"type_vocab_size":2,"tie_word_embeddings":false}`,
	} {
		c, err := bert.ParseConfig([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		fam := c.FamilyOf()
		m, err := bert.NewModel(c, bert.Heads{Pooler: fam == bert.FamilyRoBERTa || fam == bert.FamilyALBERT, MLM: true,
			NSP: fam == bert.FamilyALBERT, RTD: fam == bert.FamilyELECTRA})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, p := range m.Params() {
			fn := hf.FamilyName(c.Family, p.Name)
			// Every name is the family's own but ELECTRA's discriminator head (which BERT lacks) and
			// DeBERTa's legacy head (BERT's cls.predictions).
			same := strings.HasPrefix(p.Name, "discriminator_predictions.") || (fam == bert.FamilyDeBERTaV2 && strings.HasPrefix(p.Name, "cls."))
			if (fn == p.Name && !same) || seen[fn] {
				t.Errorf("%s: %q has family name %q", c.Family, p.Name, fn)
			}
			seen[fn] = true
			if back, ok := hf.BERTName(c.Family, fn); !ok || back != p.Name {
				t.Errorf("%s: %q -> %q -> %q, %v", c.Family, p.Name, fn, back, ok)
			}
		}
	}
}

// readTensors reads the float32 tensors of a safetensors file, in file order.
func readTensors(t *testing.T, path string) []hf.Tensor {
	t.Helper()
	f, err := hf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ts []hf.Tensor
	for _, n := range f.Names() {
		if info, _ := f.Info(n); info.DType != hf.F32 {
			continue
		}
		d, shape, err := f.Float32(n)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, hf.Tensor{Name: n, Shape: shape, Data: d})
	}
	return ts
}

// memFolder is a model folder in memory: dir's config.json and the tensors given.
func memFolder(t *testing.T, dir string, ts []hf.Tensor) fstest.MapFS {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(dir, hf.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := hf.Encode(&buf, ts, hf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{hf.ConfigFile: {Data: cfg}, hf.WeightsFile: {Data: buf.Bytes()}}
}

// edit returns ts with fn applied to each tensor's name; "" drops the tensor.
func edit(ts []hf.Tensor, fn func(string) string) []hf.Tensor {
	var out []hf.Tensor
	for _, x := range ts {
		if n := fn(x.Name); n != "" {
			x.Name = n
			out = append(out, x)
		}
	}
	return out
}

// familyForward runs m on the batch of the family fixture in dir: last hidden state and, with
// the MLM head, the logits.
func familyForward(t *testing.T, dir string, m *bert.Model) (hidden, logits []float32) {
	t.Helper()
	f, err := hf.Open(filepath.Join(dir, "inputs.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func(name string) []int {
		v, _, err := f.Int64(name)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out
	}
	b := bert.Batch{B: 2, S: 10, InputIDs: get("input_ids"), AttentionMask: get("attention_mask")}
	out, err := m.Forward(b, bert.Options{MLM: m.MLM != nil})
	if err != nil {
		t.Fatal(err)
	}
	if out.MLMLogits != nil {
		logits = out.MLMLogits.Data
	}
	return out.Hidden.Data, logits
}

// TestLoadFamilyVariants loads the fixtures in the other layouts real checkpoints come in and
// checks the outputs stay those of the fixture, and that a broken file's error names the tensor
// as the family's checkpoints do.
func TestLoadFamilyVariants(t *testing.T) {
	tests := []struct {
		name    string
		dir     string
		rename  func(string) string
		add     []hf.Tensor
		notes   string // a substring of the report's notes
		ignored string // a tensor the report lists as ignored
		wantErr string
	}{
		{name: "distilbert bare model", dir: distilDir, rename: func(n string) string {
			if !strings.HasPrefix(n, "distilbert.") {
				return ""
			}
			return strings.TrimPrefix(n, "distilbert.")
		}},
		{name: "distilbert legacy names kept apart", dir: distilDir, rename: func(n string) string { return n },
			add: []hf.Tensor{{Name: "classifier.weight", Shape: []int{2, 48}, Data: make([]float32, 96)}}, ignored: "classifier.weight"},
		{name: "distilbert tied projector present", dir: distilDir, rename: func(n string) string { return n },
			add: []hf.Tensor{{Name: "vocab_projector.weight", Shape: []int{120, 48}, Data: make([]float32, 120*48)}}, notes: "decoder weight present"},
		{name: "distilbert sinusoids absent", dir: distilSinDir, rename: func(n string) string {
			if n == "embeddings.position_embeddings.weight" {
				return ""
			}
			return n
		}, notes: "embeddings.position_embeddings.weight absent: the sinusoids"},
		{name: "distilbert layer missing", dir: distilDir, rename: func(n string) string {
			if n == "distilbert.transformer.layer.1.ffn.lin2.weight" {
				return ""
			}
			return n
		}, wantErr: `tensor "distilbert.transformer.layer.1.ffn.lin2.weight" missing (shape [48,64] expected)`},
		{name: "distilbert shape", dir: distilDir, rename: func(n string) string {
			if n == "vocab_transform.bias" {
				return ""
			}
			return n
		}, add: []hf.Tensor{{Name: "vocab_transform.bias", Shape: []int{47}, Data: make([]float32, 47)}},
			wantErr: `tensor "vocab_transform.bias": shape [47], config.json expects [48]`},
		{name: "deberta lm_predictions head", dir: debertaDir, rename: func(n string) string {
			return strings.Replace(strings.Replace(n, "cls.predictions.transform.", "lm_predictions.lm_head.", 1), "cls.predictions.bias", "lm_predictions.lm_head.bias", 1)
		}},
		{name: "deberta stale position embeddings", dir: debertaDir, rename: func(n string) string { return n },
			add:     []hf.Tensor{{Name: "deberta.embeddings.position_embeddings.weight", Shape: []int{16, 48}, Data: make([]float32, 16*48)}},
			ignored: "deberta.embeddings.position_embeddings.weight"},
		{name: "roberta bare model", dir: robertaDir, rename: func(n string) string {
			if !strings.HasPrefix(n, "roberta.") {
				return ""
			}
			return strings.TrimPrefix(n, "roberta.")
		}},
		{name: "roberta bias under the decoder", dir: robertaDir, rename: func(n string) string {
			if n == "lm_head.bias" {
				return "lm_head.decoder.bias"
			}
			return n
		}, notes: "MLM bias read from lm_head.decoder.bias"},
		{name: "roberta BERT names are not its", dir: robertaDir, rename: func(n string) string {
			if n == "lm_head.dense.weight" {
				return "cls.predictions.transform.dense.weight"
			}
			return n
		}, ignored: "cls.predictions.transform.dense.weight"}, // and no MLM head: the rest of lm_head is ignored too
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := hf.LoadFolder(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			ts := append(edit(readTensors(t, filepath.Join(tc.dir, hf.WeightsFile)), tc.rename), tc.add...)
			f, err := hf.LoadFS(memFolder(t, tc.dir, ts), "mem")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.notes != "" && !slices.ContainsFunc(f.Report.Notes, func(s string) bool { return strings.Contains(s, tc.notes) }) {
				t.Errorf("notes %q lack %q", f.Report.Notes, tc.notes)
			}
			if tc.ignored != "" && !slices.Contains(f.Report.Ignored, tc.ignored) {
				t.Errorf("ignored %q lack %q", f.Report.Ignored, tc.ignored)
			}
			hRef, lRef := familyForward(t, tc.dir, ref.Model)
			h, l := familyForward(t, tc.dir, f.Model)
			if err := approx.Check("last_hidden_state", h, hRef, 0, 0); err != nil {
				t.Error(err)
			}
			if l != nil {
				if err := approx.Check("logits", l, lRef, 0, 0); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestSaveFamilyFolder saves each family fixture and loads it back: the file holds the tensor
// names transformers writes, config.json keeps the family's keys, and the outputs are the same.
func TestSaveFamilyFolder(t *testing.T) {
	for _, dir := range []string{distilDir, distilSinDir, robertaDir, albertDir, albertGrpDir, electraDisc, electraGen, debertaDir, debertaNoBkt} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ref, err := hf.LoadFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			if err := hf.SaveFolder(out, ref.Model, nil, hf.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			names := func(path string) []string {
				var ns []string
				for _, x := range readTensors(t, path) {
					ns = append(ns, x.Name)
				}
				slices.Sort(ns)
				return ns
			}
			if got, want := names(filepath.Join(out, hf.WeightsFile)), names(filepath.Join(dir, hf.WeightsFile)); !slices.Equal(got, want) {
				t.Errorf("saved tensors\n%q\nwant\n%q", got, want)
			}
			back, err := hf.LoadFolder(out)
			if err != nil {
				t.Fatal(err)
			}
			if back.Model.Config.FamilyOf() != ref.Model.Config.FamilyOf() || back.Model.Config.SinusoidalPosEmbds != ref.Model.Config.SinusoidalPosEmbds {
				t.Errorf("config changed: %+v", back.Model.Config)
			}
			hRef, lRef := familyForward(t, dir, ref.Model)
			h, l := familyForward(t, dir, back.Model)
			if err := approx.Check("last_hidden_state", h, hRef, 0, 0); err != nil {
				t.Error(err)
			}
			if err := approx.Check("logits", l, lRef, 0, 0); err != nil {
				t.Error(err)
			}
			var arch struct{ Architectures []string }
			b, _ := os.ReadFile(filepath.Join(out, hf.ConfigFile))
			want, _ := os.ReadFile(filepath.Join(dir, hf.ConfigFile))
			var wantArch struct{ Architectures []string }
			if json.Unmarshal(b, &arch) != nil || json.Unmarshal(want, &wantArch) != nil || !slices.Equal(arch.Architectures, wantArch.Architectures) {
				t.Errorf("architectures %v, want %v", arch.Architectures, wantArch.Architectures)
			}
		})
	}
}

// TestFamilyTaskHeadsRefused: a family's task heads and BERT's pre-training heads are not
// supported yet, and say so.
func TestFamilyTaskHeadsRefused(t *testing.T) {
	f, err := hf.LoadFolder(distilDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CompleteHeads(1); err == nil || !strings.Contains(err.Error(), "pre-training a distilbert model") {
		t.Errorf("CompleteHeads: %v", err)
	}
	_, err = hf.LoadTaskFolder(robertaDir, bert.SequenceClassification, hf.TaskLoadOptions{})
	if err == nil || !strings.Contains(err.Error(), `model_type "roberta"`) {
		t.Fatalf("error %v, want one naming model_type roberta", err)
	}
}

// FuzzBERTName: a tensor name from a checkpoint (outside input) maps for every family without
// panicking, to one of Model.Params' name spaces, and the family's name of the result maps back
// to the same name.
func FuzzBERTName(f *testing.F) {
	for _, s := range []string{
		"distilbert.transformer.layer.0.attention.q_lin.weight", "transformer.layer.5.ffn.lin2.bias",
		"roberta.encoder.layer.1.attention.output.LayerNorm.gamma", "lm_head.decoder.bias",
		"albert.encoder.albert_layer_groups.0.albert_layers.0.ffn_output.weight",
		"albert.encoder.albert_layer_groups..albert_layers.", "encoder.albert_layer_groups.3.albert_layers.7.x",
		"electra.embeddings_project.weight", "generator_lm_head.weight", "sop_classifier.classifier.bias",
		"", ".", "bert.", "distilbert.", "vocab_projector.weight.extra",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, fam := range bert.Families {
			key, ok := hf.BERTName(fam, name)
			if !ok || fam == bert.FamilyBERT {
				continue
			}
			if !strings.HasPrefix(key, "bert.") && !strings.HasPrefix(key, "cls.") && !strings.HasPrefix(key, "discriminator_predictions.") {
				t.Fatalf("%s: %q maps to %q, outside the model's names", fam, name, key)
			}
			back, ok := hf.BERTName(fam, hf.FamilyName(fam, key))
			if !ok || back != key {
				t.Fatalf("%s: %q -> %q -> %q -> %q, %v", fam, name, key, hf.FamilyName(fam, key), back, ok)
			}
		}
	})
}
