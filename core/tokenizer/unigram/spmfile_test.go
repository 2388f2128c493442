package unigram

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// protoFromJSON writes the .model that matches a tokenizer.json variant of
// testdata: its pieces and scores (as float32, like a .model stores them),
// piece types, and the committed charsmap.
func protoFromJSON(t *testing.T, name string, charsmap bool) *ModelProto {
	t.Helper()
	var f struct {
		Model struct {
			UnkID        int      `json:"unk_id"`
			Vocab        [][2]any `json:"vocab"`
			ByteFallback bool     `json:"byte_fallback"`
		} `json:"model"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	m := &ModelProto{ModelType: 1, ByteFallback: f.Model.ByteFallback, Normalizer: NormalizerSpec{Name: "nmt_nfkc", AddDummyPrefix: true, RemoveExtraWhitespaces: true, EscapeWhitespaces: true}}
	for i, v := range f.Model.Vocab {
		p := Piece{Piece: v[0].(string), Score: float32(v[1].(float64)), Type: Normal}
		switch {
		case i == f.Model.UnkID:
			p.Type = Unknown
		case strings.HasPrefix(p.Piece, "[") || strings.HasPrefix(p.Piece, "<") && len(p.Piece) > 1 && !strings.HasPrefix(p.Piece, "<0x"):
			p.Type = Control
		case strings.HasPrefix(p.Piece, "<0x"):
			p.Type = Byte
		}
		m.Pieces = append(m.Pieces, p)
	}
	if charsmap {
		if m.Normalizer.PrecompiledCharsmap, err = os.ReadFile(filepath.Join("testdata", "nmt_nfkc.bin")); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestModelProtoRoundTrip(t *testing.T) {
	for _, name := range []string{"albert", "albert_accents", "deberta", "bytes", "never"} {
		m := protoFromJSON(t, name, true)
		got, err := ParseModelProto(m.Marshal())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s: round trip differs", name)
		}
	}
}

// TestModelFileParity builds the tokenizers of the ALBERT and DeBERTa
// variants from a .model (written from the same pieces, scores rounded to
// float32 as a .model stores them) and checks that they encode every case of
// testdata/cases.jsonl as the tokenizer.json does.
func TestModelFileParity(t *testing.T) {
	tests := []struct {
		variant string
		opts    ModelOptions
	}{
		{"albert", ModelOptions{Family: FamilyALBERT, DoLowerCase: true, KeepAccents: true}},
		{"albert_accents", ModelOptions{Family: FamilyALBERT, DoLowerCase: true}},
		{"deberta", ModelOptions{Family: FamilyDeBERTaV2, AppendMask: true}},
	}
	cases := readCases(t, filepath.Join("testdata", "cases.jsonl"))
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			fromModel, err := FromModelFile(protoFromJSON(t, tt.variant, true).Marshal(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			fromJSON := loadVariant(t, tt.variant)
			n := 0
			for i, c := range cases {
				if c.V != tt.variant {
					continue
				}
				n++
				var want, got any
				if c.B != nil {
					want, _ = fromJSON.EncodePair(c.A, *c.B, c.MaxLen)
					got, err = fromModel.EncodePair(c.A, *c.B, c.MaxLen)
				} else {
					want, _ = fromJSON.Encode(c.A, c.MaxLen)
					got, err = fromModel.Encode(c.A, c.MaxLen)
				}
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("case %d %q: .model gives %+v (%v), tokenizer.json %+v", i, c.A, got, err, want)
				}
			}
			if n == 0 {
				t.Fatal("no cases")
			}
		})
	}
}

func TestParseModelProtoErrors(t *testing.T) {
	good := &ModelProto{ModelType: 1, Pieces: []Piece{{Piece: "<unk>", Type: Unknown}, {Piece: "▁a", Score: -1, Type: Normal}}}
	bpe := *good
	bpe.ModelType = 2
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"bpe", bpe.Marshal(), "only UNIGRAM"},
		{"empty", nil, "no pieces"},
		{"truncated", good.Marshal()[:5], "truncated"},
		{"bad wire type", []byte{0x0b}, "wire type"},
		{"field zero", []byte{0x00}, "bad field number"},
		{"huge length", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, "truncated"},
		{"bad type", (&ModelProto{ModelType: 1, Pieces: []Piece{{Piece: "a", Type: 9}}}).Marshal(), "unknown type"},
		{"not utf-8", (&ModelProto{ModelType: 1, Pieces: []Piece{{Piece: "\xff", Type: Normal}}}).Marshal(), "not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseModelProto(tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := ParseModelProto(good.Marshal()); err != nil {
		t.Errorf("good model: %v", err)
	}
}
