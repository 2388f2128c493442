package tinydatabuild

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unicode/utf8"
)

// This file reads the character vectors of an R data package without R. A package installed with
// LazyData keeps its data sets in a lazy-load database: data/Rdata.rdx, a gzip-compressed RDS
// file holding list(variables = list(name = c(offset, length), ...), references, compressed), and
// data/Rdata.rdb, where each variable is a blob at that offset: a 4-byte big-endian uncompressed
// length, then the compressed serialization (zlib for compressed = TRUE; a one-byte method tag
// then bzip2 or nothing for compressed = 2). The serialization is R's XDR format ("X\n", version
// 2 or 3), as written by serialize.c; only the object types that data sets of vectors use are
// decoded here, and anything else is an error that names the type.

// R object types (SEXPTYPE) and the serialization's special codes, from R's Rinternals.h and
// serialize.c.
const (
	rSYMSXP     = 1
	rLISTSXP    = 2
	rCHARSXP    = 9
	rLGLSXP     = 10
	rINTSXP     = 13
	rREALSXP    = 14
	rSTRSXP     = 16
	rVECSXP     = 19
	rRAWSXP     = 24
	rALTREPSXP  = 238
	rEMPTYENV   = 242
	rBASEENV    = 241
	rGLOBALENV  = 253
	rNILVALUE   = 254
	rREFSXP     = 255
	rUNBOUNDVAL = 252
	rMISSINGARG = 251

	// CHARSXP encoding bits in the "levels" part of the flags.
	rLatin1Mask = 1 << 2

	// maxRVectorLen bounds one vector's length so that a corrupt length cannot allocate without
	// limit; the largest data set here has about 16,000 lines.
	maxRVectorLen = 1 << 22

	// maxRBlob bounds one decompressed lazy-load blob.
	maxRBlob = 1 << 30
)

// RValue is one decoded R object: the field that is set depends on Type.
type RValue struct {
	Type    int
	Strings []RString // STRSXP
	Ints    []int32   // INTSXP, LGLSXP
	Reals   []float64 // REALSXP
	Raw     []byte    // RAWSXP
	Elems   []*RValue // VECSXP; LISTSXP values, in order
	Tags    []string  // LISTSXP tags, parallel to Elems ("" where none)
	Symbol  string    // SYMSXP
	Attrs   *RValue   // a LISTSXP of attributes, or nil
}

// RString is one element of a character vector; NA is a distinct value in R.
type RString struct {
	S  string
	NA bool
}

// Attr returns the attribute with this name, or nil.
func (v *RValue) Attr(name string) *RValue {
	if v == nil || v.Attrs == nil {
		return nil
	}
	for i, t := range v.Attrs.Tags {
		if t == name {
			return v.Attrs.Elems[i]
		}
	}
	return nil
}

// Names returns the names attribute as strings (NA as "NA").
func (v *RValue) Names() []string {
	n := v.Attr("names")
	if n == nil || n.Type != rSTRSXP {
		return nil
	}
	out := make([]string, len(n.Strings))
	for i, s := range n.Strings {
		out[i] = s.S
		if s.NA {
			out[i] = "NA"
		}
	}
	return out
}

// Field returns the element of a named list, or nil.
func (v *RValue) Field(name string) *RValue {
	if v == nil || v.Type != rVECSXP {
		return nil
	}
	for i, n := range v.Names() {
		if n == name && i < len(v.Elems) {
			return v.Elems[i]
		}
	}
	return nil
}

