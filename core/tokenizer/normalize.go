package tokenizer

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nchar is one character of normalised text and the bytes [start, end) of the
// original text it came from. Characters that one original character expands
// into (NFD, lowercasing of U+0130) all point at that character.
type nchar struct {
	r          rune
	start, end int
}

// isRemoved reports whether BertNormalizer's text cleaning removes r: NUL,
// U+FFFD and "control" characters (categories Cc, Cf and Co) except tab,
// newline and carriage return. Categories are those of the tokenizers
// library's tables (tables.go), not Go's.
func isRemoved(r rune) bool {
	if r < 0x80 {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
	}
	return unicode.Is(hfRemoved, r)
}

// isWhitespace is Rust's char::is_whitespace (the White_Space property),
// which unicode.IsSpace implements.
func isWhitespace(r rune) bool {
	if r < 0x80 {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.IsSpace(r)
}

// isPunctuation is BERT's _is_punctuation: all non-alphanumeric printable
// ASCII (so "$", "+", "^" count) and category P of the tokenizers library's
// tables.
func isPunctuation(r rune) bool {
	if r < 0x80 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.Is(hfPunctuation, r)
}

// isChineseChar reports whether r is in the CJK ideograph blocks that
// BertNormalizer splits into single-character words. The ranges are those of
// the HuggingFace Rust library (its Extension E range starts at U+2B920,
// where Python's has U+2B820).
func isChineseChar(r rune) bool {
	switch {
	case r < 0x3400:
		return false
	case r >= 0x4E00 && r <= 0x9FFF,
		r >= 0x3400 && r <= 0x4DBF,
		r >= 0x20000 && r <= 0x2A6DF,
		r >= 0x2A700 && r <= 0x2B73F,
		r >= 0x2B740 && r <= 0x2B81F,
		r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// normalizer applies BertNormalizer to spans of text. It owns scratch
// buffers, so one normalizer serves one goroutine.
type normalizer struct {
	lower, strip, chinese bool

	a, b []nchar
	dec  []byte
	ds   []decomposed
}

// normalize returns the normalised characters of s, whose first byte is at
// offset base of the original text. In the order of BertNormalizer: clean
// (drop NUL, U+FFFD and controls; whitespace becomes ' '), surround CJK
// ideographs with spaces, strip accents, lowercase. The result is valid until
// the next call.
func (n *normalizer) normalize(s string, base int) []nchar {
	out := n.a[:0]
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := nchar{r, base + i, base + i + size}
		i += size
		switch {
		case isRemoved(r):
			continue
		case isWhitespace(r):
			c.r = ' '
		case n.chinese && isChineseChar(r):
			out = append(out, nchar{' ', c.start, c.end}, c, nchar{' ', c.start, c.end})
			continue
		}
		out = append(out, c)
	}
	n.a = out
	if n.strip {
		out = n.stripAccents(out)
	}
	if n.lower {
		out = n.lowercase(out)
	}
	return out
}

// stripAccents decomposes to NFD and drops nonspacing marks (category Mn of
// the tokenizers library's tables).
//
// Each character is decomposed on its own with x/text/unicode/norm, then
// combining marks are put in canonical order across the whole text: together
// that is NFD. Decomposing whole strings with norm instead would insert
// U+034F after 30 consecutive combining marks (its stream-safe format), and
// would lose which original character each output character came from.
//
// Spans follow the tokenizers library: the first character of a
// decomposition takes the span of the next original character in order, and
// the others share the span of the original character taken last, even when
// canonical ordering moved them.
func (n *normalizer) stripAccents(in []nchar) []nchar {
	ds := n.ds[:0]
	var buf [utf8.UTFMax]byte
	for _, c := range in {
		// Nothing below U+00C0 has a canonical decomposition.
		if c.r < 0xC0 || unicode.Is(hfNoDecomposition, c.r) {
			ds = append(ds, decomposed{c.r, combiningClass(c.r), false})
			continue
		}
		k := utf8.EncodeRune(buf[:], c.r)
		n.dec = norm.NFD.Append(n.dec[:0], buf[:k]...)
		for j := 0; j < len(n.dec); {
			d, size := utf8.DecodeRune(n.dec[j:])
			ds = append(ds, decomposed{d, combiningClass(d), j > 0})
			j += size
		}
	}
	canonicalOrder(ds)
	n.ds = ds
	out := n.b[:0]
	taken := 0 // original characters whose span has been given out
	for _, d := range ds {
		var c nchar
		switch {
		case !d.inserted:
			c = in[taken]
			taken++
		case taken > 0:
			c = in[taken-1]
		default: // not reached: a decomposition's first character sorts before the rest
			c = nchar{start: in[0].start, end: in[0].start}
		}
		// Nonspacing marks start at U+0300.
		if d.r >= 0x300 && unicode.Is(hfNonspacingMark, d.r) {
			continue
		}
		c.r = d.r
		out = append(out, c)
	}
	n.b = out
	return out
}

// decomposed is a character of an NFD decomposition with its canonical
// combining class; inserted marks all but the first character of a
// decomposition.
type decomposed struct {
	r        rune
	ccc      uint8
	inserted bool
}

// canonicalOrder sorts every run of combining characters (canonical
// combining class > 0) by class, stably.
func canonicalOrder(ds []decomposed) {
	for i := 0; i < len(ds); {
		if ds[i].ccc == 0 {
			i++
			continue
		}
		j, sorted := i+1, true
		for j < len(ds) && ds[j].ccc != 0 {
			if ds[j].ccc < ds[j-1].ccc {
				sorted = false
			}
			j++
		}
		if !sorted {
			slices.SortStableFunc(ds[i:j], func(x, y decomposed) int { return int(x.ccc) - int(y.ccc) })
		}
		i = j
	}
}

// combiningClass returns the canonical combining class of r, as the
// tokenizers library's tables have it.
func combiningClass(r rune) uint8 {
	// Every character with a nonzero class is at or above U+0300.
	if r < 0x300 {
		return 0
	}
	var buf [utf8.UTFMax]byte
	k := utf8.EncodeRune(buf[:], r)
	ccc := norm.NFD.Properties(buf[:k]).CCC()
	if ccc != 0 && unicode.Is(hfNoCombiningClass, r) {
		return 0
	}
	return ccc
}

// lowercase maps every character to its full lowercase, one character at a
// time like Rust's char::to_lowercase (with the tokenizers library's Unicode
// version): Σ becomes σ even at the end of a word, and U+0130 (İ) becomes "i"
// followed by U+0307.
func (n *normalizer) lowercase(cs []nchar) []nchar {
	expand := false
	for i := range cs {
		r := cs[i].r
		switch {
		case r < 0x80:
			if r >= 'A' && r <= 'Z' {
				cs[i].r = r + ('a' - 'A')
			}
		case r == 'İ':
			expand = true
		default:
			cs[i].r = toLower(r)
		}
	}
	if !expand {
		return cs
	}
	// Rare: rebuild with room for the extra characters. cs may alias n.a or
	// n.b, so build into a fresh slice.
	out := make([]nchar, 0, len(cs)+4)
	for _, c := range cs {
		if c.r == 'İ' {
			out = append(out, nchar{'i', c.start, c.end}, nchar{'\u0307', c.start, c.end})
			continue
		}
		out = append(out, c)
	}
	return out
}

// caseRange maps the code points lo, lo+stride, ... hi to themselves plus
// delta.
type caseRange struct {
	lo, hi, stride, delta rune
}

// toLower returns the lowercase of r from hfLower (U+0130 aside).
func toLower(r rune) rune {
	lo, hi := 0, len(hfLower)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if hfLower[m].hi < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(hfLower) {
		if c := hfLower[lo]; r >= c.lo && (r-c.lo)%c.stride == 0 {
			return r + c.delta
		}
	}
	return r
}
