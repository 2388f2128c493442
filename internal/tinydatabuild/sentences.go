package tinydatabuild

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// abbreviations are the words that end in a period without ending a sentence (compared without
// the period, case-sensitive): titles before names, and the few others the novels use.
var abbreviations = map[string]bool{
	"Mr": true, "Mrs": true, "Messrs": true, "Ms": true, "Dr": true, "St": true, "Col": true,
	"Capt": true, "Gen": true, "Lt": true, "Sr": true, "Jr": true, "Rev": true, "Hon": true,
	"Esq": true, "Mme": true, "Mlle": true, "Vol": true, "Co": true, "vs": true,
	"viz": true, "etc": true,
}

// SplitSentences splits a paragraph (words separated by single spaces) into sentences with this
// rule: a sentence ends after a word ending in ".", "!" or "?" (possibly followed by closing
// quotes, brackets or underscores) when the next word starts, after any opening quotes or
// brackets, with an uppercase letter; except after the abbreviations above (Mr., Mrs., Dr., St.,
// ...), after a word with a period inside (H.M.S.) and after a single capital letter (an
// initial, as in "J. Smith").
func SplitSentences(paragraph string) []string {
	words := strings.Fields(paragraph)
	var out []string
	start := 0
	for i := 0; i < len(words)-1; i++ {
		if endsSentence(words[i]) && startsSentence(words[i+1]) {
			out = append(out, strings.Join(words[start:i+1], " "))
			start = i + 1
		}
	}
	if start < len(words) {
		out = append(out, strings.Join(words[start:], " "))
	}
	return out
}

const (
	closers = "\"'’”)]_"
	openers = "\"'‘“(["
)

func endsSentence(w string) bool {
	core := strings.TrimRight(w, closers)
	if core == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(core)
	switch last {
	case '!', '?':
		return true
	case '.':
	default:
		return false
	}
	// The word's last run of letters and periods: "Lucy--Mrs." ends in the title "Mrs".
	stem := strings.TrimSuffix(core, ".")
	if i := strings.LastIndexFunc(stem, func(r rune) bool { return !unicode.IsLetter(r) && r != '.' }); i >= 0 {
		_, n := utf8.DecodeRuneInString(stem[i:])
		stem = stem[i+n:]
	}
	if abbreviations[stem] || strings.Contains(stem, ".") {
		return false // Mr., or dotted like H.M.S.
	}
	if r, n := utf8.DecodeRuneInString(stem); n == len(stem) && unicode.IsUpper(r) {
		return false // an initial
	}
	return true
}

func startsSentence(w string) bool {
	w = strings.TrimLeft(w, openers)
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}
