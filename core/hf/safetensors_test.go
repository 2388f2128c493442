package hf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

const (
	fixtureModel  = "testdata/bert-tiny-random/model.safetensors"
	fixtureInputs = "testdata/bert-tiny-random/inputs.safetensors"
)

// raw assembles a safetensors file from a header as written (no padding) and a data region.
func raw(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

// encodeBytes is Encode into memory, failing the test on error.
func encodeBytes(t testing.TB, tensors []Tensor, opt WriteOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, tensors, opt); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustReader(t testing.TB, b []byte) *File {
	t.Helper()
	f, err := NewReader(bytes.NewReader(b), int64(len(b)), "mem.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReadFixtureModel(t *testing.T) {
	f, err := Open(fixtureModel)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	names := f.Names()
	if len(names) != 47 {
		t.Fatalf("%d tensors, want 47", len(names))
	}
	// Names come in file order, which in this file is also the header's order.
	if names[0] != "bert.embeddings.word_embeddings.weight" || names[46] != "cls.seq_relationship.bias" {
		t.Errorf("first/last names %q, %q", names[0], names[46])
	}
	prevEnd := int64(0)
	for _, n := range names {
		ti, _ := f.Info(n)
		if ti.Begin != prevEnd {
			t.Errorf("%s begins at %d, previous tensor ends at %d", n, ti.Begin, prevEnd)
		}
		prevEnd = ti.End
	}

	shapes := []struct {
		name  string
		shape []int
	}{
		{"bert.embeddings.word_embeddings.weight", []int{2000, 64}},
		{"bert.embeddings.position_embeddings.weight", []int{32, 64}},
		{"bert.embeddings.token_type_embeddings.weight", []int{2, 64}},
		{"bert.embeddings.LayerNorm.weight", []int{64}},
		{"bert.encoder.layer.0.attention.self.query.weight", []int{64, 64}},
		{"bert.encoder.layer.1.intermediate.dense.weight", []int{128, 64}},
		{"bert.encoder.layer.1.output.dense.weight", []int{64, 128}},
		{"bert.pooler.dense.bias", []int{64}},
		{"cls.predictions.bias", []int{2000}},
		{"cls.predictions.decoder.weight", []int{2000, 64}},
		{"cls.seq_relationship.weight", []int{2, 64}},
		{"cls.seq_relationship.bias", []int{2}},
	}
	for _, s := range shapes {
		ti, ok := f.Info(s.name)
		if !ok {
			t.Errorf("%s missing", s.name)
			continue
		}
		if ti.DType != F32 || !slices.Equal(ti.Shape, s.shape) {
			t.Errorf("%s: %s %v, want F32 %v", s.name, ti.DType, ti.Shape, s.shape)
		}
	}

	all := map[string][]float32{}
	for _, n := range names {
		data, shape, err := f.Float32(n)
		if err != nil {
			t.Fatal(err)
		}
		ti, _ := f.Info(n)
		if !slices.Equal(shape, ti.Shape) || len(data) != ti.NumElements() {
			t.Errorf("%s: shape %v, %d values; info says %v", n, shape, len(data), ti.Shape)
		}
		all[n] = data
	}
	// Values checked against an independent reader of the fixture.
	want := map[string][]float32{
		"bert.embeddings.word_embeddings.weight": {0.06286510825157166, -0.06605242937803268, 0.3202113211154938, 0.05245005711913109},
		"cls.seq_relationship.bias":              {0.06347911804914474, 0.011391233652830124},
		"bert.embeddings.LayerNorm.weight":       {0.8701229691505432, 1.0388072729110718, 1.0061933994293213, 0.8488127589225769},
	}
	for n, w := range want {
		if got := all[n][:len(w)]; !slices.Equal(got, w) {
			t.Errorf("%s starts %v, want %v", n, got, w)
		}
	}
	// The fixture ties the decoder to the word embeddings: identical values.
	if !slices.Equal(all["cls.predictions.decoder.weight"], all["bert.embeddings.word_embeddings.weight"]) {
		t.Error("decoder weight differs from the word embeddings")
	}
	if md := f.Metadata(); md["format"] != "pt" || md["generator"] != "make_fixture.py" {
		t.Errorf("metadata %v", md)
	}
}

func TestReadFixtureInputs(t *testing.T) {
	f, err := Open(fixtureInputs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := f.Names(), []string{"input_ids", "token_type_ids", "attention_mask", "labels", "next_sentence_label"}; !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
	tests := []struct {
		name  string
		shape []int
		want  []int64
	}{
		{"input_ids", []int{2, 12}, []int64{101, 490, 103, 103, 1248, 102, 1655, 996, 0, 489, 1057, 102, 101, 103, 1532, 102, 458, 103, 102, 0, 0, 0, 0, 0}},
		{"token_type_ids", []int{2, 12}, []int64{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0}},
		{"attention_mask", []int{2, 12}, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}},
		{"labels", []int{2, 12}, []int64{-100, -100, 1092, 1712, 1248, -100, -100, -100, -100, -100, -100, -100, -100, 599, -100, -100, -100, 1149, -100, -100, -100, -100, -100, -100}},
		{"next_sentence_label", []int{2}, []int64{0, 1}},
	}
	for _, tt := range tests {
		got, shape, err := f.Int64(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(shape, tt.shape) || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v %v, want %v %v", tt.name, shape, got, tt.shape, tt.want)
		}
		if ti, _ := f.Info(tt.name); ti.DType != I64 {
			t.Errorf("%s: dtype %s", tt.name, ti.DType)
		}
	}
	if _, _, err := f.Float32("input_ids"); err == nil || !strings.Contains(err.Error(), "I64 cannot be read as float32") {
		t.Errorf("Float32 of I64: %v", err)
	}
}

// Writing the fixture's tensors back, in its order and with its metadata, gives the fixture byte
// for byte (metadata key order aside): the same layout as the reference writer.
func TestEncodeReproducesFixture(t *testing.T) {
	want, err := os.ReadFile(fixtureModel)
	if err != nil {
		t.Fatal(err)
	}
	f := mustReader(t, want)
	var ts []Tensor
	for _, n := range f.Names() {
		data, shape, err := f.Float32(n)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, Tensor{Name: n, Shape: shape, Data: data})
	}
	got := encodeBytes(t, ts, WriteOptions{Metadata: f.Metadata()})
	// The metadata object comes first in both, but its key order is the writer's choice (we sort;
	// the fixture's writer kept insertion order), so it is compared as a map.
	tail := func(b []byte) []byte { return b[bytes.Index(b, []byte(`},"`)):] }
	if len(got) != len(want) || !bytes.Equal(got[:8], want[:8]) || !bytes.Equal(tail(got), tail(want)) {
		n := binary.LittleEndian.Uint64(want)
		t.Errorf("re-encoded fixture differs (%d bytes, want %d)\ngot header  %.600s\nwant header %.600s", len(got), len(want), got[8:], want[8:8+n])
	}
	if md := mustReader(t, got).Metadata(); !mapsEqual(md, f.Metadata()) {
		t.Errorf("metadata %v, want %v", md, f.Metadata())
	}
}

// The layout the reference implementation (safetensors' serialize) produces for the same input:
// compact JSON, __metadata__ first, header padded with spaces to a multiple of 8, data contiguous.
func TestLayoutMatchesReference(t *testing.T) {
	ts := []Tensor{
		{Name: "a", Shape: []int{2}, Data: []float32{1, 2}},
		{Name: "b.weight", Shape: []int{1, 3}, Data: []float32{-1, 0.5, 3}},
		{Name: "c", Shape: []int{}, Data: []float32{7}},
	}
	header := `{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},` +
		`"b.weight":{"dtype":"F32","shape":[1,3],"data_offsets":[8,20]},"c":{"dtype":"F32","shape":[],"data_offsets":[20,24]}}`
	header += strings.Repeat(" ", (8-len(header)%8)%8)
	var data []byte
	for _, v := range []float32{1, 2, -1, 0.5, 3, 7} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
	}
	want := raw(header, data)
	if got := encodeBytes(t, ts, WriteOptions{}); !bytes.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}

	// Every header we write is padded to 8 and decodes with contiguous offsets, whatever the names.
	for _, name := range []string{"x", "xy", "xyz", "a.b.c.d", "é", `q"uote`, "tab\there"} {
		b := encodeBytes(t, []Tensor{{Name: name, Shape: []int{1}, Data: []float32{1}}, {Name: "i", Shape: []int{2}, Int64: []int64{1, 2}}}, WriteOptions{DType: F16})
		n := binary.LittleEndian.Uint64(b)
		if n%8 != 0 || !strings.HasSuffix(strings.TrimRight(string(b[8:8+n]), " "), "}") {
			t.Errorf("%q: header length %d, header %q", name, n, b[8:8+n])
		}
		f := mustReader(t, b)
		a, _ := f.Info(name)
		i, _ := f.Info("i")
		if a.DType != F16 || a.Begin != 0 || a.End != 2 || i.DType != I64 || i.Begin != 2 || i.End != 18 {
			t.Errorf("%q: infos %+v %+v", name, a, i)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.1, 1e-3, 3.14159, 65504, 65520, 1e10, -1e-10,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.SmallestNonzeroFloat32, math.MaxFloat32,
		6e-8, 3e-8, 1e-45, 2.5e-38, 123456.789}
	ramp := make([]float32, 3*5*7)
	for i := range ramp {
		ramp[i] = float32(i-50) * 0.37
	}
	ints := []int64{0, 1, -1, -100, 101, math.MaxInt64, math.MinInt64}
	for _, dt := range []DType{"", F32, F16, BF16} {
		t.Run(string(dt), func(t *testing.T) {
			ts := []Tensor{
				{Name: "special", Shape: []int{len(special)}, Data: special},
				{Name: "ramp", Shape: []int{3, 5, 7}, Data: ramp},
				{Name: "scalar", Shape: nil, Data: []float32{2.5}},
				{Name: "empty", Shape: []int{0, 4}, Data: []float32{}},
				{Name: "ids", Shape: []int{len(ints)}, Int64: ints},
				{Name: "empty_ids", Shape: []int{0}, Int64: []int64{}},
				{Name: "i8", Shape: []int{5}, Int8: []int8{0, 1, -1, math.MaxInt8, math.MinInt8}},
			}
			meta := map[string]string{"a": "1", "quote\"s": "line\nbreak\ttab\\", "html": "<b>&</b>", "unicode": "日本語 ✓", "ctl": "\x01\x1f", "": "empty key"}
			b := encodeBytes(t, ts, WriteOptions{DType: dt, Metadata: meta})
			f := mustReader(t, b)
			wantMeta := map[string]string{"format": "pt"}
			for k, v := range meta {
				wantMeta[k] = v
			}
			if got := f.Metadata(); !mapsEqual(got, wantMeta) {
				t.Errorf("metadata %q, want %q", got, wantMeta)
			}
			stored := dt
			if stored == "" {
				stored = F32
			}
			round := map[DType]func(float32) float32{
				F32:  func(v float32) float32 { return v },
				F16:  func(v float32) float32 { return F16ToF32(F32ToF16(v)) },
				BF16: func(v float32) float32 { return BF16ToF32(F32ToBF16(v)) },
			}[stored]
			for _, tt := range ts[:4] {
				got, shape, err := f.Float32(tt.Name)
				if err != nil {
					t.Fatal(err)
				}
				ti, _ := f.Info(tt.Name)
				if ti.DType != stored || !slices.Equal(shape, tt.Shape) {
					t.Errorf("%s: %s %v, want %s %v", tt.Name, ti.DType, shape, stored, tt.Shape)
				}
				for i, v := range tt.Data {
					w := round(v)
					if math.Float32bits(got[i]) != math.Float32bits(w) && !(isNaN(got[i]) && isNaN(w)) {
						t.Errorf("%s[%d]: %v stored as %s reads %v, want %v", tt.Name, i, v, stored, got[i], w)
					}
				}
			}
			for _, tt := range ts[4:6] {
				got, _, err := f.Int64(tt.Name)
				if err != nil || !slices.Equal(got, tt.Int64) {
					t.Errorf("%s: %v %v, want %v", tt.Name, got, err, tt.Int64)
				}
			}
			if got, shape, err := f.Int8("i8"); err != nil || !slices.Equal(got, ts[6].Int8) || !slices.Equal(shape, []int{5}) {
				t.Errorf("i8: %v %v %v, want %v [5]", got, shape, err, ts[6].Int8)
			}
			if ti, _ := f.Info("i8"); ti.DType != I8 || ti.End-ti.Begin != 5 {
				t.Errorf("i8 stored as %s in %d bytes, want I8 in 5", ti.DType, ti.End-ti.Begin)
			}
			if _, _, err := f.Int8("ramp"); err == nil || !strings.Contains(err.Error(), "cannot be read as int8") {
				t.Errorf("Int8 of a float tensor: %v", err)
			}
			// The rounding itself: F16 keeps 11 significant bits, BF16 8 (normal range).
			relErr := map[DType]float64{F32: 0, F16: 1.0 / 2048, BF16: 1.0 / 256}[stored]
			got, _, _ := f.Float32("ramp")
			for i, v := range ramp {
				if d := math.Abs(float64(got[i] - v)); d > relErr*math.Abs(float64(v)) {
					t.Errorf("ramp[%d]: %v read back as %v (error %g > %g relative)", i, v, got[i], d, relErr)
				}
			}
		})
	}
}

