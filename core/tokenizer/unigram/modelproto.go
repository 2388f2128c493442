package unigram

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// PieceType is the type of a SentencePiece piece (sentencepiece_model.proto's
// SentencePiece.Type).
type PieceType int

// The piece types of sentencepiece_model.proto.
const (
	Normal      PieceType = 1
	Unknown     PieceType = 2
	Control     PieceType = 3
	UserDefined PieceType = 4
	Unused      PieceType = 5
	Byte        PieceType = 6
)

// Piece is one vocabulary entry of a SentencePiece model: its text, its
// log-probability and its type.
type Piece struct {
	Piece string
	Score float32
	Type  PieceType
}

// NormalizerSpec is the part of sentencepiece's NormalizerSpec that the
// tokenizer uses.
type NormalizerSpec struct {
	// Name is the rule's name, e.g. "nmt_nfkc" or "identity".
	Name string
	// PrecompiledCharsmap is the rule compiled into a double-array trie and
	// the strings it maps to (see Charsmap).
	PrecompiledCharsmap []byte
	// AddDummyPrefix puts "▁" before the text; RemoveExtraWhitespaces drops
	// leading and trailing spaces and squeezes runs of them;
	// EscapeWhitespaces writes spaces as "▁". All three default to true.
	AddDummyPrefix, RemoveExtraWhitespaces, EscapeWhitespaces bool
}

// ModelProto is what the tokenizer reads of a SentencePiece .model file
// (sentencepiece_model.proto's ModelProto).
type ModelProto struct {
	Pieces []Piece
	// ModelType is TrainerSpec.model_type: 1 UNIGRAM (the default), 2 BPE,
	// 3 WORD, 4 CHAR.
	ModelType int
	// ByteFallback is TrainerSpec.byte_fallback: characters without a piece
	// become <0xNN> byte pieces instead of <unk>.
	ByteFallback bool
	Normalizer   NormalizerSpec
}

// Limits on what ParseModelProto accepts, so that a hostile file cannot make
// it allocate without bound.
const (
	// MaxModelBytes is the largest .model file accepted.
	MaxModelBytes = 64 << 20
	// MaxPieces is the largest vocabulary accepted.
	MaxPieces = 1 << 21
	// MaxPieceBytes is the longest piece accepted.
	MaxPieceBytes = 1 << 10
)

var errTruncated = errors.New("truncated")

// pbReader reads protobuf wire format: just the wire types this file uses.
type pbReader struct {
	b   []byte
	pos int
}

func (r *pbReader) varint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		if n == 0 {
			return 0, errTruncated
		}
		return 0, errors.New("varint overflows 64 bits")
	}
	r.pos += n
	return v, nil
}

// field reads one field: its number, wire type, and value (varint or
// fixed32/fixed64 in num, bytes in data).
func (r *pbReader) field() (field int, wire int, num uint64, data []byte, err error) {
	key, err := r.varint()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	field, wire = int(key>>3), int(key&7)
	if field <= 0 || key>>3 > math.MaxInt32 {
		return 0, 0, 0, nil, fmt.Errorf("bad field number %d", key>>3)
	}
	switch wire {
	case 0:
		num, err = r.varint()
	case 1:
		if len(r.b)-r.pos < 8 {
			return 0, 0, 0, nil, errTruncated
		}
		num = binary.LittleEndian.Uint64(r.b[r.pos:])
		r.pos += 8
	case 5:
		if len(r.b)-r.pos < 4 {
			return 0, 0, 0, nil, errTruncated
		}
		num = uint64(binary.LittleEndian.Uint32(r.b[r.pos:]))
		r.pos += 4
	case 2:
		var n uint64
		n, err = r.varint()
		if err == nil && n > uint64(len(r.b)-r.pos) {
			err = errTruncated
		}
		if err == nil {
			data = r.b[r.pos : r.pos+int(n)]
			r.pos += int(n)
		}
	default:
		err = fmt.Errorf("field %d: unsupported wire type %d", field, wire)
	}
	return field, wire, num, data, err
}

func (r *pbReader) more() bool { return r.pos < len(r.b) }

