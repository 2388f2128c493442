package hf

// The safetensors format (https://github.com/huggingface/safetensors), as read and written here:
//
//	8 bytes   N, little-endian uint64: the length of the header
//	N bytes   UTF-8 JSON object: {"name": {"dtype": "F32", "shape": [2, 3],
//	          "data_offsets": [begin, end]}, ..., "__metadata__": {"key": "value"}}
//	rest      the data region; begin and end are relative to its start, tensors are stored
//	          little-endian and row-major, and together they cover the region exactly: no
//	          overlaps, no holes, nothing after the last one.

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// DType is a safetensors element type, spelled as in the header ("F32", "BF16", ...).
type DType string

// The element types of the safetensors specification that this package recognises. All of them
// are validated (sizes, offsets); ReadFloat32 converts F32, F16 and BF16, Int64 reads I64 and I32.
const (
	Bool   DType = "BOOL"
	U8     DType = "U8"
	I8     DType = "I8"
	F8E4M3 DType = "F8_E4M3"
	F8E5M2 DType = "F8_E5M2"
	I16    DType = "I16"
	U16    DType = "U16"
	F16    DType = "F16"
	BF16   DType = "BF16"
	I32    DType = "I32"
	U32    DType = "U32"
	F32    DType = "F32"
	F64    DType = "F64"
	I64    DType = "I64"
	U64    DType = "U64"
)

// knownDTypes lists the recognised types in the order error messages show them.
var knownDTypes = []DType{Bool, U8, I8, F8E4M3, F8E5M2, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64}

// Size returns the size in bytes of one element of d, or 0 if d is not a recognised type.
func (d DType) Size() int {
	switch d {
	case Bool, U8, I8, F8E4M3, F8E5M2:
		return 1
	case I16, U16, F16, BF16:
		return 2
	case I32, U32, F32:
		return 4
	case F64, I64, U64:
		return 8
	}
	return 0
}

// maxHeaderSize caps the JSON header; the reference implementation refuses larger ones too. Real
// headers are small: BERT-Large's is about 40 KB.
const maxHeaderSize = 100 << 20

// Reads go through the io.ReaderAt in pieces of at most readChunk bytes: under js/wasm every read
// is staged through a JavaScript buffer of the same size, so one 1.3 GB read would need 1.3 GB
// more. convChunk bounds the staging buffer of converting reads (F16, BF16, I32).
const (
	readChunk = 16 << 20
	convChunk = 1 << 20
)

// littleEndian reports whether the host stores numbers little-endian like safetensors does; then
// F32 and I64 data is read straight into the caller's memory. On a big-endian host the bytes are
// swapped in place after the read.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// TensorInfo describes one tensor of a safetensors file, as its header declares it.
type TensorInfo struct {
	Name  string
	DType DType
	// Shape lists the dimensions, outermost first; empty for a scalar (one element).
	Shape []int
	// Begin and End are the tensor's data_offsets: its bytes are [Begin, End) of the data
	// region, which starts right after the header (at byte 8+N of the file).
	Begin, End int64
}

// NumElements returns the product of the shape (1 for a scalar).
func (ti TensorInfo) NumElements() int {
	n := 1
	for _, d := range ti.Shape {
		n *= d
	}
	return n
}

// FormatError reports a file that is not valid safetensors. Its message names the file (when
// known), the tensor (when the problem is one tensor's) and what is wrong.
type FormatError struct {
	File    string // the path given to Open, or the name given to NewReader; may be empty
	Tensor  string // the tensor concerned; empty for problems of the file as a whole
	Problem string
}

func (e *FormatError) Error() string {
	return prefix(e.File, e.Tensor) + e.Problem
}

// prefix starts every error message of this package: "checkpoint FILE: tensor "NAME": ".
func prefix(file, tensor string) string {
	var b strings.Builder
	b.WriteString("checkpoint")
	if file != "" {
		b.WriteString(" " + file)
	}
	b.WriteString(": ")
	if tensor != "" {
		b.WriteString("tensor " + strconv.Quote(tensor) + ": ")
	}
	return b.String()
}

