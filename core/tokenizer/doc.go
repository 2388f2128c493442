// Package tokenizer is a HuggingFace-compatible BERT tokenizer: the basic
// tokenizer (text cleaning, CJK splitting, lowercasing, accent stripping,
// punctuation splitting) followed by greedy longest-match-first WordPiece.
//
// Its output (ids, tokens, token types, offsets, word ids, truncation) equals
// that of the HuggingFace tokenizers library 0.23 (BertNormalizer +
// BertPreTokenizer + WordPiece + TemplateProcessing), which is what
// transformers uses for BERT by default (BertTokenizerFast); the tests hold
// its answers for the reference fixtures and for random inputs. Where that
// library and the slow Python BertTokenizer disagree, this package follows
// the library:
//
//   - whitespace is Unicode White_Space (Rust char::is_whitespace), so U+2028
//     and U+2029 separate words;
//   - "control" characters removed by cleaning are the categories Cc, Cf and
//     Co (not Cn), except tab, newline and carriage return;
//   - lowercasing is per character (Σ always becomes σ, never final ς) and
//     happens after accent stripping;
//   - the CJK ranges are those of the Rust library, which start its
//     Extension E range at U+2B920 instead of U+2B820;
//   - longest_first truncation of a pair first keeps of each text the words
//     up to the one that reaches maxLen tokens, then shortens the longer text
//     down to the shorter and both alike; an odd token left over goes to the
//     longer text, or to the second when they are equally long.
//
// The library carries its own Unicode tables: general categories of an old
// Unicode version and case mappings of a newer one than Go's. tables.go,
// generated from the library's answers for every code point (maketables.go),
// holds its classes of control characters, punctuation and nonspacing marks,
// its lowercase mapping and where its NFD differs from x/text's (the version
// of x/text is pinned in go.mod), so the output does not depend on the
// Unicode version of the Go release.
//
// Special tokens ([CLS], [SEP], [PAD], [UNK], [MASK]) written in the input are
// matched in the raw text, case-sensitively, before any normalisation, and
// become single tokens, as HuggingFace does for its added special tokens.
//
// Every token carries the span of the original text it came from, both in
// bytes (for slicing Go strings) and in Unicode code points (the character
// offsets HuggingFace reports to Python and JavaScript). Special tokens added
// around the sequences get the empty span [0, 0]. Spans are HuggingFace's
// even where its bookkeeping is odd: when NFD reorders combining marks, the
// spans stay in place while the characters move.
//
// Input is expected to be UTF-8; bytes that are not valid UTF-8 are read as
// U+FFFD and therefore dropped by text cleaning, like HuggingFace drops U+FFFD.
package tokenizer
