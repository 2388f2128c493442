package train

import (
	"fmt"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// DistilBERTWeights are DistilBERT's loss weights (Sanh et al. 2019, distiller.py's defaults):
// 5 for the soft targets at temperature 2, 2 for the masked LM, 1 for the cosine term; no
// attention term.
var DistilBERTWeights = bert.DistilWeights{Hard: 2, Soft: 5, Cosine: 1, Temperature: 2}

// DistilStudentLayers are the teacher layers a DistilBERT student of a teacher of L layers
// starts from: every other one, 0, 2, 4, … (⌈L/2⌉ layers; DistilBERT took 6 of BERT-Base's 12).
func DistilStudentLayers(L int) []int {
	var ls []int
	for l := 0; l < L; l += 2 {
		ls = append(ls, l)
	}
	return ls
}

// NewDistilStudent makes DistilBERT's student of a BERT teacher with an MLM head: a
// DistilBertForMaskedLM of the teacher's width with its layers copied from
// DistilStudentLayers, its word and position embeddings, embedding LayerNorm and MLM head
// copied too. DistilBERT has no token types: the teacher's type-0 embedding is added into every
// position embedding, so that on single-segment input (type 0 everywhere) the student's
// embeddings equal the teacher's exactly.
func NewDistilStudent(teacher *bert.Model) (*bert.Model, error) {
	tc := teacher.Config
	switch {
	case teacher.MLM == nil:
		return nil, fmt.Errorf("distilbert: the teacher has no masked-LM head")
	case !tc.FamilyOf().Is(bert.FamilyBERT):
		return nil, fmt.Errorf("distilbert: the teacher is a %s model; the student copies a BERT's layers", tc.FamilyOf())
	case tc.Relative() || tc.NoPositionEmbeddings:
		return nil, fmt.Errorf("distilbert: the teacher has %s positions; a DistilBERT student has absolute ones", tc.Positions())
	}
	layers := DistilStudentLayers(tc.NumHiddenLayers)
	c := tc
	c.Family, c.TypeVocabSize, c.NumHiddenLayers = bert.FamilyDistilBERT, 0, len(layers)
	c.LayerNormEps, c.PositionEmbeddingType, c.Extra = 1e-12, bert.PositionAbsolute, nil
	if err := c.SetExtra("tokenizer_class", "BertTokenizer"); err != nil {
		return nil, err
	}
	s, err := bert.NewModel(c, bert.Heads{MLM: true})
	if err != nil {
		return nil, err
	}
	copy(s.WordEmb.Data, teacher.WordEmb.Data)
	copy(s.PosEmb.Data, teacher.PosEmb.Data)
	if teacher.TypeEmb != nil {
		t0 := teacher.TypeEmb.Row(0)
		for p := range c.MaxPositionEmbeddings {
			row := s.PosEmb.Row(p)
			for j, v := range t0 {
				row[j] += v
			}
		}
	}
	copy(s.EmbLN.W.Data, teacher.EmbLN.W.Data)
	copy(s.EmbLN.B.Data, teacher.EmbLN.B.Data)
	tp, sp := teacher.Params(), map[string]bert.Param{}
	for _, p := range s.Params() {
		sp[p.Name] = p
	}
	for i, tl := range layers {
		from, to := fmt.Sprintf("bert.encoder.layer.%d.", tl), fmt.Sprintf("bert.encoder.layer.%d.", i)
		for _, p := range tp {
			if rest, ok := strings.CutPrefix(p.Name, from); ok {
				copy(sp[to+rest].T.Data, p.T.Data)
			}
		}
	}
	for _, p := range tp {
		if q, ok := sp[p.Name]; ok && strings.HasPrefix(p.Name, "cls.") {
			copy(q.T.Data, p.T.Data)
		}
	}
	return s, nil
}

// StartDistilStudent loads the teacher folder and makes its DistilBERT student
// (NewDistilStudent), with the teacher's tokenizer or vocab's when vocab is not "".
func StartDistilStudent(teacherDir, vocab string) (*bert.Model, *tokenizer.Tokenizer, []string, error) {
	f, err := hf.LoadFolder(teacherDir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("teacher: %w", err)
	}
	tok := f.Tokenizer
	if vocab != "" {
		if tok, err = tokenizer.LoadDir(vocab); err != nil {
			return nil, nil, nil, err
		}
	}
	if tok == nil {
		return nil, nil, nil, fmt.Errorf("teacher folder %s has no vocab.txt: pass --vocab DIR", teacherDir)
	}
	s, err := NewDistilStudent(f.Model)
	if err != nil {
		return nil, nil, nil, err
	}
	note := fmt.Sprintf("DistilBERT student of %s: %d layers from its layers %v, its embeddings (type 0 folded into the positions) and MLM head",
		teacherDir, s.Config.NumHiddenLayers, DistilStudentLayers(f.Model.Config.NumHiddenLayers))
	return s, tok, []string{note}, nil
}