// File is an open safetensors file whose header has been read and validated; tensor data is read
// on demand. Its methods may be called from several goroutines at once.
type File struct {
	r       io.ReaderAt
	closer  io.Closer // the *os.File that Open opened; nil for NewReader
	name    string
	dataOff int64          // where the data region starts in the file: 8 + header length
	infos   []TensorInfo   // in file order: ascending Begin
	index   map[string]int // name -> position in infos
	meta    map[string]string
}

// Open opens the safetensors file at path and reads and validates its header; no tensor data is
// read until asked for. Close the File when done.
func Open(path string) (*File, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	st, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	f, err := NewReader(osf, st.Size(), path)
	if err != nil {
		osf.Close()
		return nil, err
	}
	f.closer = osf
	return f, nil
}

// NewReader reads and validates the header of the safetensors data of the given size in r (a
// file, or a bytes.Reader in the browser). name is used in error messages only and may be empty.
// r must stay readable while the File is used; Close does not close it.
//
// Nothing is allocated from a header value before it has been checked against size: the header
// buffer is at most min(size, 100 MiB), and every tensor must fit in the data region, so a
// lying header cannot make the reader allocate much more than the data itself.
func NewReader(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{r: r, name: name}
	fail := func(format string, args ...any) error {
		return &FormatError{File: name, Problem: fmt.Sprintf(format, args...)}
	}
	if size < 8 {
		return nil, fail("file is %d bytes, shorter than the 8-byte header length (truncated?)", size)
	}
	var lenBuf [8]byte
	if err := readFull(r, lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("%sreading header length: %w", prefix(name, ""), err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(size-8) {
		return nil, fail("header length %d is larger than the %d bytes that follow it (truncated, or not a safetensors file?)", n, size-8)
	}
	if n > maxHeaderSize {
		return nil, fail("header length %d exceeds the limit of %d bytes (100 MiB)", n, maxHeaderSize)
	}
	hdr := make([]byte, n)
	if err := readFull(r, hdr, 8); err != nil {
		return nil, fmt.Errorf("%sreading header: %w", prefix(name, ""), err)
	}
	f.dataOff = 8 + int64(n)
	infos, meta, err := parseHeader(hdr, size-f.dataOff)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.File = name
		}
		return nil, err
	}
	f.infos, f.meta = infos, meta
	f.index = make(map[string]int, len(infos))
	for i, ti := range infos {
		f.index[ti.Name] = i
	}
	return f, nil
}

// Close closes the file opened by Open. For a File from NewReader it does nothing.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// Names returns the tensor names in file order: by ascending data offset, so reading the tensors
// in this order reads the file front to back. The slice is the caller's.
func (f *File) Names() []string {
	names := make([]string, len(f.infos))
	for i, ti := range f.infos {
		names[i] = ti.Name
	}
	return names
}

// Info returns the header entry of the named tensor, and whether there is one. The Shape slice is
// a copy.
func (f *File) Info(name string) (TensorInfo, bool) {
	i, ok := f.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	ti := f.infos[i]
	ti.Shape = slices.Clone(ti.Shape)
	return ti, true
}

// Metadata returns a copy of the header's "__metadata__" map (empty when the file has none).
func (f *File) Metadata() map[string]string {
	m := make(map[string]string, len(f.meta))
	for k, v := range f.meta {
		m[k] = v
	}
	return m
}

// lookup returns the entry of the named tensor, or an error naming it.
func (f *File) lookup(name string) (*TensorInfo, error) {
	i, ok := f.index[name]
	if !ok {
		return nil, fmt.Errorf("%stensor %q not found", prefix(f.name, ""), name)
	}
	return &f.infos[i], nil
}

