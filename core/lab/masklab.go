package lab

import (
	"fmt"
	"math/rand/v2"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/tinydata"
)

// MaskLabRNG is the generator the masking lab draws from for seed.
func MaskLabRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6265_7274_6c61_62)) }

// MaskLab encodes text (truncated to maxLen tokens) and masks it with core/train's Masker, as
// create_pretraining_data.py does: 15% of the maskable tokens chosen (whole words together with
// wholeWord), of those 80% [MASK], 10% a random token, 10% unchanged. The draws come from
// MaskLabRNG(seed). A chosen position whose random token happens to be the original one counts
// as unchanged.
func MaskLab(tok *tokenizer.Tokenizer, text string, maxLen int, seed uint64, wholeWord bool) (*engine.MaskLabResult, error) {
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
	r := &engine.MaskLabResult{Tokens: enc.Tokens, Shown: make([]string, len(input)), Kinds: make([]string, len(input)),
		Seed: seed, WholeWord: wholeWord, Truncated: enc.Truncated}
	v := tok.Vocab()
	for i, id := range input {
		r.Shown[i] = v.Token(id)
		switch {
		case special[enc.IDs[i]] && labels[i] == bert.IgnoreIndex:
			r.Kinds[i] = engine.KindSpecial
		case labels[i] == bert.IgnoreIndex:
			r.Kinds[i] = engine.KindKept
		case id == tok.MaskID():
			r.Kinds[i] = engine.KindMask
		case id == labels[i]:
			r.Kinds[i] = engine.KindSame
		default:
			r.Kinds[i] = engine.KindRandom
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

// NSPMaxSeq is the sequence length of the pair builder's instances: short, to fit on screen.
const NSPMaxSeq = 48

// NSPPairs builds up to n next-sentence instances from the browser's sample corpus with
// core/train.CreateInstancesFromDocument (max_seq_length NSPMaxSeq, short_seq_prob 0.1), starting
// at document seed mod the number of documents and drawing from rand.NewPCG(seed, 1).
func NSPPairs(tok *tokenizer.Tokenizer, seed uint64, n int) ([]engine.NSPPair, error) {
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
	var out []engine.NSPPair
	for k := 0; k < len(docs) && len(out) < n; k++ {
		d := int((seed + uint64(k)) % uint64(len(docs)))
		for _, in := range train.CreateInstancesFromDocument(docs, d, cfg, tok.CLSID(), tok.SEPID(), rng) {
			if len(out) == n {
				break
			}
			p := engine.NSPPair{Segments: in.TokenTypeIDs, IsNext: in.NextSentenceLabel == 0, Doc: d}
			for _, id := range in.InputIDs {
				p.Tokens = append(p.Tokens, v.Token(id))
			}
			out = append(out, p)
		}
	}
	return out, nil
}
