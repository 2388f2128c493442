package unigram

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadFS(t *testing.T) {
	model, err := os.ReadFile(filepath.Join("testdata", "spiece.model"))
	if err != nil {
		t.Fatal(err)
	}
	albertJSON := loadVariantJSON(t, "albert")
	text := "The [MASK] sat on the Mat, naïvely."
	tests := []struct {
		name  string
		files fstest.MapFS
		want  *Tokenizer // encodes text as this one does
		err   string
	}{
		{"tokenizer.json", fstest.MapFS{"m/tokenizer.json": {Data: albertJSON}, "m/spiece.model": {Data: model}}, loadVariant(t, "albert"), ""},
		{"spiece.model", fstest.MapFS{"m/spiece.model": {Data: model}}, loadVariant(t, "spiece"), ""},
		{"spiece.model cased", fstest.MapFS{"m/spiece.model": {Data: model}, "m/tokenizer_config.json": {Data: []byte(`{"do_lower_case": false, "keep_accents": true}`)}},
			mustModel(t, model, ModelOptions{Family: FamilyALBERT, KeepAccents: true}), ""},
		{"spm.model", fstest.MapFS{"m/spm.model": {Data: model}}, mustModel(t, model, ModelOptions{Family: FamilyDeBERTaV2, AppendMask: true}), ""},
		{"BPE tokenizer.json only", fstest.MapFS{"m/tokenizer.json": {Data: []byte(`{"model":{"type":"BPE"}}`)}}, nil, "no Unigram"},
		{"bad config", fstest.MapFS{"m/spm.model": {Data: model}, "m/tokenizer_config.json": {Data: []byte(`{`)}}, nil, "tokenizer_config.json"},
		{"bad model", fstest.MapFS{"m/spm.model": {Data: []byte{0x0b}}}, nil, "spm.model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk, err := LoadFS(tt.files, "m")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := tk.EncodePair(text, text, 0)
			want, _ := tt.want.EncodePair(text, text, 0)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got.Tokens, want.Tokens)
			}
		})
	}
}

func mustModel(t *testing.T, b []byte, o ModelOptions) *Tokenizer {
	t.Helper()
	tk, err := FromModelFile(b, o)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}