// ReadFloat32 reads the named tensor into dst, whose length must equal the tensor's element count
// (row-major: dst[i] is element i of the flattened shape). F32 data is read straight into dst's
// memory viewed as bytes, with no intermediate buffer, so loading a model needs about the memory
// of its weights (on a big-endian host the bytes are then swapped in place); F16 and BF16 are
// converted exactly through a bounded (1 MiB) buffer. Other dtypes are an error. On error dst
// may be partly written.
func (f *File) ReadFloat32(name string, dst []float32) error {
	ti, err := f.lookup(name)
	if err != nil {
		return err
	}
	if n := ti.NumElements(); len(dst) != n {
		return fmt.Errorf("%sdestination holds %d float32 values, the tensor has %d (shape %v)", prefix(f.name, name), len(dst), n, ti.Shape)
	}
	off := f.dataOff + ti.Begin
	switch ti.DType {
	case F32:
		err = readFull(f.r, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst)), off)
		if err == nil && !littleEndian {
			for i, v := range dst {
				dst[i] = math.Float32frombits(bits.ReverseBytes32(math.Float32bits(v)))
			}
		}
	case F16:
		err = f.convert(ti, 2, len(dst), func(b []byte, i int) { f16ToF32s(dst[i:i+len(b)/2], b) })
	case BF16:
		err = f.convert(ti, 2, len(dst), func(b []byte, i int) { bf16ToF32s(dst[i:i+len(b)/2], b) })
	default:
		return fmt.Errorf("%sdtype %s cannot be read as float32 (F32, F16 and BF16 can)", prefix(f.name, name), ti.DType)
	}
	if err != nil {
		return fmt.Errorf("%sreading data: %w", prefix(f.name, name), err)
	}
	return nil
}

// Float32 reads the named F32, F16 or BF16 tensor into a new slice and returns it with its shape.
func (f *File) Float32(name string) ([]float32, []int, error) {
	ti, err := f.lookup(name)
	if err != nil {
		return nil, nil, err
	}
	if ti.DType != F32 && ti.DType != F16 && ti.DType != BF16 {
		// Checked before allocating, so that the error costs nothing.
		return nil, nil, fmt.Errorf("%sdtype %s cannot be read as float32 (F32, F16 and BF16 can)", prefix(f.name, name), ti.DType)
	}
	dst := make([]float32, ti.NumElements())
	if err := f.ReadFloat32(name, dst); err != nil {
		return nil, nil, err
	}
	return dst, slices.Clone(ti.Shape), nil
}

// Int64 reads the named I64 tensor (or I32 tensor, widened) into a new slice and returns it with
// its shape; for integer inputs such as input_ids [B, S] and labels.
func (f *File) Int64(name string) ([]int64, []int, error) {
	ti, err := f.lookup(name)
	if err != nil {
		return nil, nil, err
	}
	var dst []int64
	switch ti.DType {
	case I64:
		dst = make([]int64, ti.NumElements())
		err = readFull(f.r, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 8*len(dst)), f.dataOff+ti.Begin)
		if err == nil && !littleEndian {
			for i, v := range dst {
				dst[i] = int64(bits.ReverseBytes64(uint64(v)))
			}
		}
	case I32:
		dst = make([]int64, ti.NumElements())
		err = f.convert(ti, 4, len(dst), func(b []byte, i int) {
			for j := range len(b) / 4 {
				dst[i+j] = int64(int32(binary.LittleEndian.Uint32(b[4*j:])))
			}
		})
	default:
		return nil, nil, fmt.Errorf("%sdtype %s cannot be read as int64 (I64 and I32 can)", prefix(f.name, name), ti.DType)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%sreading data: %w", prefix(f.name, name), err)
	}
	return dst, slices.Clone(ti.Shape), nil
}

