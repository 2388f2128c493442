package tokenizer

// Encoder is what a model needs of its tokenizer, whichever kind it is:
// BERT's WordPiece (*Tokenizer) and byte-level BPE (*BPE) both are one.
// Encodings of both hold the same fields with the same meaning; ids a
// tokenizer lacks are -1.
type Encoder interface {
	// Encode tokenizes one text and adds the model's special tokens; maxLen
	// > 0 caps the number of tokens.
	Encode(text string, maxLen int) (Encoding, error)
	// EncodePair does the same for a pair of texts.
	EncodePair(a, b string, maxLen int) (Encoding, error)
	// CLSID is the token that starts a sequence ([CLS], <s>).
	CLSID() int
	// SEPID is the token that ends a text ([SEP], </s>).
	SEPID() int
	// MaskID is the mask token ([MASK], <mask>).
	MaskID() int
	// PadID is the padding token ([PAD], <pad>).
	PadID() int
	// UnkID is the unknown token ([UNK], <unk>).
	UnkID() int
}

var (
	_ Encoder = (*Tokenizer)(nil)
	_ Encoder = (*BPE)(nil)
)
