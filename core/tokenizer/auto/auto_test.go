package auto

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bertlab/bertlab/core/tokenizer"
)

func read(t testing.TB, path ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readUnigram(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "unigram", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(file, ".json") {
		// The fixture's tokenizer.json files hold a placeholder for the charsmap.
		cm, err := os.ReadFile(filepath.Join("..", "unigram", "testdata", "nmt_nfkc.bin"))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte(`"@nmt_nfkc.bin"`), []byte(`"`+base64.StdEncoding.EncodeToString(cm)+`"`))
	}
	return b
}

// TestLoadFS loads a folder of every kind and checks the kind and the
// special tokens that the files (and the settings beside them) give.
func TestLoadFS(t *testing.T) {
	bert := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "<mask>", "the", "cat"}
	smallVocab := []byte(strings.Join(bert, "\n") + "\n")
	wordPieceJSON := []byte(`{"model": {"type": "WordPiece", "vocab": {}}}`)
	bertSpecials := tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "[MASK]", Pad: "[PAD]", Unk: "[UNK]"}
	roberta := tokenizer.Specials{CLS: "<s>", SEP: "</s>", Mask: "<mask>", Pad: "<pad>", Unk: "<unk>"}
	albert := tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "[MASK]", Pad: "<pad>", Unk: "<unk>"}
	for _, c := range []struct {
		name     string
		fsys     fstest.MapFS
		kind     string
		specials tokenizer.Specials
		err      string
	}{
		{"vocab.txt", fstest.MapFS{"vocab.txt": {Data: read(t, "bert-base-uncased", "vocab.txt")}}, tokenizer.KindWordPiece, bertSpecials, ""},
		{"vocab.txt and tokenizer.json", fstest.MapFS{"vocab.txt": {Data: read(t, "bert-base-uncased", "vocab.txt")}, "tokenizer.json": {Data: wordPieceJSON}}, tokenizer.KindWordPiece, bertSpecials, ""},
		{"tokenizer.json of WordPiece alone", fstest.MapFS{"tokenizer.json": {Data: wordPieceJSON}}, "", tokenizer.Specials{}, "needs vocab.txt"},
		{"special_tokens_map.json", fstest.MapFS{"vocab.txt": {Data: smallVocab}, "special_tokens_map.json": {Data: []byte(`{"mask_token": {"content": "<mask>", "lstrip": true}}`)}}, tokenizer.KindWordPiece,
			tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "<mask>", Pad: "[PAD]", Unk: "[UNK]"}, ""},
		{"special_tokens_map.json over tokenizer_config.json", fstest.MapFS{"vocab.txt": {Data: smallVocab}, "tokenizer_config.json": {Data: []byte(`{"mask_token": "[MASK]", "do_lower_case": false}`)},
			"special_tokens_map.json": {Data: []byte(`{"mask_token": "<mask>", "cls_token": null}`)}}, tokenizer.KindWordPiece,
			tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "<mask>", Pad: "[PAD]", Unk: "[UNK]"}, ""},
		{"no special_tokens_map.json", fstest.MapFS{"vocab.txt": {Data: smallVocab}}, "", tokenizer.Specials{}, `mask_token "[MASK]" is not in the vocab`},
		{"bad special_tokens_map.json", fstest.MapFS{"vocab.txt": {Data: smallVocab}, "special_tokens_map.json": {Data: []byte(`{"mask_token": 3}`)}}, "", tokenizer.Specials{}, "m/special_tokens_map.json: mask_token"},
		{"vocab.json and merges.txt", fstest.MapFS{"vocab.json": {Data: read(t, "bpe", "vocab.json")}, "merges.txt": {Data: read(t, "bpe", "merges.txt")}}, tokenizer.KindBPE, roberta, ""},
		{"tokenizer.json of BPE", fstest.MapFS{"tokenizer.json": {Data: read(t, "bpe", "roberta.tokenizer.json")}}, tokenizer.KindBPE, roberta, ""},
		{"tokenizer.json of Unigram", fstest.MapFS{"tokenizer.json": {Data: readUnigram(t, "albert.json")}}, tokenizer.KindUnigram, albert, ""},
		{"spiece.model", fstest.MapFS{"spiece.model": {Data: readUnigram(t, "spiece.model")}}, tokenizer.KindUnigram, albert, ""},
		{"spm.model", fstest.MapFS{"spm.model": {Data: readUnigram(t, "spiece.model")}}, tokenizer.KindUnigram,
			// DeBERTa's recipe names [PAD] and [UNK], which this model lacks;
			// its [MASK] piece is there.
			tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "[MASK]", Pad: "<pad>", Unk: "<unk>"}, ""},
		{"tokenizer.json of another model", fstest.MapFS{"tokenizer.json": {Data: []byte(`{"model": {"type": "WordLevel"}}`)}}, "", tokenizer.Specials{}, `model.type "WordLevel" is not supported`},
		{"broken tokenizer.json", fstest.MapFS{"tokenizer.json": {Data: []byte(`{"model": `)}}, "", tokenizer.Specials{}, "tokenizer m/tokenizer.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc, err := LoadFS(c.fsys, "m")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if enc.Kind() != c.kind {
				t.Errorf("kind %q, want %q", enc.Kind(), c.kind)
			}
			if got := tokenizer.SpecialsOf(enc); got != c.specials {
				t.Errorf("specials %+v, want %+v", got, c.specials)
			}
			e, err := enc.Encode("the cat "+c.specials.Mask, 0)
			if err != nil {
				t.Fatal(err)
			}
			if e.IDs[0] != enc.CLSID() || e.IDs[len(e.IDs)-2] != enc.MaskID() {
				t.Errorf("ids %v tokens %q", e.IDs, e.Tokens)
			}
		})
	}
}

// TestLoadFSNone: a folder without tokenizer files is ErrNone, named.
func TestLoadFSNone(t *testing.T) {
	_, err := LoadFS(fstest.MapFS{"config.json": {Data: []byte(`{}`)}}, "models/x")
	if !errors.Is(err, ErrNone) || !strings.Contains(err.Error(), "models/x") {
		t.Errorf("error %v", err)
	}
}
