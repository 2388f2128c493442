package train

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// RecipeFamilies are the families whose pre-training recipe this package runs (ApplyRecipe):
// BERT's masked LM with next-sentence prediction, RoBERTa's, ALBERT's, ELECTRA's, DistilBERT's
// (a student distilled from a teacher: distilbert.go) and DeBERTa's.
var RecipeFamilies = []bert.Family{bert.FamilyBERT, bert.FamilyRoBERTa, bert.FamilyALBERT, bert.FamilyELECTRA, bert.FamilyDistilBERT, bert.FamilyDeBERTaV2}

// ParseRecipeFamily reads a family name for a recipe ("" is BERT, "deberta" DeBERTa-v2).
func ParseRecipeFamily(name string) (bert.Family, error) {
	switch strings.ToLower(name) {
	case "":
		return bert.FamilyBERT, nil
	case "deberta":
		return bert.FamilyDeBERTaV2, nil
	}
	for _, f := range RecipeFamilies {
		if strings.EqualFold(name, string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(RecipeFamilies))
	for i, f := range RecipeFamilies {
		names[i] = string(f)
	}
	return "", fmt.Errorf("family %q: no pre-training recipe (have %s)", name, strings.Join(names, ", "))
}

// ApplyRecipe sets the data settings that make a family's recipe:
//   - BERT: masked LM and next-sentence prediction on [CLS] A [SEP] B [SEP] pairs, masks as dc
//     says (static by default);
//   - RoBERTa (Liu et al. 2019, FULL-SENTENCES without NSP): one segment of consecutive sentences
//     packed up to the length across document ends (an extra [SEP] marks each end), no sentence
//     task, and dynamic masking (new masks for every instance in every epoch);
//   - ALBERT (Lan et al. 2019): sentence-order prediction on pairs of consecutive segments
//     (swapped half the time) instead of NSP;
//   - ELECTRA (Clark et al. 2020): single segments packed as RoBERTa's, masks drawn anew each
//     epoch (ELECTRA masks in the training graph), no sentence task (electra.go has the rest);
//   - DistilBERT (Sanh et al. 2019) and DeBERTa (He et al. 2021, v2's masked LM): the same, as
//     they were trained (distilbert.go for DistilBERT's teacher).
//
// The masking rate, whole-word masking and lengths stay as dc has them.
func ApplyRecipe(fam bert.Family, dc *DataConfig) error {
	switch {
	case fam.Is(bert.FamilyBERT):
		dc.Instances.Task = NextSentence
	case fam.Is(bert.FamilyRoBERTa):
		dc.Instances.Task, dc.Dynamic = NoSentenceTask, true
	case fam.Is(bert.FamilyALBERT):
		dc.Instances.Task = SentenceOrder
	case fam.Is(bert.FamilyELECTRA), fam.Is(bert.FamilyDistilBERT), fam.Is(bert.FamilyDeBERTaV2):
		dc.Instances.Task, dc.Dynamic = NoSentenceTask, true
	default:
		_, err := ParseRecipeFamily(fam.Name())
		return err
	}
	return nil
}

// recipePositions is the longest sequence a recipe's model takes (BERT's 512).
const recipePositions = 512

// DeBERTaPositionBuckets is a DeBERTa recipe's position_buckets: offsets within ±16 have their
// own relative embedding, longer ones share log-spaced buckets (DeBERTa-v3 has 256 for its
// 512-token sequences; 32 keeps the c2p and p2c products near the size of the scores at 128).
const DeBERTaPositionBuckets = 32

// AlbertEmbeddingSize is the embedding width E a recipe gives an ALBERT of hidden size H:
// ALBERT's 128 for every published size (H ≥ 768), a quarter of H below that, so that the
// factorisation still saves parameters at Tiny and Mini sizes (E = 32 at H = 128).
func AlbertEmbeddingSize(H int) int { return max(1, min(128, H/4)) }

// FamilyConfig is the config of a preset's size (bert.Preset) in family fam for the vocabulary
// of tok:
//   - BERT: the preset as it is;
//   - RoBERTa: one token type, position ids counted from pad_token_id+1 (max_position_embeddings
//     512 + pad_token_id + 1, as RoBERTa's 514 = 512 + 1 + 1), layer_norm_eps 1e-5, bos and eos the
//     [CLS] and [SEP] ids;
//   - ALBERT: embedding_size AlbertEmbeddingSize(H) with its projection, every block sharing one
//     layer (num_hidden_groups 1), hidden_act gelu_new and no dropout (ALBERT v2's configs);
//   - ELECTRA: the discriminator of ElectraConfig (its generator is GeneratorConfig's);
//   - DeBERTa-v2: disentangled attention with c2p and p2c, DeBERTaPositionBuckets log buckets up
//     to 512 positions, relative embeddings LayerNorm-ed and shared by the layers' key and query
//     maps, no absolute positions, no token types, layer_norm_eps 1e-7 (DeBERTa-v3's settings
//     but the buckets, which suit our short sequences).
//
// The vocabulary stays tok's WordPiece: config.json names tokenizer_class BertTokenizer, so
// that transformers' AutoTokenizer reads the folder's vocab.txt (tokenizer_config.json says the
// same) rather than looking for the family's own tokenizer files.
func FamilyConfig(fam bert.Family, preset string, tok *tokenizer.Tokenizer) (bert.Config, error) {
	if fam.Is(bert.FamilyELECTRA) {
		return ElectraConfig(preset, tok)
	}
	if fam.Is(bert.FamilyDistilBERT) {
		return bert.Config{}, fmt.Errorf("distilbert: the student's config is its teacher's (NewDistilStudent), not a preset's")
	}
	c, err := bert.Preset(preset)
	if err != nil {
		return bert.Config{}, err
	}
	c.VocabSize, c.PadTokenID = tok.Vocab().Len(), tok.PadID()
	switch {
	case fam.Is(bert.FamilyBERT):
		return c, c.Validate()
	case fam.Is(bert.FamilyRoBERTa):
		c.Family = bert.FamilyRoBERTa
		c.TypeVocabSize = 1
		c.MaxPositionEmbeddings = recipePositions + c.PadTokenID + 1
		c.LayerNormEps = 1e-5
	case fam.Is(bert.FamilyDeBERTaV2):
		c.Family, c.TypeVocabSize, c.LayerNormEps = bert.FamilyDeBERTaV2, 0, 1e-7
		c.NoPositionEmbeddings = true
		c.Disentangled = &bert.Disentangled{C2P: true, P2C: true, Relative: true, PositionBuckets: DeBERTaPositionBuckets,
			MaxRelativePositions: c.MaxPositionEmbeddings, NormRelEmb: true}
	case fam.Is(bert.FamilyALBERT):
		c.Family = bert.FamilyALBERT
		c.EmbeddingSize, c.NumHiddenGroups = AlbertEmbeddingSize(c.HiddenSize), 1
		c.HiddenAct = "gelu_new"
		c.HiddenDropoutProb, c.AttentionProbsDropoutProb = 0, 0
	default:
		_, err := ParseRecipeFamily(fam.Name())
		return bert.Config{}, err
	}
	for k, v := range map[string]any{"tokenizer_class": "BertTokenizer", "bos_token_id": tok.CLSID(), "eos_token_id": tok.SEPID()} {
		if err := c.SetExtra(k, v); err != nil {
			return bert.Config{}, err
		}
	}
	return c, c.Validate()
}

// RecipeHeads are the heads a family's recipe trains: BertForPreTraining's and
// AlbertForPreTraining's (pooler, masked LM and the NSP or SOP head, which share a shape),
// RobertaForMaskedLM's masked LM alone (no pooler: transformers builds it without one), and
// ElectraForPreTraining's discriminator head.
func RecipeHeads(fam bert.Family) bert.Heads {
	switch {
	case fam.Is(bert.FamilyRoBERTa), fam.Is(bert.FamilyDistilBERT), fam.Is(bert.FamilyDeBERTaV2):
		return bert.Heads{MLM: true}
	case fam.Is(bert.FamilyELECTRA):
		return bert.Heads{RTD: true}
	}
	return bert.AllHeads
}

// NewRecipePretrainer is NewPretrainer for a family's recipe: for ELECTRA, m is the
// discriminator and a new generator sharing its embeddings (NewGenerator, from seed) trains
// with it.
func NewRecipePretrainer(fam bert.Family, m *bert.Model, tok *tokenizer.Tokenizer, data *PretrainData, c PretrainConfig, seed uint64) (*Pretrainer, error) {
	p, err := NewPretrainer(m, tok, data, c)
	if err != nil || !fam.Is(bert.FamilyELECTRA) {
		return p, err
	}
	gen, err := NewGenerator(m, seed^0x67656e)
	if err != nil {
		return nil, err
	}
	return p, p.SetGenerator(gen, ElectraLambda)
}

// ResumeRecipe is ResumePretrainer for a family's recipe: ResumeElectra for ELECTRA, or for a
// checkpoint holding a generator whatever fam says.
func ResumeRecipe(fam bert.Family, dir string, data *PretrainData, c PretrainConfig) (*Pretrainer, error) {
	if _, err := os.Stat(filepath.Join(dir, GeneratorFolder, hf.ConfigFile)); err == nil || fam.Is(bert.FamilyELECTRA) {
		return ResumeElectra(dir, data, c, ElectraLambda)
	}
	return ResumePretrainer(dir, data, c)
}

// StartFamilyModel is StartModel for the recipe of family fam: a random model of the preset
// (FamilyConfig, RecipeHeads) for the vocabulary in vocab, or the model folder dir, which must be
// of that family. A BERT folder gets the heads it lacks at random; a folder of another family
// must have the recipe's heads already.
func StartFamilyModel(fam bert.Family, dir, preset, vocab, posType string, seed uint64) (*bert.Model, *tokenizer.Tokenizer, []string, error) {
	if fam.Is(bert.FamilyBERT) {
		return StartModel(dir, preset, vocab, posType, seed)
	}
	var tok *tokenizer.Tokenizer
	var err error
	if vocab != "" {
		if tok, err = tokenizer.LoadDir(vocab); err != nil {
			return nil, nil, nil, err
		}
	}
	if posType != "" && posType != bert.PositionAbsolute {
		return nil, nil, nil, fmt.Errorf("%s: position_embedding_type %q: the family has absolute positions only", fam, posType)
	}
	if preset != "" {
		if tok == nil {
			return nil, nil, nil, fmt.Errorf("preset %s: a random model needs a vocabulary", preset)
		}
		c, err := FamilyConfig(fam, preset, tok)
		if err != nil {
			return nil, nil, nil, err
		}
		m, err := bert.NewRandom(c, RecipeHeads(fam), seed)
		return m, tok, nil, err
	}
	if fam.Is(bert.FamilyELECTRA) {
		return nil, nil, nil, fmt.Errorf("model folder %s: an ELECTRA run starts from a preset (its generator and discriminator are made together)", dir)
	}
	if fam.Is(bert.FamilyDistilBERT) && preset != "" {
		return nil, nil, nil, fmt.Errorf("preset %s: a DistilBERT student is made from its teacher (StartDistilStudent)", preset)
	}
	f, err := hf.LoadFolder(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	m := f.Model
	if got := m.Config.FamilyOf(); got != fam {
		return nil, nil, nil, fmt.Errorf("model folder %s holds a %s model, not %s", dir, got, fam)
	}
	want := RecipeHeads(fam)
	if want.MLM && m.MLM == nil || want.NSP && (m.NSP == nil || m.Pooler == nil) || want.RTD && m.RTD == nil {
		return nil, nil, nil, fmt.Errorf("model folder %s: the %s recipe needs the heads %v, the folder has %v", dir, fam, headList(want), m.HeadNames())
	}
	if tok == nil {
		if tok = f.Tokenizer; tok == nil {
			return nil, nil, nil, fmt.Errorf("model folder %s has no vocab.txt: pass --vocab DIR", dir)
		}
	}
	if tok.Vocab().Len() != m.Config.VocabSize {
		return nil, nil, nil, fmt.Errorf("vocabulary of %d tokens for a model of vocab_size %d", tok.Vocab().Len(), m.Config.VocabSize)
	}
	return m, tok, nil, nil
}

// headList names the heads of h as Model.HeadNames does.
func headList(h bert.Heads) []string {
	var s []string
	for _, x := range []struct {
		on   bool
		name string
	}{{h.Pooler, "pooler"}, {h.MLM, "mlm"}, {h.NSP, "nsp"}, {h.RTD, "rtd"}} {
		if x.on {
			s = append(s, x.name)
		}
	}
	return s
}
