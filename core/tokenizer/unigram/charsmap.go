package unigram

import (
	"encoding/binary"
	"fmt"
)

// Charsmap is sentencepiece's precompiled normalisation rule
// (NormalizerSpec.precompiled_charsmap): a darts-clone double-array trie over
// UTF-8 byte strings whose values are offsets into a blob of NUL-terminated
// replacement strings. The blob is [u32 little-endian size of the trie in
// bytes][trie units, u32 each][replacement strings].
type Charsmap struct {
	units      []uint32
	normalized []byte
}

// ParseCharsmap reads a precompiled charsmap.
func ParseCharsmap(b []byte) (*Charsmap, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("precompiled_charsmap: %d bytes, too short", len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	if n%4 != 0 || uint64(n) > uint64(len(b)-4) {
		return nil, fmt.Errorf("precompiled_charsmap: trie of %d bytes in a blob of %d", n, len(b))
	}
	c := &Charsmap{units: make([]uint32, n/4), normalized: b[4+n:]}
	for i := range c.units {
		c.units[i] = binary.LittleEndian.Uint32(b[4+4*i:])
	}
	return c, nil
}

func unitOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }
func unitLabel(u uint32) uint32  { return u & ((1 << 31) | 0xff) }
func unitHasLeaf(u uint32) bool  { return (u>>8)&1 == 1 }
func unitValue(u uint32) uint32  { return u & ((1 << 31) - 1) }

// firstMatch returns the value of the shortest key that is a prefix of key
// (darts-clone's commonPrefixSearch, first result), as HuggingFace's
// spm_precompiled uses it.
func (c *Charsmap) firstMatch(key string) (uint32, bool) {
	if len(c.units) == 0 {
		return 0, false
	}
	pos := uint32(0)
	unit := c.units[0]
	pos ^= unitOffset(unit)
	for i := 0; i < len(key) && key[i] != 0; i++ {
		pos ^= uint32(key[i])
		if pos >= uint32(len(c.units)) {
			return 0, false
		}
		unit = c.units[pos]
		if unitLabel(unit) != uint32(key[i]) {
			return 0, false
		}
		pos ^= unitOffset(unit)
		if unitHasLeaf(unit) {
			if pos >= uint32(len(c.units)) {
				return 0, false
			}
			return unitValue(c.units[pos]), true
		}
	}
	return 0, false
}

// Transform returns the replacement of chunk, if the rule has one: the string
// of the shortest rule key that chunk starts with.
func (c *Charsmap) Transform(chunk string) (string, bool) {
	v, ok := c.firstMatch(chunk)
	if !ok || uint64(v) > uint64(len(c.normalized)) {
		return "", false
	}
	end := int(v)
	for end < len(c.normalized) && c.normalized[end] != 0 {
		end++
	}
	return string(c.normalized[v:end]), true
}
