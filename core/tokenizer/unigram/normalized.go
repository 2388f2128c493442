package unigram

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/text/unicode/norm"
)

// nchar is one character of a normalised text with the span of the
// original text (bytes) it is aligned to, as HuggingFace's NormalizedString
// keeps it.
type nchar struct {
	r    rune
	s, e int
}

// change is one character of a transformation in HuggingFace's terms: 0
// replaces the next original character, -n replaces it and removes the n
// after it, 1 inserts a character aligned to the previous original one.
type change struct {
	r rune
	c int
}

func fromText(text string, base int) []nchar {
	out := make([]nchar, 0, len(text))
	for i, r := range text {
		out = append(out, nchar{r, base + i, base + i + len(string(r))})
	}
	return out
}

func nstring(cs []nchar) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteRune(c.r)
	}
	return b.String()
}

// transform applies changes to cs after dropping its first skip characters,
// with HuggingFace's alignment rules (NormalizedString::transform_range).
func transform(cs []nchar, ch []change, skip int, prev nchar, hasPrev bool) []nchar {
	out := make([]nchar, 0, len(ch))
	i := 0
	if skip > 0 {
		i = min(skip, len(cs))
		prev, hasPrev = cs[i-1], true
	}
	for _, c := range ch {
		if c.c > 0 {
			a := nchar{r: c.r}
			if hasPrev {
				a.s, a.e = prev.s, prev.e
			}
			out = append(out, a)
			continue
		}
		if i >= len(cs) {
			break
		}
		out = append(out, nchar{c.r, cs[i].s, cs[i].e})
		prev, hasPrev = cs[i], true
		i++
		for k := 0; k < -c.c && i < len(cs); k++ {
			prev = cs[i]
			i++
		}
	}
	return out
}

// normalizer is one step of tokenizer.json's normaliser.
type normalizer interface {
	normalize(cs []nchar) []nchar
}

type lowercase struct{}

func (lowercase) normalize(cs []nchar) []nchar {
	out := cs[:0:0]
	for _, c := range cs {
		if c.r == 'İ' { // Rust's to_lowercase: "i̇"
			out = append(out, nchar{'i', c.s, c.e}, nchar{'\u0307', c.s, c.e})
			continue
		}
		out = append(out, nchar{unicode.ToLower(c.r), c.s, c.e})
	}
	return out
}

type strip struct{ left, right bool }

func (s strip) normalize(cs []nchar) []nchar {
	if s.left {
		for len(cs) > 0 && unicode.IsSpace(cs[0].r) {
			cs = cs[1:]
		}
	}
	if s.right {
		for len(cs) > 0 && unicode.IsSpace(cs[len(cs)-1].r) {
			cs = cs[:len(cs)-1]
		}
	}
	return cs
}

type prepend struct{ s string }

func (p prepend) normalize(cs []nchar) []nchar { return prependTo(cs, p.s) }

// prependTo puts s before cs, aligned to cs's first character
// (NormalizedString::prepend); an empty cs stays empty.
func prependTo(cs []nchar, s string) []nchar {
	if len(cs) == 0 {
		return cs
	}
	out := make([]nchar, 0, len(cs)+len(s))
	for _, r := range s {
		out = append(out, nchar{r, cs[0].s, cs[0].e})
	}
	return append(out, cs...)
}

// replace is HuggingFace's Replace normaliser: every match of the pattern (a
// literal string or a regular expression) becomes content, whose characters
// are aligned to the last character of the match.
type replace struct {
	literal string
	re      *regexp.Regexp
	content string
}

func (p replace) normalize(cs []nchar) []nchar {
	s := nstring(cs)
	var matches [][]int
	if p.re != nil {
		matches = p.re.FindAllStringIndex(s, -1)
	} else if p.literal != "" {
		for i := 0; ; {
			j := strings.Index(s[i:], p.literal)
			if j < 0 {
				break
			}
			matches = append(matches, []int{i + j, i + j + len(p.literal)})
			i += j + len(p.literal)
		}
	}
	if len(matches) == 0 {
		return cs
	}
	// Byte positions of s to character indices of cs.
	idx := make([]int, len(s)+1)
	n := 0
	for i := range s {
		idx[i] = n
		n++
	}
	idx[len(s)] = n
	out := make([]nchar, 0, len(cs))
	last := 0
	for _, m := range matches {
		a, b := idx[m[0]], idx[m[1]]
		if a == b {
			continue // HuggingFace skips empty matches
		}
		out = append(out, cs[last:a]...)
		for _, r := range p.content {
			out = append(out, nchar{r, cs[b-1].s, cs[b-1].e})
		}
		last = b
	}
	return append(out, cs[last:]...)
}

// precompiled is sentencepiece's charsmap as HuggingFace applies it: grapheme
// by grapheme (whole graphemes of under 6 bytes first, then character by
// character).
type precompiled struct{ m *Charsmap }

