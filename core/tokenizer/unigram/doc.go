// Package unigram is the SentencePiece Unigram tokenizer of ALBERT
// (spiece.model), DeBERTa-v2/v3 (spm.model) and of tokenizer.json files whose
// model is Unigram, as HuggingFace's tokenizers library runs it.
//
// The pipeline is HuggingFace's: added (special) tokens are matched in the
// raw text (leftmost-longest, with single_word, lstrip and rstrip); the rest
// is normalised (Precompiled charsmap, NFC/NFD/NFKC/NFKD, Lowercase, Strip,
// StripAccents, Replace with a string or a regular expression, Prepend), cut
// by the Metaspace pre-tokenizer (spaces to "▁", "▁" put before the text by
// the prepend scheme always/first/never, splits before each "▁"), segmented
// by Viterbi over the pieces' log-probabilities (unknown characters to the
// unk piece, runs of them fused, or to <0xNN> byte pieces with byte
// fallback), and laid out by the template post-processor (ALBERT's and
// DeBERTa's "[CLS] A [SEP] B [SEP]"). Offsets are those HuggingFace reports:
// each normalised character keeps the span of the original it came from by
// HuggingFace's alignment rules (a Replace's output is aligned to the last
// character of its match, "▁" put before a text to its first character, an
// added token that strips whitespace spans that whitespace too).
//
// A .model file is read by ParseModelProto (the protobuf wire format, read by
// hand for the fields used) and turned into the pipeline that transformers'
// AlbertConverter or DebertaV2Converter builds (FromModelProto). Only Unigram
// models are accepted (sentencepiece's BPE, WORD and CHAR are refused).
//
// The precompiled charsmap is applied as HuggingFace applies it (not as the
// sentencepiece library does): per extended grapheme cluster of fewer than 6
// bytes, else per character, each replaced by the value of the shortest key
// of the double-array trie that it starts with.
//
// Where this package and tokenizers 0.23.2 are known to differ:
//   - grapheme clusters come from github.com/rivo/uniseg (Unicode 15), while
//     the Rust library's segmentation knows marks new in Unicode 16/17 (e.g.
//     U+1AD1): such a mark does not join the cluster before it here, which
//     can move an offset by one character where the charsmap maps that
//     cluster;
//   - NFC/NFD/NFKC/NFKD use golang.org/x/text with hftables.go, generated
//     from the library's answers for every code point (maketables.go), where
//     the library's older tables decompose, order or strip differently; new
//     compositions (none between Unicode 9 and 15 among characters the
//     library decomposes) are x/text's;
//   - Encoding.Tokens holds vocabulary pieces, where HuggingFace writes the
//     original text for an unknown piece and for an added token with the
//     whitespace it stripped;
//   - added tokens whose "normalized" flag is set are matched in the raw text
//     like the others.
package unigram