// Int8 reads the named I8 tensor into a new slice and returns it with its shape; for the
// quantized values of a delta file (ApplyDelta).
func (f *File) Int8(name string) ([]int8, []int, error) {
	ti, err := f.lookup(name)
	if err != nil {
		return nil, nil, err
	}
	if ti.DType != I8 {
		return nil, nil, fmt.Errorf("%sdtype %s cannot be read as int8 (I8 can)", prefix(f.name, name), ti.DType)
	}
	dst := make([]int8, ti.NumElements())
	if err := readFull(f.r, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)), f.dataOff+ti.Begin); err != nil {
		return nil, nil, fmt.Errorf("%sreading data: %w", prefix(f.name, name), err)
	}
	return dst, slices.Clone(ti.Shape), nil
}

// convert reads the n elements of size esize of tensor ti in pieces of at most convChunk bytes and
// hands each piece to put with the index of its first element.
func (f *File) convert(ti *TensorInfo, esize, n int, put func(b []byte, first int)) error {
	buf := make([]byte, min(convChunk, n*esize))
	off := f.dataOff + ti.Begin
	for i := 0; i < n; {
		k := min(n-i, len(buf)/esize)
		b := buf[:k*esize]
		if err := readFull(f.r, b, off); err != nil {
			return err
		}
		put(b, i)
		i += k
		off += int64(len(b))
	}
	return nil
}

// readFull fills p from r at off, in reads of at most readChunk bytes. Data that ends early (a
// file that shrank after its header was read) is io.ErrUnexpectedEOF.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	for len(p) > 0 {
		n := min(len(p), readChunk)
		m, err := r.ReadAt(p[:n], off)
		if m == n {
			err = nil // ReaderAt may report io.EOF along with a full read that ends at EOF
		} else if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		p = p[n:]
		off += int64(n)
	}
	return nil
}

