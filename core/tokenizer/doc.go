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
//
// # Byte-level BPE
//
// BPE is RoBERTa's and GPT-2's tokenizer, loaded from tokenizer.json
// (LoadBPE) or from vocab.json and merges.txt (LoadBPEFiles), or from a
// model folder holding either (LoadBPEFS). Its output equals that of the
// HuggingFace tokenizers library 0.23 (ByteLevel pre-tokenizer, BPE model,
// RobertaProcessing or ByteLevel post-processor, ByteLevel decoder):
//
//   - the text is first split at the added tokens (<s>, </s>, <mask>, ...),
//     leftmost-longest, those with normalized false before the others; a
//     token with lstrip (RoBERTa's <mask>) takes the whitespace before it,
//     one with rstrip the whitespace after it, so "a <mask>" and "a<mask>"
//     give the same ids, and its Tokens entry is the text it covers
//     (" <mask>");
//   - each span between them gets a space in front when add_prefix_space is
//     set and it does not start with one, and is cut by GPT-2's regex
//     (below), written out by hand since Go's regexp has no lookahead, with
//     the library's Unicode 16 classes (bpe_tables.go) rather than Go's;
//   - each piece's UTF-8 bytes become GPT-2's printable byte characters
//     (" " is "Ġ", "\n" is "Ċ") and are merged by rank, lowest first and
//     leftmost among equals, with a cache of words;
//   - spans are the code points of the original text each token came from
//     (a token holding part of a character's bytes gets the whole
//     character); with trim_offsets the post-processor moves them past
//     leading and trailing spaces, with the library's quirk of trimming one
//     character from a word that follows an added token when
//     add_prefix_space is set;
//   - pairs are <s> A </s></s> B </s> for RoBERTa, all of type 0;
//     truncation is that of the WordPiece Tokenizer. Encoding.Truncated is
//     true whenever tokens were dropped, also where the library reports no
//     overflow because it stopped tokenizing at maxLen;
//   - Decode maps the byte characters back and reads the bytes as UTF-8
//     with each invalid sequence becoming U+FFFD, as Rust does.
//
// GPT-2's pre-tokenization regex:
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// Anything a tokenizer.json asks for that is not implemented (another
// model, a normalizer, another pre-tokenizer, post-processor or decoder,
// BPE dropout, a subword prefix or suffix, byte fallback, single_word added
// tokens, unknown fields) is an error naming the field. Truncation and
// padding saved in a tokenizer.json are ignored, as transformers ignores
// them: Encode's maxLen says how long. Files are read with size limits (MaxBPEFileSize, MaxBPEVocab,
// MaxBPETokenLen). Invalid UTF-8 in the input is read as U+FFFD, one code
// point for each invalid byte.
//
// Both tokenizers satisfy Encoder, which is what a model needs of either.
package tokenizer
