package unigram

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCharsmapTransform(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "nmt_nfkc.bin"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := ParseCharsmap(b)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"\ufb01", "fi", true},
		{"𝔾", "G", true},
		{"\u0627\u0653", "آ", true},
		{"Ａ", "A", true},
		{"①", "1", true},
		{"a", "", false},
		{" ", "", false},
		{"", "", false},
		{"\x00", "", false},
	}
	for _, tt := range tests {
		got, ok := cm.Transform(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Transform(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	for _, bad := range [][]byte{nil, {1, 0, 0}, {8, 0, 0, 0, 1}, {3, 0, 0, 0, 1, 2, 3}} {
		if _, err := ParseCharsmap(bad); err == nil {
			t.Errorf("ParseCharsmap(%v): no error", bad)
		}
	}
}

func TestSegment(t *testing.T) {
	pieces := []string{"<unk>", "▁", "a", "b", "ab", "▁ab", "c", "<0x41>"}
	scores := []float64{0, -2, -3, -3, -4, -4.5, -5, -1}
	m, err := NewModel(pieces, scores, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []piece
	}{
		{"", nil},
		{"ab", []piece{{4, 0, 2}}},
		{"▁ab", []piece{{5, 0, 5}}},
		{"abc", []piece{{4, 0, 2}, {6, 2, 3}}},
		{"xyz", []piece{{0, 0, 3}}},                        // unknown run fused
		{"aé日b", []piece{{2, 0, 1}, {0, 1, 6}, {3, 6, 7}}}, // multi-byte unknowns
	}
	for _, tt := range tests {
		got, err := m.Segment(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Segment(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	// Byte fallback: only when every byte has its piece.
	var bp []string
	var bs []float64
	for b := 0; b < 256; b++ {
		bp = append(bp, "<0x"+strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15]))+">")
		bs = append(bs, 0)
	}
	mb, err := NewModel(append([]string{"<unk>", "a"}, bp...), append([]float64{0, -1}, bs...), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mb.Segment("aé")
	want := []piece{{1, 0, 1}, {2 + 0xc3, 1, 3}, {2 + 0xa9, 1, 3}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("byte fallback: %v, %v; want %v", got, err, want)
	}
	noUnk, err := NewModel([]string{"a"}, []float64{-1}, -1, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noUnk.Segment("ab"); err == nil {
		t.Error("no unk_id: no error for an unknown character")
	}
	for _, bad := range []struct {
		p   []string
		s   []float64
		unk int
	}{{nil, nil, -1}, {[]string{"a"}, []float64{1, 2}, -1}, {[]string{"a"}, []float64{1}, 3}} {
		if _, err := NewModel(bad.p, bad.s, bad.unk, false); err == nil {
			t.Errorf("NewModel(%v, %v, %d): no error", bad.p, bad.s, bad.unk)
		}
	}
}

func TestMetaspaceAndDecode(t *testing.T) {
	tk := loadVariant(t, "albert")
	tests := []struct {
		in     string
		tokens []string
		decode string
	}{
		{"Hello world", []string{"[CLS]", "▁he", "ll", "o", "▁world", "[SEP]"}, "hello world"},
		{"the [MASK] sat", []string{"[CLS]", "▁the", "[MASK]", "▁sat", "[SEP]"}, "the sat"},
		{"the[MASK]", []string{"[CLS]", "▁the", "[MASK]", "[SEP]"}, "the"},
		{"``a''", []string{"[CLS]", "▁\"a", "\"", "[SEP]"}, "\"a\""},
	}
	for _, tt := range tests {
		e, err := tk.Encode(tt.in, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e.Tokens, tt.tokens) {
			t.Errorf("Encode(%q) tokens %q, want %q", tt.in, e.Tokens, tt.tokens)
		}
		if got := tk.Decode(e.IDs, true); got != tt.decode {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", tt.in, got, tt.decode)
		}
	}
	if tk.MaskID() != 4 {
		t.Errorf("MaskID %d, want 4", tk.MaskID())
	}
	if _, err := tk.Encode("a", 1); err == nil {
		t.Error("maxLen 1: no error")
	}
	if _, err := tk.EncodePair("a", "b", 2); err == nil {
		t.Error("pair maxLen 2: no error")
	}
}

func TestFromJSONErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"not json", `{`, "tokenizer.json"},
		{"bpe", `{"model":{"type":"BPE"}}`, "want Unigram"},
		{"empty vocab", `{"model":{"type":"Unigram","vocab":[]}}`, "empty vocabulary"},
		{"bad unk", `{"model":{"type":"Unigram","unk_id":5,"vocab":[["a",-1]]}}`, "unk_id"},
		{"bad normalizer", `{"normalizer":{"type":"BertNormalizer"},"model":{"type":"Unigram","vocab":[["a",-1]]}}`, `normalizer type "BertNormalizer"`},
		{"bad regex", `{"normalizer":{"type":"Replace","pattern":{"Regex":"("},"content":""},"model":{"type":"Unigram","vocab":[["a",-1]]}}`, "Replace"},
		{"bad pre-tokenizer", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"Unigram","vocab":[["a",-1]]}}`, `pre_tokenizer type "ByteLevel"`},
		{"bad scheme", `{"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"sometimes"},"model":{"type":"Unigram","vocab":[["a",-1]]}}`, "prepend_scheme"},
		{"bad post", `{"post_processor":{"type":"RobertaProcessing"},"model":{"type":"Unigram","vocab":[["a",-1]]}}`, "RobertaProcessing"},
		{"missing special", `{"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}}],"pair":[],"special_tokens":{}},"model":{"type":"Unigram","vocab":[["a",-1]]}}`, "not in special_tokens"},
		{"bad charsmap", `{"normalizer":{"type":"Precompiled","precompiled_charsmap":"AAAA"},"model":{"type":"Unigram","vocab":[["a",-1]]}}`, "Precompiled"},
		{"empty added", `{"added_tokens":[{"id":0,"content":""}],"model":{"type":"Unigram","vocab":[["a",-1]]}}`, "empty content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromJSON([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	tk := loadVariant(b, "albert")
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; naïve café, 日本語 😀. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := tk.Encode(text, 0); err != nil {
			b.Fatal(err)
		}
	}
}
