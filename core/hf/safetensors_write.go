package hf

import (
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Tensor is one tensor to write: float data, or integer data for inputs such as input_ids.
type Tensor struct {
	Name string
	// Shape lists the dimensions, outermost first; empty for a scalar.
	Shape []int
	// Data holds the row-major values of a float tensor, stored as WriteOptions.DType;
	// len(Data) must be the product of Shape.
	Data []float32
	// Int64, when non-nil, makes this an integer tensor stored as I64 (input_ids [B, S], labels,
	// ...); Data must then be nil and len(Int64) the product of Shape.
	Int64 []int64
	// Int8, when non-nil, makes this an integer tensor stored as I8 (the quantized values of a
	// delta file, see WriteDelta); Data and Int64 must then be nil.
	Int8 []int8
}

// WriteOptions says how Write and Encode store the tensors.
type WriteOptions struct {
	// DType is the storage type of float tensors: F32 (the default when empty), F16 or BF16. F16
	// and BF16 round to nearest, ties to even, as torch does.
	DType DType
	// Metadata is written as the header's "__metadata__". A "format" entry set to "pt" is added
	// when absent: transformers refuses to load a safetensors file whose metadata lacks it.
	Metadata map[string]string
}

// Encode writes tensors to w in safetensors format, in the given order, as the reference
// implementation lays a file out: header padded with spaces to a multiple of 8 bytes, tensor data
// back to back from offset 0. Everything is validated before the first byte is written: names
// (non-empty, unique, valid UTF-8, not "__metadata__"), shapes against data lengths, the dtype.
// Data is converted and written through a buffer of at most 1 MiB.
func Encode(w io.Writer, tensors []Tensor, opt WriteOptions) error {
	head, dtype, err := prepare("", tensors, opt)
	if err != nil {
		return err
	}
	if err := encode(w, head, tensors, dtype); err != nil {
		return fmt.Errorf("%swriting: %w", prefix("", ""), err)
	}
	return nil
}

// Write writes tensors to the file at path as Encode does, atomically: the data goes to a
// temporary file in the same directory, which is synced and then renamed over path. path thus
// holds either its old content or the complete new file, never a partial one, and nothing is
// created when validation fails. The new file has mode 0644.
func Write(path string, tensors []Tensor, opt WriteOptions) error {
	head, dtype, err := prepare(path, tensors, opt)
	if err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error { return encode(w, head, tensors, dtype) })
}

// writeAtomic creates path with the content fill writes, through a temporary file and a rename.
// On failure the temporary file is removed and path is untouched.
func writeAtomic(path string, fill func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s%w", prefix(path, ""), err)
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				tmp.Close()
			}
			os.Remove(tmp.Name())
			err = fmt.Errorf("%swriting: %w", prefix(path, ""), err)
		}
	}()
	if err = fill(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	closed = true
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Make the rename itself durable. Not every platform can sync a directory (js/wasm, Windows),
	// and the file is complete either way, so failure here is not reported.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// prepare validates tensors and opt and returns the file's first bytes (length prefix and padded
// header) and the storage type of float tensors. file names the destination in errors.
func prepare(file string, tensors []Tensor, opt WriteOptions) ([]byte, DType, error) {
	dtype := opt.DType
	switch dtype {
	case "":
		dtype = F32
	case F32, F16, BF16:
	default:
		return nil, "", fmt.Errorf("%sWriteOptions.DType %q: only F32, F16 and BF16 can be written", prefix(file, ""), dtype)
	}
	meta := map[string]string{"format": "pt"}
	for k, v := range opt.Metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, "", fmt.Errorf("%smetadata %q: keys and values must be valid UTF-8", prefix(file, ""), k)
		}
		meta[k] = v
	}

	h := []byte(`{"__metadata__":{`)
	for i, k := range slices.Sorted(maps.Keys(meta)) {
		if i > 0 {
			h = append(h, ',')
		}
		h = appendJSONString(h, k)
		h = append(h, ':')
		h = appendJSONString(h, meta[k])
	}
	h = append(h, '}')

	seen := make(map[string]bool, len(tensors))
	off := int64(0)
	for _, t := range tensors {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s%s", prefix(file, t.Name), fmt.Sprintf(format, args...))
		}
		switch {
		case t.Name == "":
			return nil, "", fmt.Errorf("%sa tensor has an empty name", prefix(file, ""))
		case t.Name == "__metadata__":
			return nil, "", fail("the name is reserved for the header's metadata")
		case !utf8.ValidString(t.Name):
			return nil, "", fail("the name is not valid UTF-8")
		case seen[t.Name]:
			return nil, "", fail("appears twice (duplicate name)")
		case (t.Data != nil) && (t.Int64 != nil) || (t.Data != nil || t.Int64 != nil) && t.Int8 != nil:
			return nil, "", fail("more than one of Data, Int64 and Int8 is set; a tensor holds one of them")
		}
		seen[t.Name] = true
		count, dims := int64(1), len(t.Data)
		td := dtype
		switch {
		case t.Int64 != nil:
			dims, td = len(t.Int64), I64
		case t.Int8 != nil:
			dims, td = len(t.Int8), I8
		}
		for _, d := range t.Shape {
			if d < 0 {
				return nil, "", fail("shape %v has a negative dimension", t.Shape)
			}
			if d != 0 && count > math.MaxInt64/int64(d) {
				return nil, "", fail("shape %v has more elements than fit in int64", t.Shape)
			}
			count *= int64(d)
		}
		if count != int64(dims) {
			return nil, "", fail("shape %v has %d elements but the data holds %d", t.Shape, count, dims)
		}
		end := off + count*int64(td.Size())
		h = append(h, ',')
		h = appendJSONString(h, t.Name)
		h = append(h, `:{"dtype":"`...)
		h = append(h, td...)
		h = append(h, `","shape":[`...)
		for i, d := range t.Shape {
			if i > 0 {
				h = append(h, ',')
			}
			h = strconv.AppendInt(h, int64(d), 10)
		}
		h = append(h, `],"data_offsets":[`...)
		h = strconv.AppendInt(h, off, 10)
		h = append(h, ',')
		h = strconv.AppendInt(h, end, 10)
		h = append(h, "]}"...)
		off = end
	}
	h = append(h, '}')
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	head := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(h)), uint64(len(h)))
	return append(head, h...), dtype, nil
}

