package tokenizer

import (
	"sort"
	"unicode/utf8"
)

// byteChars is GPT-2's bytes_to_unicode table: the printable character that
// stands for each byte in a byte-level vocabulary. Bytes that are printable
// Latin-1 characters (! to ~, ¡ to ¬, ® to ÿ) stand for themselves; the
// others (controls, space, DEL, NBSP, soft hyphen) are moved to U+0100 and
// on, in byte order, so that a space becomes "Ġ" and a newline "Ċ".
var byteChars [256]rune

// charBytes maps a character of byteChars back to its byte.
var charBytes = map[rune]byte{}

func init() {
	next := rune(256)
	for b := range 256 {
		switch {
		case b >= '!' && b <= '~', b >= 0xA1 && b <= 0xAC, b >= 0xAE:
			byteChars[b] = rune(b)
		default:
			byteChars[b] = next
			next++
		}
		charBytes[byteChars[b]] = byte(b)
	}
}

// runeRange is the code points lo to hi, both included.
type runeRange struct{ lo, hi rune }

// inRanges reports whether r lies in one of rs, which are sorted and do not
// overlap.
func inRanges(rs []runeRange, r rune) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi >= r })
	return i < len(rs) && rs[i].lo <= r
}

// Character classes of the GPT-2 pre-tokenization regex.
const (
	classOther  = iota // [^\s\p{L}\p{N}]
	classLetter        // \p{L}
	classNumber        // \p{N}
	classSpace         // \s
)

// classOf returns the class of r as HuggingFace's regex engine sees it (its
// Unicode tables, not Go's: see bpe_tables.go).
func classOf(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			return classLetter
		case r >= '0' && r <= '9':
			return classNumber
		case r == ' ', r >= '\t' && r <= '\r':
			return classSpace
		}
		return classOther
	case inRanges(bpeLetters, r):
		return classLetter
	case inRanges(bpeNumbers, r):
		return classNumber
	case inRanges(bpeSpaces, r):
		return classSpace
	}
	return classOther
}

// splitGPT2 appends to dst the end offsets of the pieces that GPT-2's
// pre-tokenization regex cuts s into:
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// Go's regexp has no lookahead, so the alternatives are tried by hand in the
// regex's order at each position. Every character falls in one class, so the
// pieces cover s with no gaps. Bytes that are not valid UTF-8 count as
// U+FFFD, which is "other".
func splitGPT2(dst []int, s string) []int {
	// class and size of the character at byte i
	at := func(i int) (int, int) {
		if s[i] < utf8.RuneSelf {
			return classOf(rune(s[i])), 1
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		return classOf(r), n
	}
	// run returns the end of the run of characters of class c from i.
	run := func(i, c int) int {
		for i < len(s) {
			k, n := at(i)
			if k != c {
				break
			}
			i += n
		}
		return i
	}
	for i := 0; i < len(s); {
		if end := contraction(s[i:]); end > 0 {
			i += end
			dst = append(dst, i)
			continue
		}
		c, _ := at(i)
		if s[i] == ' ' && i+1 < len(s) {
			// " ?" followed by a letter, number or other run.
			if k, _ := at(i + 1); k != classSpace {
				i = run(i+1, k)
				dst = append(dst, i)
				continue
			}
		}
		if c != classSpace {
			i = run(i, c)
			dst = append(dst, i)
			continue
		}
		// \s+(?!\S): the run of spaces, less its last character when a
		// non-space follows and more than one character is left; else \s+.
		end := run(i, classSpace)
		if end < len(s) {
			last := end - 1
			for !utf8.RuneStart(s[last]) && last > i {
				last--
			}
			if last > i {
				end = last
			}
		}
		i = end
		dst = append(dst, i)
	}
	return dst
}

// contraction returns the length of the English contraction ('s, 't, 're,
// 've, 'm, 'll, 'd; lowercase only) that s starts with, or 0.
func contraction(s string) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	switch s[1] {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(s) >= 3 && s[2] == 'e' {
			return 3
		}
	case 'l':
		if len(s) >= 3 && s[2] == 'l' {
			return 3
		}
	}
	return 0
}
