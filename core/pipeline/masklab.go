package pipeline

import (
	"fmt"
	"math/rand/v2"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/tinydata"
)

// What masking did to a position (MaskLabResult.Kinds).
const (
	KindSpecial = "special" // [CLS], [SEP]: never chosen
	KindKept    = ""        // not chosen: the model predicts nothing here
	KindMask    = "mask"    // chosen, replaced by [MASK] (80%)
	KindRandom  = "random"  // chosen, replaced by a random token (10%)
	KindSame    = "same"    // chosen, left as it was (10%); the model must still predict it
)

// MaskLabResult is one text masked the way BERT's pre-training data is: what the masking lab shows.
type MaskLabResult struct {
	Tokens []string `json:"tokens"` // the text's tokens, [CLS] and [SEP] included
	Shown  []string `json:"shown"`  // the tokens the model reads after masking
	Kinds  []string `json:"kinds"`  // one of the Kind constants per position
	// Chosen are the predicted positions, ascending.
	Chosen       []int  `json:"chosen"`
	Maskable     int    `json:"maskable"`       // positions that may be chosen
	NumToPredict int    `json:"num_to_predict"` // round(15% of Maskable), capped
	Seed         uint64 `json:"seed"`
	WholeWord    bool   `json:"whole_word"`
	Truncated    bool   `json:"truncated"`
}

// MaskLabRNG is the generator the masking lab draws from for seed.
func MaskLabRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6265_7274_6c61_62)) }

// MaskLab encodes text (truncated to maxLen tokens) and masks it with core/train's Masker, as
// create_pretraining_data.py does: 15% of the maskable tokens chosen (whole words together with
// wholeWord), of those 80% [MASK], 10% a random token, 10% unchanged. The draws come from
// MaskLabRNG(seed). A chosen position whose random token happens to be the original one counts
// as unchanged.
func MaskLab(tok *tokenizer.Tokenizer, text string, maxLen int, seed uint64, wholeWord bool) (*MaskLabResult, error) {
	enc, err := tok.Encode(text, maxLen)
	if err != nil {
		return nil, fmt.Errorf("masking: %w", err)
	}
	cfg := train.DefaultMasking(max(enc.Len(), 1))
	cfg.WholeWord = wholeWord
	m, err := train.NewMasker(tok, cfg)
	if err != nil {
		return nil, err
	}
	input, labels := m.Mask(enc.IDs, MaskLabRNG(seed))
	special := map[int]bool{tok.CLSID(): true, tok.SEPID(): true, tok.PadID(): true, tok.MaskID(): true}
	r := &MaskLabResult{Tokens: enc.Tokens, Shown: make([]string, len(input)), Kinds: make([]string, len(input)),
		Seed: seed, WholeWord: wholeWord, Truncated: enc.Truncated}
	v := tok.Vocab()
	for i, id := range input {
		r.Shown[i] = v.Token(id)
		switch {
		case special[enc.IDs[i]] && labels[i] == bert.IgnoreIndex:
			r.Kinds[i] = KindSpecial
		case labels[i] == bert.IgnoreIndex:
			r.Kinds[i] = KindKept
		case id == tok.MaskID():
			r.Kinds[i] = KindMask
		case id == labels[i]:
			r.Kinds[i] = KindSame
		default:
			r.Kinds[i] = KindRandom
		}
		if labels[i] != bert.IgnoreIndex {
			r.Chosen = append(r.Chosen, i)
		}
		if !special[enc.IDs[i]] {
			r.Maskable++
		}
	}
	r.NumToPredict = m.NumToPredict(r.Maskable)
	return r, nil
}

// SampleSentences are the sentences of the browser's pre-training sample (tinydata
// web/pretrain.txt), in order: the masking lab's examples.
func SampleSentences() ([]string, error) {
	docs, err := tinydata.LoadDocuments(tinydata.WebPretrain)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.Sentences...)
	}
	return out, nil
}

// NSPPair is one next-sentence-prediction instance: [CLS] A [SEP] B [SEP].
type NSPPair struct {
	Tokens   []string `json:"tokens"`
	Segments []int    `json:"segments"` // token_type_ids: 0 for A, 1 for B
	IsNext   bool     `json:"is_next"`  // B follows A in the document (label 0), else B is random (label 1)
	Doc      int      `json:"doc"`      // the document A comes from
}

// NSPMaxSeq is the sequence length of the pair builder's instances: short, to fit on screen.
const NSPMaxSeq = 48

// NSPPairs builds up to n next-sentence instances from the browser's sample corpus with
// core/train.CreateInstancesFromDocument (max_seq_length NSPMaxSeq, short_seq_prob 0.1), starting
// at document seed mod the number of documents and drawing from rand.NewPCG(seed, 1).
func NSPPairs(tok *tokenizer.Tokenizer, seed uint64, n int) ([]NSPPair, error) {
	raw, err := tinydata.LoadDocuments(tinydata.WebPretrain)
	if err != nil {
		return nil, err
	}
	sents := make([][]string, len(raw))
	for i, d := range raw {
		sents[i] = d.Sentences
	}
	docs := train.TokenizeDocuments(tok, sents)
	if len(docs) < 2 {
		return nil, fmt.Errorf("nsp: the sample corpus has %d documents, need 2", len(docs))
	}
	cfg := train.InstanceConfig{MaxSeqLength: NSPMaxSeq, ShortSeqProb: 0.1, Task: train.NextSentence}
	rng := rand.New(rand.NewPCG(seed, 1))
	v := tok.Vocab()
	var out []NSPPair
	for k := 0; k < len(docs) && len(out) < n; k++ {
		d := int((seed + uint64(k)) % uint64(len(docs)))
		for _, in := range train.CreateInstancesFromDocument(docs, d, cfg, tok.CLSID(), tok.SEPID(), rng) {
			if len(out) == n {
				break
			}
			p := NSPPair{Segments: in.TokenTypeIDs, IsNext: in.NextSentenceLabel == 0, Doc: d}
			for _, id := range in.InputIDs {
				p.Tokens = append(p.Tokens, v.Token(id))
			}
			out = append(out, p)
		}
	}
	return out, nil
}
