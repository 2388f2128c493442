package train

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// Ids of the special tokens in testVocab's vocabularies.
const (
	tPad, tUnk, tCLS, tSEP, tMask = 0, 1, 2, 3, 4
)

// testTokenizer returns a tokenizer whose vocabulary is the five special tokens, then words.
func testTokenizer(t testing.TB, words []string) *tokenizer.Tokenizer {
	t.Helper()
	v, err := tokenizer.NewVocab(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, words...))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New(v, tokenizer.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// numberedTokenizer has n tokens: the specials, then w5, w6, ...
func numberedTokenizer(t testing.TB, n int) *tokenizer.Tokenizer {
	words := make([]string, 0, n-5)
	for i := 5; i < n; i++ {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	return testTokenizer(t, words)
}

// toyCorpus is a small repetitive English corpus, documents of sentences, and its tokenizer.
func toyCorpus(t testing.TB) (*tokenizer.Tokenizer, []TokenDocument) {
	t.Helper()
	texts := [][]string{
		{"the cat sat on the mat .", "the dog sat on the log .", "the cat saw the dog ."},
		{"a bird sang in the tree .", "a bird flew over the tree .", "the bird sang again ."},
		{"the sun is hot .", "the moon is cold .", "the sun and the moon are far ."},
		{"we eat bread and jam .", "we drink tea and milk .", "we eat bread with tea ."},
	}
	seen := map[string]bool{}
	var words []string
	for _, d := range texts {
		for _, s := range d {
			for _, w := range strings.Fields(s) {
				if !seen[w] {
					seen[w] = true
					words = append(words, w)
				}
			}
		}
	}
	tok := testTokenizer(t, words)
	var docs [][]string
	for range 6 { // repetition makes the corpus learnable in a few dozen steps
		docs = append(docs, texts...)
	}
	return tok, TokenizeDocuments(tok, docs)
}

// testModel is a small BertForPreTraining for a vocabulary of v tokens.
func testModel(t testing.TB, v int, seed uint64) *bert.Model {
	t.Helper()
	c := bert.DefaultConfig()
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = v, 32, 2, 2, 64
	c.MaxPositionEmbeddings = 64
	m, err := bert.NewRandom(c, bert.AllHeads, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
