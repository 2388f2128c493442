package unigram

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestRealModelFile reads testdata/spiece.model, written by the sentencepiece
// library itself (spm_train 0.1.97; see testdata/README.md), and checks its
// pieces, scores and types against spm_export_vocab's listing
// (spiece.vocab).
func TestRealModelFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "spiece.model"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseModelProto(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.ModelType != 1 || m.ByteFallback || m.Normalizer.Name != "nmt_nfkc" || !m.Normalizer.AddDummyPrefix ||
		!m.Normalizer.RemoveExtraWhitespaces || !m.Normalizer.EscapeWhitespaces || len(m.Normalizer.PrecompiledCharsmap) == 0 {
		t.Errorf("model %d, byte fallback %v, normalizer %q %v %v %v, charsmap %d bytes", m.ModelType, m.ByteFallback, m.Normalizer.Name,
			m.Normalizer.AddDummyPrefix, m.Normalizer.RemoveExtraWhitespaces, m.Normalizer.EscapeWhitespaces, len(m.Normalizer.PrecompiledCharsmap))
	}
	vb, err := os.ReadFile(filepath.Join("testdata", "spiece.vocab"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(vb), "\n"), "\n")
	if len(lines) != len(m.Pieces) {
		t.Fatalf("%d pieces, spiece.vocab has %d", len(m.Pieces), len(lines))
	}
	for i, l := range lines {
		piece, score, _ := strings.Cut(l, "\t")
		want, err := strconv.ParseFloat(score, 32)
		if err != nil {
			t.Fatal(err)
		}
		p := m.Pieces[i]
		// spm_export_vocab prints scores with 6 significant digits.
		if p.Piece != piece || strconv.FormatFloat(float64(p.Score), 'g', 6, 32) != strconv.FormatFloat(want, 'g', 6, 32) {
			t.Errorf("piece %d: %q %v, want %q %v", i, p.Piece, p.Score, piece, want)
		}
	}
	wantTypes := map[int]PieceType{0: Control, 1: Unknown, 2: Control, 3: Control, 4: Control, 5: Normal}
	for i, ty := range wantTypes {
		if m.Pieces[i].Type != ty {
			t.Errorf("piece %d %q: type %d, want %d", i, m.Pieces[i].Piece, m.Pieces[i].Type, ty)
		}
	}
}

// TestSentencePieceLibrary compares FromModelFile (the DeBERTa-v2 recipe,
// which adds no steps of its own besides Strip) with spm_encode's ids for the
// texts of testdata/sentencepiece.jsonl (the inputs of cases.jsonl and 200
// held-out sentences). sentencepiece does not match control pieces or special
// tokens written in the text, where HuggingFace's pipeline (and this
// package) does, so texts holding one are skipped; of the others all agree
// but two, where the two libraries differ by design: a tie between "--" "-"
// and "-" "--", and a charsmap rule applied per grapheme.
func TestSentencePieceLibrary(t *testing.T) {
	knownDiff := map[string]bool{"repeated!!!??? ...... ---": true, "v\u200dMWि▻①\u200b": true}
	b, err := os.ReadFile(filepath.Join("testdata", "spiece.model"))
	if err != nil {
		t.Fatal(err)
	}
	tk, err := FromModelFile(b, ModelOptions{Family: FamilyDeBERTaV2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "sentencepiece.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	total, same := 0, 0
	for sc.Scan() {
		var c struct {
			Text string `json:"text"`
			IDs  []int  `json:"ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(c.Text, "[<") {
			continue
		}
		ts, err := tk.Tokenize(c.Text)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int{}
		for _, x := range ts {
			ids = append(ids, x.ID)
		}
		total++
		if reflect.DeepEqual(ids, c.IDs) {
			same++
		} else if !knownDiff[c.Text] {
			t.Errorf("%q: got %v, sentencepiece %v", c.Text, ids, c.IDs)
		}
	}
	t.Logf("%d of %d texts without special tokens encode as sentencepiece does", same, total)
	if same != total-len(knownDiff) {
		t.Errorf("%d of %d texts encode as sentencepiece does, want %d", same, total, total-len(knownDiff))
	}
}

// albertJSON is the tokenizer.json that transformers' AlbertConverter writes
// for a .model (do_lower_case, keep_accents false), for scripts/spmref's
// encode.js: `SPM_WRITE_ALBERT=/tmp/spiece.json go test -run WriteAlbert`.
func albertJSON(m *ModelProto) ([]byte, error) {
	type obj = map[string]any
	vocab := make([][2]any, len(m.Pieces))
	unk := 0
	for i, p := range m.Pieces {
		vocab[i] = [2]any{p.Piece, float64(p.Score)}
		if p.Type == Unknown {
			unk = i
		}
	}
	added := []any{}
	for i, p := range m.Pieces[:5] {
		added = append(added, obj{"id": i, "content": p.Piece, "single_word": false, "lstrip": p.Piece == "[MASK]", "rstrip": false, "normalized": false, "special": true})
	}
	sp := func(id string, ty int) obj { return obj{"SpecialToken": obj{"id": id, "type_id": ty}} }
	sq := func(id string, ty int) obj { return obj{"Sequence": obj{"id": id, "type_id": ty}} }
	meta := obj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}
	return json.Marshal(obj{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": added,
		"normalizer": obj{"type": "Sequence", "normalizers": []any{
			obj{"type": "Replace", "pattern": obj{"String": "``"}, "content": `"`},
			obj{"type": "Replace", "pattern": obj{"String": "''"}, "content": `"`},
			obj{"type": "NFKD"}, obj{"type": "StripAccents"}, obj{"type": "Lowercase"},
			obj{"type": "Precompiled", "precompiled_charsmap": m.Normalizer.PrecompiledCharsmap},
			obj{"type": "Replace", "pattern": obj{"Regex": " {2,}"}, "content": " "},
		}},
		"pre_tokenizer": meta, "decoder": meta,
		"post_processor": obj{"type": "TemplateProcessing",
			"single": []any{sp("[CLS]", 0), sq("A", 0), sp("[SEP]", 0)},
			"pair":   []any{sp("[CLS]", 0), sq("A", 0), sp("[SEP]", 0), sq("B", 1), sp("[SEP]", 1)},
			"special_tokens": obj{
				"[CLS]": obj{"id": "[CLS]", "ids": []int{2}, "tokens": []string{"[CLS]"}},
				"[SEP]": obj{"id": "[SEP]", "ids": []int{3}, "tokens": []string{"[SEP]"}},
			}},
		"model": obj{"type": "Unigram", "unk_id": unk, "vocab": vocab, "byte_fallback": m.ByteFallback},
	})
}

func TestWriteAlbert(t *testing.T) {
	path := os.Getenv("SPM_WRITE_ALBERT")
	if path == "" {
		t.Skip("SPM_WRITE_ALBERT not set")
	}
	b, err := os.ReadFile(filepath.Join("testdata", "spiece.model"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseModelProto(b)
	if err != nil {
		t.Fatal(err)
	}
	j, err := albertJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, j, 0o644); err != nil {
		t.Fatal(err)
	}
}