func isNaN(v float32) bool { return v != v }

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// validFile is a small file with two F32 tensors, a [2] and b [2,2], and metadata.
func validFile() []byte {
	return raw(`{"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]}}`,
		make([]byte, 24))
}

func TestMalformed(t *testing.T) {
	valid := validFile()
	hdrLen := int(binary.LittleEndian.Uint64(valid))
	f32 := func(name, shape, offsets string) string {
		return fmt.Sprintf(`%q:{"dtype":"F32","shape":%s,"data_offsets":%s}`, name, shape, offsets)
	}
	tests := []struct {
		name string
		file []byte
		want []string // substrings of the error message, besides the file name
	}{
		{"empty file", nil, []string{"0 bytes", "shorter than the 8-byte header length"}},
		{"cut in length", valid[:5], []string{"5 bytes", "truncated"}},
		{"cut in header", valid[:8+hdrLen/2], []string{"header length", "larger than", "truncated"}},
		{"cut at data start", valid[:8+hdrLen], []string{`tensor "a"`, "past the end of the 0-byte data region", "truncated"}},
		{"cut in first tensor", valid[:8+hdrLen+5], []string{`tensor "a"`, "past the end", "truncated"}},
		{"cut at tensor boundary", valid[:8+hdrLen+8], []string{`tensor "b"`, "data_offsets [8,24] run past the end of the 8-byte data region", "truncated"}},
		{"cut in last tensor", valid[:len(valid)-1], []string{`tensor "b"`, "past the end", "truncated"}},
		{"header length huge", append(binary.LittleEndian.AppendUint64(nil, 1<<62), "{}"...), []string{"header length 4611686018427387904", "larger than"}},
		{"header length max", append(binary.LittleEndian.AppendUint64(nil, math.MaxUint64), "{}"...), []string{"header length 18446744073709551615", "larger than"}},
		{"not JSON", raw(`{"a":`, nil), []string{"not valid JSON"}},
		{"empty header", raw(``, nil), []string{"not valid JSON"}},
		{"invalid UTF-8", raw("{\"a\xff\":{}}", nil), []string{"not valid UTF-8", "offset 3"}},
		{"not an object", raw(`[1,2]`, nil), []string{`expected "{"`, "found an array"}},
		{"data after object", raw(`{}{}`, nil), []string{"data after its JSON object"}},
		{"garbage after object", raw(`{} x`, nil), []string{"not valid JSON after its closing brace"}},
		{"duplicate tensor", raw(`{`+f32("a", "[1]", "[0,4]")+","+f32("a", "[1]", "[4,8]")+`}`, make([]byte, 8)), []string{`tensor "a"`, "duplicate key"}},
		{"duplicate metadata", raw(`{"__metadata__":{},"__metadata__":{}}`, nil), []string{`"__metadata__"`, "duplicate key"}},
		{"duplicate metadata key", raw(`{"__metadata__":{"k":"1","k":"2"}}`, nil), []string{`"k"`, "duplicate key"}},
		{"duplicate entry key", raw(`{"a":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), []string{`tensor "a"`, `"dtype" appears twice`}},
		{"metadata number", raw(`{"__metadata__":{"k":1}}`, nil), []string{"__metadata__", `value of "k" is the number 1`, "must be strings"}},
		{"metadata object", raw(`{"__metadata__":{"k":{"x":"y"}}}`, nil), []string{`value of "k" is an object`, "must be strings"}},
		{"metadata array", raw(`{"__metadata__":{"k":["y"]}}`, nil), []string{`value of "k" is an array`}},
		{"metadata null value", raw(`{"__metadata__":{"k":null}}`, nil), []string{`value of "k" is null`}},
		{"metadata not object", raw(`{"__metadata__":"x"}`, nil), []string{"__metadata__", "expected an object of strings"}},
		{"unknown dtype", raw(`{"w":{"dtype":"F8_XYZ","shape":[1],"data_offsets":[0,1]}}`, make([]byte, 1)), []string{`tensor "w"`, `unknown dtype "F8_XYZ"`, "BF16"}},
		{"dtype not string", raw(`{"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), []string{`tensor "w"`, "dtype is the number 4"}},
		{"negative dim", raw(`{`+f32("w", "[2,-3]", "[0,24]")+`}`, make([]byte, 24)), []string{`tensor "w"`, "shape holds -3", "non-negative"}},
		{"fractional dim", raw(`{`+f32("w", "[2.5]", "[0,10]")+`}`, make([]byte, 10)), []string{`tensor "w"`, "shape holds 2.5"}},
		{"shape not array", raw(`{`+f32("w", "3", "[0,12]")+`}`, make([]byte, 12)), []string{`tensor "w"`, `shape: expected "["`}},
		{"shape product overflows", raw(`{`+f32("w", "[4611686018427387904,4611686018427387904]", "[0,4]")+`}`, make([]byte, 4)), []string{`tensor "w"`, "more elements than fit in int64"}},
		{"byte size overflows", raw(`{`+f32("w", "[4611686018427387904]", "[0,4]")+`}`, make([]byte, 4)), []string{`tensor "w"`, "more bytes than fit in int64"}},
		{"dim too large", raw(`{`+f32("w", "[9223372036854775808]", "[0,4]")+`}`, make([]byte, 4)), []string{`tensor "w"`, "below 2^63"}},
		{"shape mismatch", raw(`{`+f32("w", "[2,3]", "[0,20]")+`}`, make([]byte, 20)), []string{`tensor "w"`, "shape [2 3] of F32 is 24 bytes", "span 20 bytes"}},
		{"offsets reversed", raw(`{`+f32("w", "[0]", "[8,4]")+`}`, make([]byte, 8)), []string{`tensor "w"`, "[8,4] end before they begin"}},
		{"offsets three", raw(`{`+f32("w", "[1]", "[0,4,8]")+`}`, make([]byte, 8)), []string{`tensor "w"`, "exactly two"}},
		{"offsets out of region", raw(`{`+f32("w", "[2]", "[4,12]")+`}`, make([]byte, 8)), []string{`tensor "w"`, "[4,12] run past the end of the 8-byte data region"}},
		{"missing dtype", raw(`{"w":{"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), []string{`tensor "w"`, "no dtype"}},
		{"missing shape", raw(`{"w":{"dtype":"F32","data_offsets":[0,4]}}`, make([]byte, 4)), []string{`tensor "w"`, "no shape"}},
		{"missing offsets", raw(`{"w":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), []string{`tensor "w"`, "no data_offsets"}},
		{"entry not object", raw(`{"w":[1]}`, nil), []string{`tensor "w"`, `tensor entry: expected "{", found an array`}},
		{"overlap", raw(`{`+f32("a", "[2]", "[0,8]")+","+f32("b", "[2]", "[4,12]")+`}`, make([]byte, 12)), []string{`tensor "b"`, `[4,12] overlap tensor "a" [0,8]`}},
		{"same offsets", raw(`{`+f32("a", "[2]", "[0,8]")+","+f32("b", "[2]", "[0,8]")+`}`, make([]byte, 8)), []string{"overlap tensor"}},
		{"hole", raw(`{`+f32("a", "[2]", "[0,8]")+","+f32("b", "[2]", "[12,20]")+`}`, make([]byte, 20)), []string{`tensor "b"`, "hole", "[8,12)", "contiguously"}},
		{"hole at start", raw(`{`+f32("a", "[2]", "[4,12]")+`}`, make([]byte, 12)), []string{`tensor "a"`, "hole", "[0,4)"}},
		{"trailing garbage", append(slices.Clone(valid), "junk"...), []string{"4 trailing bytes", "data region is 28 bytes", "cover 24"}},
		{"no tensors but data", raw(`{}`, []byte{1}), []string{"1 trailing bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewReader(bytes.NewReader(tt.file), int64(len(tt.file)), "bad.safetensors")
			if err == nil {
				t.Fatalf("accepted: %v", f.Names())
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError: %v", err, err)
			}
			msg := err.Error()
			for _, w := range append(tt.want, "checkpoint bad.safetensors: ") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			// Open reports the same, naming the path.
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			if err := os.WriteFile(path, tt.file, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want[0]) {
				t.Errorf("Open: %v", err)
			}
		})
	}
}

func TestValidEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		file   []byte
		tensor string
		want   []float32
	}{
		{"no tensors", raw(`{}`, nil), "", nil},
		{"padded header", raw(`{}      `, nil), "", nil},
		{"leading space", raw(` {"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, []byte{0, 0, 128, 63}), "a", []float32{1}},
		{"null metadata", raw(`{"__metadata__":null}`, nil), "", nil},
		{"metadata last", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{"x":"y"}}`, []byte{0, 0, 0, 64}), "a", []float32{2}},
		{"unknown entry key skipped", raw(`{"a":{"extra":{"deep":[1,{}]},"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, []byte{0, 0, 0, 64}), "a", []float32{2}},
		{"header order differs from offsets", raw(`{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, []byte{0, 0, 128, 63, 0, 0, 0, 64}), "b", []float32{2}},
		{"zero-size tensors", raw(`{"z":{"dtype":"F32","shape":[0,5],"data_offsets":[4,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"I64","shape":[3,0],"data_offsets":[0,0]}}`, []byte{0, 0, 128, 63}), "z", []float32{}},
		{"zero dim with huge dims", raw(`{"z":{"dtype":"F32","shape":[9223372036854775807,0,9223372036854775807],"data_offsets":[0,0]}}`, nil), "z", []float32{}},
		{"other dtypes", raw(`{"u":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},"f":{"dtype":"F64","shape":[1],"data_offsets":[3,11]},"e":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[11,12]}}`, make([]byte, 12)), "", nil},
		{"F16", raw(`{"h":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}}`, []byte{0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c}), "h", []float32{1, -2, 0x1p-24, float32(math.Inf(1))}},
		{"BF16", raw(`{"h":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, []byte{0x80, 0x3f, 0x49, 0x40}), "h", []float32{1, 3.140625}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustReader(t, tt.file)
			if tt.tensor == "" {
				return
			}
			got, _, err := f.Float32(tt.tensor)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("%s = %v, %v; want %v", tt.tensor, got, err, tt.want)
			}
		})
	}
	// Names are in file order, not header order.
	f := mustReader(t, tests[6].file)
	if got := f.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("names %v, want file order [a b]", got)
	}
}

func TestReadErrors(t *testing.T) {
	i32 := raw(`{"i":{"dtype":"I32","shape":[3],"data_offsets":[0,12]},"u":{"dtype":"U8","shape":[1],"data_offsets":[12,13]}}`,
		[]byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x9c, 0xff, 0xff, 0xff, 7})
	f := mustReader(t, i32)
	if got, shape, err := f.Int64("i"); err != nil || !slices.Equal(got, []int64{1, -1, -100}) || !slices.Equal(shape, []int{3}) {
		t.Errorf("I32 widened: %v %v %v", got, shape, err)
	}

	m := mustReader(t, validFile())
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"dst too short", m.ReadFloat32("b", make([]float32, 3)), `checkpoint mem.safetensors: tensor "b": destination holds 3 float32 values, the tensor has 4 (shape [2 2])`},
		{"dst too long", m.ReadFloat32("a", make([]float32, 5)), `tensor "a": destination holds 5 float32 values, the tensor has 2`},
		{"dst nil", m.ReadFloat32("a", nil), `destination holds 0 float32 values, the tensor has 2`},
		{"not found", m.ReadFloat32("nope", nil), `checkpoint mem.safetensors: tensor "nope" not found`},
		{"Float32 not found", lastErr(m.Float32("nope")), `tensor "nope" not found`},
		{"Int64 not found", lastErr(m.Int64("nope")), `tensor "nope" not found`},
		{"Int64 of F32", lastErr(m.Int64("a")), `tensor "a": dtype F32 cannot be read as int64`},
		{"Float32 of U8", lastErr(f.Float32("u")), `tensor "u": dtype U8 cannot be read as float32`},
		{"ReadFloat32 of I32", f.ReadFloat32("i", make([]float32, 3)), `tensor "i": dtype I32 cannot be read as float32`},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, tt.err, tt.want)
		}
	}

	// Data that disappears after the header was read (a file truncated while open).
	b := validFile()
	short := mustReader(t, b)
	short.r = bytes.NewReader(b[:len(b)-3])
	if err := short.ReadFloat32("b", make([]float32, 4)); err == nil || !strings.Contains(err.Error(), `tensor "b": reading data: unexpected EOF`) {
		t.Errorf("short read: %v", err)
	}

	// Reading after Close fails cleanly.
	of, err := Open(fixtureInputs)
	if err != nil {
		t.Fatal(err)
	}
	if err := of.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := of.Int64("input_ids"); err == nil || !strings.Contains(err.Error(), `tensor "input_ids": reading data`) {
		t.Errorf("after Close: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.safetensors")); err == nil || !strings.Contains(err.Error(), "missing.safetensors") {
		t.Errorf("Open of a missing file: %v", err)
	}
}

// lastErr keeps the error of a call that returns data, shape and error.
func lastErr[A, B any](_ A, _ B, err error) error { return err }

// A header length over 100 MiB is refused before anything is allocated for it, even when the
// file is large enough to hold it.
func TestHeaderTooLarge(t *testing.T) {
	const size = 1 << 40
	n := uint64(maxHeaderSize + 1)
	r := &fakeLarge{prefix: binary.LittleEndian.AppendUint64(nil, n)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := NewReader(r, size, "big.safetensors")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "header length 104857601 exceeds the limit of 104857600 bytes (100 MiB)") {
		t.Errorf("error %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("allocated %d bytes for a refused header", d)
	}
}

// fakeLarge is a huge file of zeros that starts with prefix.
type fakeLarge struct{ prefix []byte }

func (r *fakeLarge) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		p[i] = 0
		if o := off + int64(i); o < int64(len(r.prefix)) {
			p[i] = r.prefix[o]
		}
	}
	return len(p), nil
}

func TestWriteValidation(t *testing.T) {
	ok := Tensor{Name: "ok", Shape: []int{2}, Data: []float32{1, 2}}
	tests := []struct {
		name    string
		tensors []Tensor
		opt     WriteOptions
		want    string
	}{
		{"shape mismatch", []Tensor{ok, {Name: "w", Shape: []int{2, 3}, Data: make([]float32, 5)}}, WriteOptions{}, `tensor "w": shape [2 3] has 6 elements but the data holds 5`},
		{"int shape mismatch", []Tensor{{Name: "ids", Shape: []int{2, 12}, Int64: make([]int64, 12)}}, WriteOptions{}, `tensor "ids": shape [2 12] has 24 elements but the data holds 12`},
		{"negative dim", []Tensor{{Name: "w", Shape: []int{-1}, Data: nil}}, WriteOptions{}, `tensor "w": shape [-1] has a negative dimension`},
		{"overflow", []Tensor{{Name: "w", Shape: []int{1 << 40, 1 << 40}, Data: nil}}, WriteOptions{}, `more elements than fit in int64`},
		{"duplicate", []Tensor{ok, ok}, WriteOptions{}, `tensor "ok": appears twice (duplicate name)`},
		{"both data kinds", []Tensor{{Name: "w", Shape: []int{1}, Data: []float32{1}, Int64: []int64{1}}}, WriteOptions{}, `tensor "w": more than one of Data, Int64 and Int8 is set`},
		{"float and int8", []Tensor{{Name: "w", Shape: []int{1}, Data: []float32{1}, Int8: []int8{1}}}, WriteOptions{}, `tensor "w": more than one of Data, Int64 and Int8 is set`},
		{"int8 shape", []Tensor{{Name: "w", Shape: []int{3}, Int8: []int8{1, 2}}}, WriteOptions{}, `tensor "w": shape [3] has 3 elements but the data holds 2`},
		{"empty name", []Tensor{{Shape: []int{}, Data: []float32{1}}}, WriteOptions{}, `a tensor has an empty name`},
		{"reserved name", []Tensor{{Name: "__metadata__", Shape: []int{}, Data: []float32{1}}}, WriteOptions{}, `tensor "__metadata__": the name is reserved`},
		{"bad UTF-8 name", []Tensor{{Name: "a\xff", Shape: []int{}, Data: []float32{1}}}, WriteOptions{}, `not valid UTF-8`},
		{"bad dtype", []Tensor{ok}, WriteOptions{DType: I64}, `WriteOptions.DType "I64": only F32, F16 and BF16 can be written`},
		{"unknown dtype", []Tensor{ok}, WriteOptions{DType: "F8_XYZ"}, `WriteOptions.DType "F8_XYZ"`},
		{"bad UTF-8 metadata", []Tensor{ok}, WriteOptions{Metadata: map[string]string{"k": "\xff"}}, `metadata "k": keys and values must be valid UTF-8`},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		err := Encode(&buf, tt.tensors, tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: %d bytes written before the error", tt.name, buf.Len())
		}
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	v1 := []Tensor{{Name: "w", Shape: []int{2}, Data: []float32{1, 2}}}
	if err := Write(path, v1, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, encodeBytes(t, v1, WriteOptions{})) {
		t.Error("Write and Encode disagree")
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", st.Mode(), err)
	}
	onlyFile := func(when string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "model.safetensors" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s: directory holds %v, want only model.safetensors", when, names)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, old) {
			t.Errorf("%s: model.safetensors changed (%v)", when, err)
		}
	}

	bad := []Tensor{{Name: "w", Shape: []int{3}, Data: []float32{1, 2}}}
	if err := Write(path, bad, WriteOptions{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("invalid tensors: %v", err)
	}
	onlyFile("after a validation failure")

	// A failure while the data is being written (disk full, say) leaves no trace either.
	boom := errors.New("disk full")
	err = writeAtomic(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("failed fill: %v", err)
	}
	onlyFile("after a failed write")

	// Writing into a missing directory fails without creating anything.
	if err := Write(filepath.Join(dir, "nope", "m.safetensors"), v1, WriteOptions{}); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	onlyFile("after writing into a missing directory")

	// A successful rewrite replaces the content.
	v2 := []Tensor{{Name: "w", Shape: []int{3}, Data: []float32{3, 4, 5}}}
	if err := Write(path, v2, WriteOptions{DType: BF16}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _, err := f.Float32("w"); err != nil || !slices.Equal(got, []float32{3, 4, 5}) {
		t.Errorf("rewritten: %v %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d directory entries after rewrite", len(entries))
	}
}

// Reads may run concurrently on one File.
func TestConcurrentReads(t *testing.T) {
	f, err := Open(fixtureModel)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, _, err := f.Float32("bert.embeddings.word_embeddings.weight")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]float32, len(want))
			if err := f.ReadFloat32("cls.predictions.decoder.weight", got); err != nil {
				errs <- err
			} else if !slices.Equal(got, want) {
				errs <- errors.New("concurrent read differs")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Large tensors are read through several chunks; every byte must land in place.
func TestChunkedReads(t *testing.T) {
	n := readChunk/4 + 12345 // more than one F32 read chunk
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(i%65521) * 0.25
	}
	for _, dt := range []DType{F32, F16, BF16} {
		b := encodeBytes(t, []Tensor{{Name: "x", Shape: []int{n}, Data: data}, {Name: "ids", Shape: []int{n / 4}, Int64: make([]int64, n/4)}}, WriteOptions{DType: dt})
		f := mustReader(t, b)
		got, _, err := f.Float32("x")
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range data {
			w := v
			switch dt {
			case F16:
				w = F16ToF32(F32ToF16(v))
			case BF16:
				w = BF16ToF32(F32ToBF16(v))
			}
			if got[i] != w {
				t.Fatalf("%s: x[%d] = %v, want %v", dt, i, got[i], w)
			}
		}
	}
}

func BenchmarkReadFloat32(b *testing.B) {
	const n = 16 << 20 // 64 MiB of F32
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(i)
	}
	for _, dt := range []DType{F32, F16, BF16} {
		path := filepath.Join(b.TempDir(), "big.safetensors")
		if err := Write(path, []Tensor{{Name: "x", Shape: []int{n}, Data: data}}, WriteOptions{DType: dt}); err != nil {
			b.Fatal(err)
		}
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]float32, n)
		b.Run(string(dt), func(b *testing.B) {
			b.SetBytes(4 * n) // bytes of float32 produced
			for b.Loop() {
				if err := f.ReadFloat32("x", dst); err != nil {
					b.Fatal(err)
				}
			}
		})
		f.Close()
	}
}

func BenchmarkF16ToF32(b *testing.B) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i*40503) & 0x7bff // finite values of every kind, scattered
	}
	dst := make([]float32, len(src))
	b.SetBytes(int64(2 * len(src)))
	for b.Loop() {
		for i, h := range src {
			dst[i] = F16ToF32(h)
		}
	}
}

func BenchmarkF32ToF16(b *testing.B) {
	src := make([]float32, 1<<16)
	for i := range src {
		src[i] = float32(i-32768) * 0.013
	}
	dst := make([]uint16, len(src))
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		for i, v := range src {
			dst[i] = F32ToF16(v)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	data := make([]float32, 4<<20)
	for _, dt := range []DType{F32, F16} {
		b.Run(string(dt), func(b *testing.B) {
			b.SetBytes(int64(4 * len(data)))
			for b.Loop() {
				if err := Encode(io.Discard, []Tensor{{Name: "x", Shape: []int{len(data)}, Data: data}}, WriteOptions{DType: dt}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