// encode writes head and then the data of tensors (validated by prepare), float tensors stored
// as dtype, through a buffer of at most 1 MiB.
func encode(w io.Writer, head []byte, tensors []Tensor, dtype DType) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	total := 0
	for _, t := range tensors {
		switch {
		case t.Int64 != nil:
			total += 8 * len(t.Int64)
		case t.Int8 != nil:
			total += len(t.Int8)
		default:
			total += dtype.Size() * len(t.Data)
		}
	}
	bw := &bufWriter{w: w, buf: make([]byte, 0, min(convChunk, total))}
	for _, t := range tensors {
		var err error
		switch {
		case t.Int64 != nil:
			err = bw.put(len(t.Int64), 8, func(b []byte, first int) {
				for j := range len(b) / 8 {
					binary.LittleEndian.PutUint64(b[8*j:], uint64(t.Int64[first+j]))
				}
			})
		case t.Int8 != nil:
			err = bw.put(len(t.Int8), 1, func(b []byte, first int) {
				for j := range b {
					b[j] = byte(t.Int8[first+j])
				}
			})
		case dtype == F32:
			err = bw.put(len(t.Data), 4, func(b []byte, first int) {
				for j := range len(b) / 4 {
					binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(t.Data[first+j]))
				}
			})
		case dtype == F16:
			err = bw.put(len(t.Data), 2, func(b []byte, first int) {
				for j := range len(b) / 2 {
					binary.LittleEndian.PutUint16(b[2*j:], F32ToF16(t.Data[first+j]))
				}
			})
		case dtype == BF16:
			err = bw.put(len(t.Data), 2, func(b []byte, first int) {
				for j := range len(b) / 2 {
					binary.LittleEndian.PutUint16(b[2*j:], F32ToBF16(t.Data[first+j]))
				}
			})
		}
		if err != nil {
			return err
		}
	}
	return bw.flush()
}

// bufWriter gathers encoded elements into buf and writes it out whenever it is full.
type bufWriter struct {
	w   io.Writer
	buf []byte // len: bytes waiting; cap: the buffer size
}

// put encodes n elements of esize bytes each: fill writes the elements starting at index first
// into b, whose length is a multiple of esize.
func (bw *bufWriter) put(n, esize int, fill func(b []byte, first int)) error {
	for i := 0; i < n; {
		free := bw.buf[len(bw.buf):cap(bw.buf)]
		k := min(n-i, len(free)/esize)
		if k == 0 {
			if err := bw.flush(); err != nil {
				return err
			}
			continue
		}
		fill(free[:k*esize], i)
		bw.buf = bw.buf[:len(bw.buf)+k*esize]
		i += k
	}
	return nil
}

func (bw *bufWriter) flush() error {
	if len(bw.buf) == 0 {
		return nil
	}
	_, err := bw.w.Write(bw.buf)
	bw.buf = bw.buf[:0]
	return err
}

// appendJSONString appends s (valid UTF-8) to b as a JSON string. Unlike encoding/json it leaves
// <, > and & as they are, as the reference implementation does.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
