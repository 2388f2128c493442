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

// isControl is BertNormalizer's is_control: categories Cc, Cf and Co, except
// the three ASCII controls that count as whitespace.
func isControl(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x80:
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
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
// ASCII (so "$", "+", "^" count) and every Unicode category P.
func isPunctuation(r rune) bool {
	if r < 0x80 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
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
	run  []cccRune
}

// cccRune is a character with its canonical combining class, for ordering.
type cccRune struct {
	ccc uint8
	r   rune
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
		case r == 0 || r == utf8.RuneError || isControl(r):
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

// stripAccents decomposes to NFD and drops nonspacing marks (category Mn).
//
// Each character is decomposed on its own with x/text/unicode/norm, then
// combining marks are put in canonical order across the whole text: together
// that is NFD. Decomposing whole strings with norm instead would insert
// U+034F after 30 consecutive combining marks (its stream-safe format), and
// would lose which original character each output character came from. The
// marks of a reordered run all get the span of the whole run.
func (n *normalizer) stripAccents(in []nchar) []nchar {
	out := n.b[:0]
	var buf [utf8.UTFMax]byte
	for _, c := range in {
		// Nothing below U+00C0 has a canonical decomposition.
		if c.r < 0xC0 {
			out = append(out, c)
			continue
		}
		k := utf8.EncodeRune(buf[:], c.r)
		n.dec = norm.NFD.Append(n.dec[:0], buf[:k]...)
		for j := 0; j < len(n.dec); {
			d, size := utf8.DecodeRune(n.dec[j:])
			j += size
			out = append(out, nchar{d, c.start, c.end})
		}
	}
	n.canonicalOrder(out)
	kept := out[:0]
	for _, c := range out {
		// Nonspacing marks start at U+0300.
		if c.r >= 0x300 && unicode.Is(unicode.Mn, c.r) {
			continue
		}
		kept = append(kept, c)
	}
	n.b = out
	return kept
}

// canonicalOrder sorts every run of combining characters (canonical
// combining class > 0) by class, stably. A run that changes order gets the
// span of all its characters, which keeps spans in text order.
func (n *normalizer) canonicalOrder(cs []nchar) {
	for i := 0; i < len(cs); {
		if combiningClass(cs[i].r) == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(cs) && combiningClass(cs[j].r) != 0 {
			j++
		}
		if j-i > 1 {
			run := n.run[:0]
			sorted := true
			for _, c := range cs[i:j] {
				cc := combiningClass(c.r)
				if len(run) > 0 && cc < run[len(run)-1].ccc {
					sorted = false
				}
				run = append(run, cccRune{cc, c.r})
			}
			if !sorted {
				slices.SortStableFunc(run, func(x, y cccRune) int { return int(x.ccc) - int(y.ccc) })
				start, end := cs[i].start, cs[j-1].end
				for k := range run {
					cs[i+k] = nchar{run[k].r, start, end}
				}
			}
			n.run = run
		}
		i = j
	}
}

// combiningClass returns the canonical combining class of r.
func combiningClass(r rune) uint8 {
	// Every character with a nonzero class is at or above U+0300.
	if r < 0x300 {
		return 0
	}
	var buf [utf8.UTFMax]byte
	k := utf8.EncodeRune(buf[:], r)
	return norm.NFD.Properties(buf[:k]).CCC()
}

// lowercase maps every character to its full lowercase, one character at a
// time like Rust's char::to_lowercase: Σ becomes σ even at the end of a word,
// and U+0130 (İ) becomes "i" followed by U+0307.
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
			cs[i].r = unicode.ToLower(r)
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