// Unserialize decodes one object in R's XDR serialization format (version 2 or 3).
func Unserialize(data []byte) (*RValue, error) {
	d := &rDecoder{r: bytes.NewReader(data)}
	var magic [2]byte
	if _, err := io.ReadFull(d.r, magic[:]); err != nil {
		return nil, fmt.Errorf("R serialization: header: %w", err)
	}
	if magic != [2]byte{'X', '\n'} {
		return nil, fmt.Errorf("R serialization: format %q is not supported (only XDR \"X\\n\")", magic[:])
	}
	version, err := d.int()
	if err != nil {
		return nil, err
	}
	if _, err := d.int(); err != nil { // the writer's R version
		return nil, err
	}
	if _, err := d.int(); err != nil { // the oldest R version that can read it
		return nil, err
	}
	switch version {
	case 2:
	case 3:
		n, err := d.int()
		if err != nil {
			return nil, err
		}
		if n < 0 || n > 64 {
			return nil, fmt.Errorf("R serialization: native encoding name of %d bytes", n)
		}
		if _, err := d.bytes(int(n)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("R serialization: version %d is not supported (2 or 3)", version)
	}
	v, err := d.item(0)
	if err != nil {
		return nil, fmt.Errorf("R serialization: %w", err)
	}
	return v, nil
}

type rDecoder struct {
	r    *bytes.Reader
	refs []*RValue
}

// maxRDepth bounds nesting so that a corrupt or hostile input cannot exhaust the stack.
const maxRDepth = 256

func (d *rDecoder) int() (int32, error) {
	var b [4]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return 0, fmt.Errorf("truncated at offset %d: %w", d.offset(), err)
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

func (d *rDecoder) offset() int64 { return d.r.Size() - int64(d.r.Len()) }

func (d *rDecoder) bytes(n int) ([]byte, error) {
	if n < 0 || n > d.r.Len() {
		return nil, fmt.Errorf("offset %d: %d bytes wanted, %d left", d.offset(), n, d.r.Len())
	}
	b := make([]byte, n)
	_, err := io.ReadFull(d.r, b)
	return b, err
}

// length reads a vector length, including R's long-vector form (-1, then two 32-bit halves).
func (d *rDecoder) length(elemSize int) (int, error) {
	n, err := d.int()
	if err != nil {
		return 0, err
	}
	l := int64(n)
	if n == -1 {
		hi, err := d.int()
		if err != nil {
			return 0, err
		}
		lo, err := d.int()
		if err != nil {
			return 0, err
		}
		l = int64(uint32(hi))<<32 | int64(uint32(lo))
	} else if n < 0 {
		return 0, fmt.Errorf("offset %d: negative vector length %d", d.offset(), n)
	}
	// Every element takes at least elemSize bytes, so a length the rest cannot hold is corrupt.
	if l < 0 || l > maxRVectorLen || l*int64(elemSize) > int64(d.r.Len()) {
		return 0, fmt.Errorf("offset %d: vector length %d does not fit the %d bytes left", d.offset(), l, d.r.Len())
	}
	return int(l), nil
}

func (d *rDecoder) item(depth int) (*RValue, error) {
	if depth > maxRDepth {
		return nil, fmt.Errorf("offset %d: nested deeper than %d", d.offset(), maxRDepth)
	}
	flags, err := d.int()
	if err != nil {
		return nil, err
	}
	typ := int(flags & 0xFF)
	levels := int(uint32(flags) >> 12)
	hasAttr := flags&(1<<9) != 0
	hasTag := flags&(1<<10) != 0
	switch typ {
	case rNILVALUE:
		return nil, nil
	case rEMPTYENV, rBASEENV, rGLOBALENV, rUNBOUNDVAL, rMISSINGARG:
		return &RValue{Type: typ}, nil
	case rREFSXP:
		idx := int(uint32(flags) >> 8)
		if idx == 0 {
			i, err := d.int()
			if err != nil {
				return nil, err
			}
			idx = int(i)
		}
		if idx < 1 || idx > len(d.refs) {
			return nil, fmt.Errorf("offset %d: reference %d to one of %d earlier objects", d.offset(), idx, len(d.refs))
		}
		return d.refs[idx-1], nil
	case rSYMSXP:
		name, err := d.item(depth + 1)
		if err != nil {
			return nil, err
		}
		if name == nil || name.Type != rCHARSXP || len(name.Strings) != 1 {
			return nil, fmt.Errorf("offset %d: symbol without a name", d.offset())
		}
		v := &RValue{Type: rSYMSXP, Symbol: name.Strings[0].S}
		d.refs = append(d.refs, v)
		return v, nil
	case rLISTSXP:
		return d.pairlist(flags, depth)
	case rCHARSXP:
		n, err := d.int()
		if err != nil {
			return nil, err
		}
		if n == -1 {
			return &RValue{Type: rCHARSXP, Strings: []RString{{NA: true}}}, nil
		}
		b, err := d.bytes(int(n))
		if err != nil {
			return nil, err
		}
		return &RValue{Type: rCHARSXP, Strings: []RString{{S: decodeRChars(b, levels)}}}, nil
	case rALTREPSXP:
		return d.altrep(depth)
	}
	v := &RValue{Type: typ}
	switch typ {
	case rLGLSXP, rINTSXP:
		n, err := d.length(4)
		if err != nil {
			return nil, err
		}
		v.Ints = make([]int32, n)
		for i := range v.Ints {
			if v.Ints[i], err = d.int(); err != nil {
				return nil, err
			}
		}
	case rREALSXP:
		n, err := d.length(8)
		if err != nil {
			return nil, err
		}
		b, err := d.bytes(8 * n)
		if err != nil {
			return nil, err
		}
		v.Reals = make([]float64, n)
		for i := range v.Reals {
			v.Reals[i] = math.Float64frombits(binary.BigEndian.Uint64(b[8*i:]))
		}
	case rSTRSXP:
		n, err := d.length(8)
		if err != nil {
			return nil, err
		}
		v.Strings = make([]RString, n)
		for i := range v.Strings {
			c, err := d.item(depth + 1)
			if err != nil {
				return nil, err
			}
			if c == nil || c.Type != rCHARSXP {
				return nil, fmt.Errorf("offset %d: element %d of a character vector is not a string", d.offset(), i+1)
			}
			v.Strings[i] = c.Strings[0]
		}
	case rVECSXP:
		n, err := d.length(4)
		if err != nil {
			return nil, err
		}
		v.Elems = make([]*RValue, n)
		for i := range v.Elems {
			if v.Elems[i], err = d.item(depth + 1); err != nil {
				return nil, err
			}
		}
	case rRAWSXP:
		n, err := d.length(1)
		if err != nil {
			return nil, err
		}
		if v.Raw, err = d.bytes(n); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("offset %d: R object type %d is not supported by this reader", d.offset(), typ)
	}
	if hasTag {
		return nil, fmt.Errorf("offset %d: tag on a vector of type %d", d.offset(), typ)
	}
	if hasAttr {
		a, err := d.item(depth + 1)
		if err != nil {
			return nil, err
		}
		if a != nil && a.Type != rLISTSXP {
			return nil, fmt.Errorf("offset %d: attributes are type %d, not a pairlist", d.offset(), a.Type)
		}
		v.Attrs = a
	}
	return v, nil
}

// pairlist reads a LISTSXP chain iteratively (R writes the CDR as the next item), so a long
// attribute list costs no stack. flags are those of the first cell, already read.
func (d *rDecoder) pairlist(flags int32, depth int) (*RValue, error) {
	v := &RValue{Type: rLISTSXP}
	for {
		if flags&(1<<9) != 0 {
			a, err := d.item(depth + 1)
			if err != nil {
				return nil, err
			}
			if v.Attrs == nil && a != nil && a.Type == rLISTSXP {
				v.Attrs = a
			}
		}
		tag := ""
		if flags&(1<<10) != 0 {
			t, err := d.item(depth + 1)
			if err != nil {
				return nil, err
			}
			if t != nil && t.Type == rSYMSXP {
				tag = t.Symbol
			}
		}
		car, err := d.item(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, car)
		v.Tags = append(v.Tags, tag)
		if len(v.Elems) > maxRVectorLen {
			return nil, fmt.Errorf("offset %d: pairlist longer than %d", d.offset(), maxRVectorLen)
		}
		if flags, err = d.int(); err != nil {
			return nil, err
		}
		switch flags & 0xFF {
		case rLISTSXP:
			continue
		case rNILVALUE:
			return v, nil
		default:
			return nil, fmt.Errorf("offset %d: pairlist ends in type %d, not NULL", d.offset(), flags&0xFF)
		}
	}
}

// altrep reads the ALTREP classes that can appear in saved vectors: compact integer sequences
// (row names, indices) and the wrapper classes. Others are an error.
func (d *rDecoder) altrep(depth int) (*RValue, error) {
	info, err := d.item(depth + 1)
	if err != nil {
		return nil, err
	}
	state, err := d.item(depth + 1)
	if err != nil {
		return nil, err
	}
	attr, err := d.item(depth + 1)
	if err != nil {
		return nil, err
	}
	if info == nil || info.Type != rLISTSXP || len(info.Elems) == 0 || info.Elems[0] == nil || info.Elems[0].Type != rSYMSXP {
		return nil, fmt.Errorf("offset %d: ALTREP object without a class", d.offset())
	}
	class := info.Elems[0].Symbol
	var v *RValue
	switch class {
	case "compact_intseq":
		if state == nil || state.Type != rREALSXP || len(state.Reals) != 3 {
			return nil, fmt.Errorf("offset %d: compact_intseq state is not c(n, start, step)", d.offset())
		}
		n, start, step := state.Reals[0], state.Reals[1], state.Reals[2]
		if n < 0 || n > maxRVectorLen || n != math.Trunc(n) {
			return nil, fmt.Errorf("offset %d: compact_intseq of length %v", d.offset(), n)
		}
		v = &RValue{Type: rINTSXP, Ints: make([]int32, int(n))}
		for i := range v.Ints {
			v.Ints[i] = int32(start + float64(i)*step)
		}
	case "wrap_integer", "wrap_logical", "wrap_real", "wrap_string", "wrap_list", "wrap_raw":
		if state == nil || state.Type != rVECSXP || len(state.Elems) < 1 || state.Elems[0] == nil {
			return nil, fmt.Errorf("offset %d: %s state is not list(x, meta)", d.offset(), class)
		}
		inner := *state.Elems[0]
		v = &inner
	default:
		return nil, fmt.Errorf("offset %d: ALTREP class %q is not supported by this reader", d.offset(), class)
	}
	if attr != nil {
		if attr.Type != rLISTSXP {
			return nil, fmt.Errorf("offset %d: ALTREP attributes are type %d", d.offset(), attr.Type)
		}
		v.Attrs = attr
	}
	return v, nil
}

// decodeRChars returns a CHARSXP's bytes as UTF-8: latin1-marked strings are converted; UTF-8,
// ASCII, native and "bytes" strings are taken as they are, with invalid bytes replaced by U+FFFD
// so that the result is always valid UTF-8.
func decodeRChars(b []byte, levels int) string {
	if levels&rLatin1Mask != 0 {
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r)
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

// ReadLazyLoadDB reads every variable of an R lazy-load database (the .rdx index and its .rdb
// data, e.g. data/Rdata.rdx and data/Rdata.rdb of an installed package), by name.
func ReadLazyLoadDB(rdxPath, rdbPath string) (map[string]*RValue, error) {
	idx, err := readRDS(rdxPath)
	if err != nil {
		return nil, err
	}
	rdb, err := os.ReadFile(rdbPath)
	if err != nil {
		return nil, err
	}
	vars := idx.Field("variables")
	if vars == nil || vars.Type != rVECSXP {
		return nil, fmt.Errorf("%s: no list of variables", rdxPath)
	}
	method := 1
	if c := idx.Field("compressed"); c != nil && len(c.Ints) == 1 {
		method = int(c.Ints[0])
	} else if c != nil && len(c.Reals) == 1 {
		method = int(c.Reals[0])
	}
	out := make(map[string]*RValue)
	for i, name := range vars.Names() {
		pos := vars.Elems[i]
		var off, n int64
		switch {
		case pos != nil && len(pos.Ints) == 2:
			off, n = int64(pos.Ints[0]), int64(pos.Ints[1])
		case pos != nil && len(pos.Reals) == 2:
			off, n = int64(pos.Reals[0]), int64(pos.Reals[1])
		default:
			return nil, fmt.Errorf("%s: variable %q: position is not c(offset, length)", rdxPath, name)
		}
		if off < 0 || n < 4 || off+n > int64(len(rdb)) {
			return nil, fmt.Errorf("%s: variable %q: bytes %d..%d outside the %d of %s", rdxPath, name, off, off+n, len(rdb), rdbPath)
		}
		raw, err := decompressRBlob(rdb[off:off+n], method)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %q: %w", rdbPath, name, err)
		}
		v, err := Unserialize(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %q: %w", rdbPath, name, err)
		}
		out[name] = v
	}
	return out, nil
}

// readRDS reads an RDS file (saveRDS): gzip-compressed or plain serialization.
func readRDS(path string) (*RValue, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if b, err = io.ReadAll(io.LimitReader(zr, 1<<30)); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	v, err := Unserialize(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// decompressRBlob undoes R_compress1 (method 1: zlib) or R_compress2 (method 2: a tag byte, '2'
// for bzip2, '1' for zlib, '0' for stored). Each blob starts with the uncompressed length.
func decompressRBlob(b []byte, method int) ([]byte, error) {
	want := int64(binary.BigEndian.Uint32(b[:4]))
	if want > maxRBlob {
		return nil, fmt.Errorf("blob of %d bytes, more than %d", want, maxRBlob)
	}
	body := b[4:]
	var r io.Reader
	switch method {
	case 1:
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r = zr
	case 2, 3:
		if len(body) < 1 {
			return nil, errors.New("empty compressed blob")
		}
		switch body[0] {
		case '0':
			r = bytes.NewReader(body[1:])
		case '1':
			zr, err := zlib.NewReader(bytes.NewReader(body[1:]))
			if err != nil {
				return nil, err
			}
			r = zr
		case '2':
			r = bzip2.NewReader(bytes.NewReader(body[1:]))
		default:
			return nil, fmt.Errorf("compression tag %q is not supported (xz needs R itself)", body[0])
		}
	default:
		return nil, fmt.Errorf("compression method %d is not supported", method)
	}
	out, err := io.ReadAll(bufio.NewReader(io.LimitReader(r, want+1)))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) != want {
		return nil, fmt.Errorf("decompressed %d bytes, the header says %d", len(out), want)
	}
	return out, nil
}