// ParseModelProto reads a SentencePiece .model file (a serialised ModelProto).
// Fields it does not use are skipped. The model must be a Unigram model.
func ParseModelProto(b []byte) (*ModelProto, error) {
	if len(b) > MaxModelBytes {
		return nil, fmt.Errorf("sentencepiece model: %d bytes, more than the %d accepted", len(b), MaxModelBytes)
	}
	m := &ModelProto{ModelType: 1, Normalizer: NormalizerSpec{AddDummyPrefix: true, RemoveExtraWhitespaces: true, EscapeWhitespaces: true}}
	r := &pbReader{b: b}
	for r.more() {
		f, w, _, data, err := r.field()
		if err != nil {
			return nil, fmt.Errorf("sentencepiece model: ModelProto: %w", err)
		}
		switch {
		case f == 1 && w == 2:
			if len(m.Pieces) >= MaxPieces {
				return nil, fmt.Errorf("sentencepiece model: more than %d pieces", MaxPieces)
			}
			p, err := parsePiece(data)
			if err != nil {
				return nil, fmt.Errorf("sentencepiece model: piece %d: %w", len(m.Pieces), err)
			}
			m.Pieces = append(m.Pieces, p)
		case f == 2 && w == 2:
			if err := m.parseTrainerSpec(data); err != nil {
				return nil, fmt.Errorf("sentencepiece model: trainer_spec: %w", err)
			}
		case f == 3 && w == 2:
			if err := m.Normalizer.parse(data); err != nil {
				return nil, fmt.Errorf("sentencepiece model: normalizer_spec: %w", err)
			}
		case f <= 3:
			return nil, fmt.Errorf("sentencepiece model: ModelProto field %d: wire type %d, want 2", f, w)
		}
	}
	if m.ModelType != 1 {
		names := map[int]string{2: "BPE", 3: "WORD", 4: "CHAR"}
		name := names[m.ModelType]
		if name == "" {
			name = fmt.Sprint(m.ModelType)
		}
		return nil, fmt.Errorf("sentencepiece model: trainer_spec.model_type is %s; only UNIGRAM models are supported", name)
	}
	if len(m.Pieces) == 0 {
		return nil, errors.New("sentencepiece model: no pieces")
	}
	return m, nil
}

func parsePiece(b []byte) (Piece, error) {
	p := Piece{Type: Normal}
	r := &pbReader{b: b}
	for r.more() {
		f, w, num, data, err := r.field()
		if err != nil {
			return p, err
		}
		switch {
		case f == 1 && w == 2:
			if len(data) > MaxPieceBytes {
				return p, fmt.Errorf("piece of %d bytes, more than %d", len(data), MaxPieceBytes)
			}
			if !utf8.Valid(data) {
				return p, fmt.Errorf("piece %q is not UTF-8", data)
			}
			p.Piece = string(data)
		case f == 2 && w == 5:
			p.Score = math.Float32frombits(uint32(num))
			if math.IsNaN(float64(p.Score)) {
				return p, fmt.Errorf("piece %q: score is NaN", p.Piece)
			}
		case f == 3 && w == 0:
			if num < 1 || num > 6 {
				return p, fmt.Errorf("piece %q: unknown type %d", p.Piece, num)
			}
			p.Type = PieceType(num)
		case f <= 3:
			return p, fmt.Errorf("field %d: wire type %d unexpected", f, w)
		}
	}
	return p, nil
}

func (m *ModelProto) parseTrainerSpec(b []byte) error {
	r := &pbReader{b: b}
	for r.more() {
		f, w, num, _, err := r.field()
		if err != nil {
			return err
		}
		switch {
		case f == 3 && w == 0:
			m.ModelType = int(min(num, math.MaxInt32))
		case f == 35 && w == 0:
			m.ByteFallback = num != 0
		}
	}
	return nil
}

func (n *NormalizerSpec) parse(b []byte) error {
	r := &pbReader{b: b}
	for r.more() {
		f, w, num, data, err := r.field()
		if err != nil {
			return err
		}
		switch {
		case f == 1 && w == 2:
			n.Name = string(data)
		case f == 2 && w == 2:
			n.PrecompiledCharsmap = append([]byte(nil), data...)
		case f == 3 && w == 0:
			n.AddDummyPrefix = num != 0
		case f == 4 && w == 0:
			n.RemoveExtraWhitespaces = num != 0
		case f == 5 && w == 0:
			n.EscapeWhitespaces = num != 0
		}
	}
	return nil
}

// Marshal writes m as a .model file that ParseModelProto (and sentencepiece)
// reads back: the pieces, trainer_spec's model_type and byte_fallback, and
// the normalizer_spec.
func (m *ModelProto) Marshal() []byte {
	var out []byte
	for _, p := range m.Pieces {
		var pb []byte
		pb = appendBytes(pb, 1, []byte(p.Piece))
		pb = binary.AppendUvarint(pb, 2<<3|5)
		pb = binary.LittleEndian.AppendUint32(pb, math.Float32bits(p.Score))
		pb = appendVarint(pb, 3, uint64(p.Type))
		out = appendBytes(out, 1, pb)
	}
	var ts []byte
	ts = appendVarint(ts, 3, uint64(m.ModelType))
	if m.ByteFallback {
		ts = appendVarint(ts, 35, 1)
	}
	out = appendBytes(out, 2, ts)
	var ns []byte
	ns = appendBytes(ns, 1, []byte(m.Normalizer.Name))
	if len(m.Normalizer.PrecompiledCharsmap) > 0 {
		ns = appendBytes(ns, 2, m.Normalizer.PrecompiledCharsmap)
	}
	ns = appendVarint(ns, 3, b2u(m.Normalizer.AddDummyPrefix))
	ns = appendVarint(ns, 4, b2u(m.Normalizer.RemoveExtraWhitespaces))
	ns = appendVarint(ns, 5, b2u(m.Normalizer.EscapeWhitespaces))
	return appendBytes(out, 3, ns)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func appendVarint(b []byte, field int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3)
	return binary.AppendUvarint(b, v)
}

func appendBytes(b []byte, field int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}
