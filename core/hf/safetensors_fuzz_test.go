package hf

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// fuzzSeeds are the in-code seeds of both fuzzers; testdata/fuzz/FuzzXxx holds more.
func fuzzSeeds(f *testing.F) {
	valid := validFile()
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(valid[:20])
	f.Add(raw(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)))
	f.Add(raw(`{"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[4,6]},"i":{"dtype":"I32","shape":[1],"data_offsets":[6,10]},"l":{"dtype":"I64","shape":[1],"data_offsets":[10,18]}}`, make([]byte, 18)))
	f.Add(raw(`{"__metadata__":{"k":"v"},"z":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}}`, nil))
	var mixed bytes.Buffer
	if err := Encode(&mixed, []Tensor{
		{Name: "w", Shape: []int{2, 3}, Data: []float32{1, -2, 0.5, 65504, 1e-7, float32(math.Inf(1))}},
		{Name: "ids", Shape: []int{1, 4}, Int64: []int64{101, 7, 102, -100}},
	}, WriteOptions{DType: F16, Metadata: map[string]string{"note": "seed"}}); err != nil {
		f.Fatal(err)
	}
	f.Add(mixed.Bytes())
}

// FuzzNewReader parses arbitrary bytes as a safetensors file. It must never panic; a file it
// accepts must have every tensor of a readable dtype read without error and re-encode to the same
// values; and parsing plus reading must allocate no more than a small multiple of the input.
func FuzzNewReader(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		file, err := NewReader(bytes.NewReader(data), int64(len(data)), "fuzz")
		var tensors []Tensor
		if err == nil {
			tensors = readAll(t, file)
		}
		runtime.ReadMemStats(&after)
		// Allowance: the header's JSON structures (a few times its size), converted data (float32
		// from F16 is twice the bytes), and fixed buffers of the JSON decoder.
		if d := after.TotalAlloc - before.TotalAlloc; d > 64*uint64(len(data))+256<<10 {
			t.Fatalf("allocated %d bytes for a %d-byte input", d, len(data))
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		checkReencode(t, file, tensors)
	})
}

// FuzzOpen is FuzzNewReader through a real file, as Open reads models from disk.
func FuzzOpen(f *testing.F) {
	fuzzSeeds(f)
	path := filepath.Join(f.TempDir(), "fuzz.safetensors")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := Open(path)
		if err != nil {
			return
		}
		defer file.Close()
		checkReencode(t, file, readAll(t, file))
	})
}

// readAll reads every tensor that has a readable dtype, checking that a validated file never
// fails to read, and returns them as Tensors (F16/BF16 widened to float32, I32 to int64).
func readAll(t *testing.T, file *File) []Tensor {
	var out []Tensor
	for _, name := range file.Names() {
		ti, ok := file.Info(name)
		if !ok {
			t.Fatalf("Names lists %q but Info does not know it", name)
		}
		switch ti.DType {
		case F32, F16, BF16:
			data, shape, err := file.Float32(name)
			if err != nil {
				t.Fatalf("validated tensor %q does not read: %v", name, err)
			}
			if err := file.ReadFloat32(name, make([]float32, len(data)+1)); err == nil {
				t.Fatalf("%q: a destination of the wrong length was accepted", name)
			}
			out = append(out, Tensor{Name: name, Shape: shape, Data: data})
		case I64, I32:
			data, shape, err := file.Int64(name)
			if err != nil {
				t.Fatalf("validated tensor %q does not read: %v", name, err)
			}
			out = append(out, Tensor{Name: name, Shape: shape, Int64: data})
		default:
			if _, _, err := file.Float32(name); err == nil {
				t.Fatalf("%q of dtype %s read as float32", name, ti.DType)
			}
		}
	}
	return out
}

// checkReencode writes the tensors of file (as F32 and I64) and reads them back: same names,
// shapes, values (bit for bit) and metadata.
func checkReencode(t *testing.T, file *File, tensors []Tensor) {
	for _, tt := range tensors {
		if tt.Name == "" || tt.Name == "__metadata__" {
			return // legal to read, refused by the writer
		}
	}
	var buf bytes.Buffer
	if err := Encode(&buf, tensors, WriteOptions{Metadata: file.Metadata()}); err != nil {
		t.Fatalf("re-encoding a valid file: %v", err)
	}
	back, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "reencoded")
	if err != nil {
		t.Fatalf("re-encoded file does not parse: %v", err)
	}
	for k, v := range file.Metadata() {
		if back.Metadata()[k] != v {
			t.Fatalf("metadata %q = %q, re-encoded %q", k, v, back.Metadata()[k])
		}
	}
	got := readAll(t, back)
	if len(got) != len(tensors) {
		t.Fatalf("%d tensors re-encoded, %d read back", len(tensors), len(got))
	}
	want := make(map[string]Tensor, len(tensors))
	for _, tt := range tensors {
		want[tt.Name] = tt
	}
	for _, g := range got {
		w := want[g.Name]
		same := slices.Equal(g.Shape, w.Shape) && slices.Equal(g.Int64, w.Int64) &&
			slices.EqualFunc(g.Data, w.Data, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) })
		if !same {
			t.Fatalf("tensor %q changed in a re-encode round trip", g.Name)
		}
	}
}
