// Package tokenizer is a HuggingFace-compatible BERT tokenizer: the basic
// tokenizer (text cleaning, CJK splitting, lowercasing, accent stripping,
// punctuation splitting) followed by greedy longest-match-first WordPiece.
//
// Its output (ids, tokens, token types) equals that of the HuggingFace
// `tokenizers` library (BertNormalizer + BertPreTokenizer + WordPiece +
// TemplateProcessing), which is what `transformers` uses for BERT by default
// (BertTokenizerFast). Where that library and the slow Python BertTokenizer
// disagree, this package follows the Rust library:
//
//   - whitespace is Unicode White_Space (Rust char::is_whitespace), so U+2028
//     and U+2029 separate words;
//   - "control" characters removed by cleaning are the categories Cc, Cf and
//     Co (not Cn), except tab, newline and carriage return;
//   - lowercasing is per character (Σ always becomes σ, never final ς) and
//     happens after accent stripping;
//   - the CJK ranges are those of the Rust library, which start its
//     Extension E range at U+2B920 instead of U+2B820;
//   - longest_first truncation of a pair gives the extra token of an odd
//     budget to the longer sequence, or to the second one when they are equal.
//
// Special tokens ([CLS], [SEP], [PAD], [UNK], [MASK]) written in the input are
// matched in the raw text, case-sensitively, before any normalisation, and
// become single tokens, as HuggingFace does for its added special tokens.
//
// Every token carries the span of the original text it came from, both in
// bytes (for slicing Go strings) and in Unicode code points (the character
// offsets HuggingFace reports to Python and JavaScript). Special tokens added
// around the sequences get the empty span [0, 0].
//
// Character tables are Go's (Unicode 15.0.0, golang.org/x/text for NFD); the
// Rust library carries its own tables, so characters whose category changed
// between Unicode versions may be treated differently.
//
// Input is expected to be UTF-8; bytes that are not valid UTF-8 are read as
// U+FFFD and therefore dropped by text cleaning, like HuggingFace drops U+FFFD.
package tokenizer
