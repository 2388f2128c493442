package hf

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// FuzzParseShardIndex parses arbitrary bytes as model.safetensors.index.json. It must never
// panic; an index it accepts has a non-empty weight_map of plain shard file names, and
// survives a round trip through JSON unchanged. testdata/fuzz/FuzzParseShardIndex holds seeds.
func FuzzParseShardIndex(f *testing.F) {
	f.Add([]byte(`{"metadata":{"total_size":1048},"weight_map":{"bert.embeddings.word_embeddings.weight":"model-00001-of-00002.safetensors","cls.predictions.bias":"model-00002-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{"a":"../x.safetensors"}}`))
	f.Add([]byte(`{"metadata":{"total_size":1.5},"weight_map":{"a":"b"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParseShardIndex(data, "idx.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "idx.json: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(x.WeightMap) == 0 || x.TotalSize < 0 {
			t.Fatalf("accepted %+v", x)
		}
		for tensor, shard := range x.WeightMap {
			if shard == "" || shard == "." || shard == ".." || strings.ContainsAny(shard, "/\\\x00") {
				t.Fatalf("tensor %q: accepted shard name %q", tensor, shard)
			}
		}
		b, err := json.Marshal(map[string]any{"metadata": map[string]int64{"total_size": x.TotalSize}, "weight_map": x.WeightMap})
		if err != nil {
			t.Fatal(err)
		}
		y, err := ParseShardIndex(b, "idx.json")
		if err != nil {
			t.Fatalf("re-encoded index rejected: %v", err)
		}
		if y.TotalSize != x.TotalSize || !maps.Equal(x.WeightMap, y.WeightMap) {
			t.Fatalf("round trip changed %+v into %+v", x, y)
		}
	})
}