// parseHeader parses and validates the JSON header hdr of a file whose data region is dataLen
// bytes. It returns the tensors in file order (ascending offsets) and the metadata. Errors are
// *FormatError without File.
func parseHeader(hdr []byte, dataLen int64) ([]TensorInfo, map[string]string, error) {
	fail := func(tensor, format string, args ...any) error {
		return &FormatError{Tensor: tensor, Problem: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(hdr) {
		i := 0
		for i < len(hdr) {
			r, size := utf8.DecodeRune(hdr[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return nil, nil, fail("", "header is not valid UTF-8 (bad byte at header offset %d)", i)
	}
	p := &headerParser{dec: json.NewDecoder(bytes.NewReader(hdr))}
	p.dec.UseNumber()
	if err := p.delim('{', "the header"); err != nil {
		return nil, nil, fail("", "%v", err)
	}
	var infos []TensorInfo
	var meta map[string]string
	seen := make(map[string]bool)
	for p.dec.More() {
		name, err := p.key()
		if err != nil {
			return nil, nil, fail("", "%v", err)
		}
		if seen[name] {
			return nil, nil, fail(name, "appears twice in the header (duplicate key)")
		}
		seen[name] = true
		if name == "__metadata__" {
			if meta, err = p.metadata(); err != nil {
				return nil, nil, fail("", "__metadata__: %v", err)
			}
			continue
		}
		ti, err := p.tensor(name)
		if err != nil {
			return nil, nil, fail(name, "%v", err)
		}
		if err := checkTensor(&ti, dataLen); err != nil {
			return nil, nil, fail(name, "%v", err)
		}
		infos = append(infos, ti)
	}
	if err := p.delim('}', "the header"); err != nil {
		return nil, nil, fail("", "%v", err)
	}
	if tok, err := p.dec.Token(); err != io.EOF {
		if err != nil {
			return nil, nil, fail("", "header is not valid JSON after its closing brace: %v", err)
		}
		return nil, nil, fail("", "header has data after its JSON object (%v)", tok)
	}
	if err := checkLayout(infos, dataLen); err != nil {
		return nil, nil, err
	}
	return infos, meta, nil
}

// checkTensor validates one header entry on its own: a known dtype, a shape whose byte size fits
// in int64 and equals end-begin, and offsets inside the data region.
func checkTensor(ti *TensorInfo, dataLen int64) error {
	size := ti.DType.Size()
	if size == 0 {
		known := make([]string, len(knownDTypes))
		for i, d := range knownDTypes {
			known[i] = string(d)
		}
		return fmt.Errorf("unknown dtype %q (known: %s)", ti.DType, strings.Join(known, ", "))
	}
	if ti.End < ti.Begin {
		return fmt.Errorf("data_offsets [%d,%d] end before they begin", ti.Begin, ti.End)
	}
	// Any zero dimension makes the tensor empty, whatever the others say.
	count := int64(1)
	if !slices.Contains(ti.Shape, 0) {
		for _, d := range ti.Shape {
			if count > math.MaxInt64/int64(d) {
				return fmt.Errorf("shape %v has more elements than fit in int64", ti.Shape)
			}
			count *= int64(d)
		}
	} else {
		count = 0
	}
	if count > math.MaxInt64/int64(size) {
		return fmt.Errorf("shape %v of %s is more bytes than fit in int64", ti.Shape, ti.DType)
	}
	if nbytes := count * int64(size); ti.End-ti.Begin != nbytes {
		return fmt.Errorf("shape %v of %s is %d bytes but data_offsets [%d,%d] span %d bytes", ti.Shape, ti.DType, nbytes, ti.Begin, ti.End, ti.End-ti.Begin)
	}
	if ti.End > dataLen {
		return fmt.Errorf("data_offsets [%d,%d] run past the end of the %d-byte data region (truncated file?)", ti.Begin, ti.End, dataLen)
	}
	return nil
}

// checkLayout sorts infos into file order and checks that they tile the data region [0, dataLen)
// exactly, as the specification requires: no overlap, no hole, no bytes after the last tensor.
func checkLayout(infos []TensorInfo, dataLen int64) error {
	slices.SortStableFunc(infos, func(a, b TensorInfo) int {
		return cmp.Or(cmp.Compare(a.Begin, b.Begin), cmp.Compare(a.End, b.End))
	})
	pos := int64(0)
	for i, ti := range infos {
		switch {
		case ti.Begin < pos:
			prev := infos[i-1]
			return &FormatError{Tensor: ti.Name, Problem: fmt.Sprintf("data_offsets [%d,%d] overlap tensor %q [%d,%d]", ti.Begin, ti.End, prev.Name, prev.Begin, prev.End)}
		case ti.Begin > pos:
			return &FormatError{Tensor: ti.Name, Problem: fmt.Sprintf("hole in the data region: bytes [%d,%d) before this tensor belong to no tensor (safetensors requires the tensors to cover the data region contiguously)", pos, ti.Begin)}
		}
		pos = ti.End
	}
	if pos != dataLen {
		return &FormatError{Problem: fmt.Sprintf("%d trailing bytes after the last tensor: the data region is %d bytes, the tensors cover %d (safetensors requires them to cover it exactly)", dataLen-pos, dataLen, pos)}
	}
	return nil
}

// headerParser walks the header with json.Decoder's tokens, which lets it reject duplicate keys
// and non-string metadata that decoding into maps would silently accept.
type headerParser struct {
	dec *json.Decoder
}

// delim consumes the delimiter want, the start or end of what.
func (p *headerParser) delim(want json.Delim, what string) error {
	tok, err := p.dec.Token()
	if err != nil {
		return fmt.Errorf("header is not valid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("%s: expected %q, found %s", what, want, describe(tok))
	}
	return nil
}

// key consumes an object key.
func (p *headerParser) key() (string, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return "", fmt.Errorf("header is not valid JSON: %v", err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("header is not valid JSON: expected a key, found %s", describe(tok))
	}
	return s, nil
}

// metadata consumes the value of "__metadata__": an object of strings, or null.
func (p *headerParser) metadata() (map[string]string, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, fmt.Errorf("header is not valid JSON: %v", err)
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected an object of strings, found %s", describe(tok))
	}
	meta := make(map[string]string)
	for p.dec.More() {
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		if _, dup := meta[k]; dup {
			return nil, fmt.Errorf("key %q appears twice (duplicate key)", k)
		}
		tok, err := p.dec.Token()
		if err != nil {
			return nil, fmt.Errorf("header is not valid JSON: %v", err)
		}
		v, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("value of %q is %s, but metadata values must be strings", k, describe(tok))
		}
		meta[k] = v
	}
	return meta, p.delim('}', "__metadata__")
}

// tensor consumes one tensor entry. Keys other than dtype, shape and data_offsets are skipped, as
// the reference implementation skips them; a repeated key is an error.
func (p *headerParser) tensor(name string) (TensorInfo, error) {
	ti := TensorInfo{Name: name}
	if err := p.delim('{', "tensor entry"); err != nil {
		return ti, err
	}
	var haveDType, haveShape, haveOffsets bool
	for p.dec.More() {
		k, err := p.key()
		if err != nil {
			return ti, err
		}
		var dup bool
		switch k {
		case "dtype":
			dup, haveDType = haveDType, true
			tok, err := p.dec.Token()
			if err != nil {
				return ti, fmt.Errorf("header is not valid JSON: %v", err)
			}
			s, ok := tok.(string)
			if !ok {
				return ti, fmt.Errorf("dtype is %s, expected a string", describe(tok))
			}
			ti.DType = DType(s)
		case "shape":
			dup, haveShape = haveShape, true
			dims, err := p.ints("shape")
			if err != nil {
				return ti, err
			}
			ti.Shape = make([]int, len(dims))
			for i, d := range dims {
				ti.Shape[i] = int(d)
				if int64(ti.Shape[i]) != d { // only on 32-bit hosts
					return ti, fmt.Errorf("shape %v: dimension %d does not fit in int", dims, d)
				}
			}
		case "data_offsets":
			dup, haveOffsets = haveOffsets, true
			offs, err := p.ints("data_offsets")
			if err != nil {
				return ti, err
			}
			if len(offs) != 2 {
				return ti, fmt.Errorf("data_offsets %v must hold exactly two numbers [begin, end]", offs)
			}
			ti.Begin, ti.End = offs[0], offs[1]
		default:
			var skip json.RawMessage
			if err := p.dec.Decode(&skip); err != nil {
				return ti, fmt.Errorf("header is not valid JSON: %v", err)
			}
		}
		if dup {
			return ti, fmt.Errorf("key %q appears twice in the entry (duplicate key)", k)
		}
	}
	if err := p.delim('}', "tensor entry"); err != nil {
		return ti, err
	}
	switch {
	case !haveDType:
		return ti, errors.New("entry has no dtype")
	case !haveShape:
		return ti, errors.New("entry has no shape")
	case !haveOffsets:
		return ti, errors.New("entry has no data_offsets")
	}
	return ti, nil
}

// ints consumes an array of non-negative integers, the value of key.
func (p *headerParser) ints(key string) ([]int64, error) {
	if err := p.delim('[', key); err != nil {
		return nil, err
	}
	var out []int64
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, fmt.Errorf("header is not valid JSON: %v", err)
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s holds %s, expected non-negative integers", key, describe(tok))
		}
		v, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s holds %s, expected non-negative integers below 2^63", key, num)
		}
		out = append(out, v)
	}
	return out, p.delim(']', key)
}

// describe names a JSON token for an error message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		switch v {
		case '{', '}':
			return "an object"
		case '[', ']':
			return "an array"
		}
	case string:
		return "the string " + strconv.Quote(v)
	case json.Number:
		return "the number " + string(v)
	case bool:
		return "the boolean " + strconv.FormatBool(v)
	}
	return fmt.Sprint(tok)
}