func (p precompiled) normalize(cs []nchar) []nchar {
	s := nstring(cs)
	var ch []change
	modified := false
	add := func(old, repl string) {
		oldN, newN := len([]rune(old)), len([]rune(repl))
		for _, r := range repl {
			ch = append(ch, change{r, 0})
		}
		switch d := newN - oldN; {
		case d > 0:
			for k := len(ch) - 1; k >= len(ch)-d && k >= 0; k-- {
				ch[k].c = 1
			}
		case d < 0:
			if len(ch) > 0 {
				ch[len(ch)-1].c += d
			}
		}
	}
	state := -1
	for rest := s; rest != ""; {
		var gr string
		gr, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if len(gr) < 6 {
			if repl, ok := p.m.Transform(gr); ok {
				modified = true
				add(gr, repl)
				continue
			}
		}
		for _, r := range gr {
			part := string(r)
			if repl, ok := p.m.Transform(part); ok {
				modified = true
				add(part, repl)
			} else {
				ch = append(ch, change{r, 0})
			}
		}
	}
	if !modified {
		return cs
	}
	return transform(cs, ch, 0, nchar{}, false)
}

// unicodeForm is the NFC/NFD/NFKC/NFKD normalisers, with x/text's tables
// and the alignments HuggingFace's unicode-normalization-alignments gives:
// each character decomposes into its first character (replacing it) and
// inserted ones; canonical reordering moves characters but not the
// alignments, which stay in place; a composition replaces the starter and
// removes the mark.
type unicodeForm struct{ f norm.Form }

func (u unicodeForm) normalize(cs []nchar) []nchar {
	decomp, table := norm.NFD, hfNFD
	if u.f == norm.NFKC || u.f == norm.NFKD {
		decomp, table = norm.NFKD, hfNFKD
	}
	s := nstring(cs)
	if u.f.IsNormalString(s) {
		known := true
		for _, c := range cs {
			if _, ok := table[c.r]; ok {
				known = false
				break
			}
		}
		if known {
			return cs
		}
	}
	var d []change
	for _, c := range cs {
		dc, ok := table[c.r]
		if !ok {
			dc = decomp.String(string(c.r))
		}
		for k, r := range dc {
			d = append(d, change{r, min(k, 1)})
		}
	}
	// Canonical ordering: stable sort of each run of non-starters by
	// combining class; the changes stay where they are.
	ccc := hfCCC
	for i := 1; i < len(d); i++ {
		for j := i; j > 0; j-- {
			a, b := ccc(d[j-1].r), ccc(d[j].r)
			if a == 0 || b == 0 || a <= b {
				break
			}
			d[j-1].r, d[j].r = d[j].r, d[j-1].r
		}
	}
	if u.f == norm.NFC || u.f == norm.NFKC {
		d = compose(d, ccc)
	}
	return transform(cs, d, 0, nchar{}, false)
}

// hfCCC is the canonical combining class as the library's tables have it:
// characters newer than them are starters there.
func hfCCC(r rune) uint8 {
	c := norm.NFD.PropertiesString(string(r)).CCC()
	if inSorted(hfCombiningFlip, r) {
		if c != 0 {
			return 0
		}
		return 230
	}
	return c
}

func inSorted(rs []rune, r rune) bool {
	i, ok := slices.BinarySearch(rs, r)
	return ok && i >= 0
}

// compose is canonical composition over decomposed characters: a character
// that composes with the last starter (not blocked by one of equal or higher
// class between them) merges into it, the composite then also removing the
// character's own original.
func compose(d []change, ccc func(rune) uint8) []change {
	out := d[:0:0]
	starter := -1
	var last uint8
	for _, c := range d {
		cc := ccc(c.r)
		if starter >= 0 && (len(out)-1 == starter || (last != 0 && last < cc)) {
			if p := norm.NFC.String(string(out[starter].r) + string(c.r)); utf8.RuneCountInString(p) == 1 {
				r, _ := utf8.DecodeRuneInString(p)
				out[starter].r = r
				out[starter].c += c.c - 1
				continue
			}
		}
		if cc == 0 {
			starter, last = len(out), 0
		} else {
			last = cc
		}
		out = append(out, c)
	}
	return out
}

// stripAccents drops combining marks, Mn, Mc and Me of the library's
// Unicode version (HuggingFace's StripAccents); the characters kept keep
// their alignments.
type stripAccents struct{}

func (stripAccents) normalize(cs []nchar) []nchar {
	out := cs[:0:0]
	for _, c := range cs {
		if unicode.IsMark(c.r) == inSorted(hfMarkFlip, c.r) {
			out = append(out, c)
		}
	}
	return out
}

type sequence []normalizer

func (q sequence) normalize(cs []nchar) []nchar {
	for _, n := range q {
		cs = n.normalize(cs)
	}
	return cs
}
