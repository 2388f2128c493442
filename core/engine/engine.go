// Package engine is bertlab's one engine: the loaded model, its tokenizer and the training lab's
// current run, with every question a transport asks of them. The HTTP API (package api), the
// browser's worker (wasm/engine, which only turns JavaScript values into Go ones and back) and
// the page's tests (package ui) all ask this type, so they cannot drift apart. It has no
// syscall/js and no HTTP.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/tokenizer/auto"
	"github.com/bertlab/bertlab/core/train"
)

// Engine answers questions about one model. The inference methods (Tokenize, FillMask,
// NextSentence, Attention, Steps, Embed, Embeddings) only read the model and may run at once;
// Load and the training lab's methods change the engine and must not run beside anything else.
type Engine struct {
	// Labs answers the training lab and the masking lab (package lab's Labs); nil in an engine
	// that answers inference only, whose lab questions are errors.
	Labs  Labs
	name  string
	model *bert.Model
	tok   tokenizer.Encoder
	// wp is tok when it is BERT's WordPiece, which the training labs need; nil otherwise.
	wp    *tokenizer.Tokenizer
	notes []string
	run   Run        // the training lab's run; nil before the first
	race  FamilyRace // the family lab's race (familylab.go); nil before the first
}

// ErrNoModel is the error of every question asked before a model is loaded.
var ErrNoModel = errors.New("no model loaded")

// New returns an engine for m and its tokenizer (any kind: WordPiece, byte-level BPE,
// SentencePiece Unigram); name is what Name reports.
func New(name string, m *bert.Model, tok tokenizer.Encoder) (*Engine, error) {
	if m == nil || tokenizer.IsNil(tok) {
		return nil, errors.New("engine: the model and its tokenizer are both needed")
	}
	if n := tok.VocabSize(); n > m.Config.VocabSize {
		return nil, fmt.Errorf("engine: model %s: the vocabulary has %d tokens but vocab_size is %d", name, n, m.Config.VocabSize)
	}
	PackForEval(m)
	wp, _ := tok.(*tokenizer.Tokenizer)
	return &Engine{name: name, model: m, tok: tok, wp: wp}, nil
}

// packLimit is the largest model (in parameters) whose weights the engine packs beside the raw
// ones (bert.Model.PackWeights): the packed copies take as much memory again as the matrices,
// which BERT-Base (110 M, about 340 MB more) can spare. A larger model (BERT-Large, 335 M) is
// packed in place (bert.Model.PackWeightsInPlace): it holds each matrix once until a question
// that reads the raw layout (the layer steps, attributions, a training-lab run) unpacks it.
const packLimit = 120_000_000

// PackForEval packs m's weights as the engine does with every model it loads: beside the raw
// ones up to packLimit parameters, in their place beyond. Every query then skips the
// transposition of each weight matrix (the same answers, bit for bit). make bench calls it so
// that it times what the engine runs.
func PackForEval(m *bert.Model) {
	switch {
	case m.Packed():
	case packInPlace(m.NumParams()):
		m.PackWeightsInPlace()
	default:
		m.PackWeights()
	}
}

// packInPlace reports whether PackForEval packs a model of n parameters in place.
func packInPlace(n int64) bool { return n > packLimit }

// Open loads the HF model folder at the root of fsys (hf.LoadFS) into a new engine.
func Open(fsys fs.FS, name string) (*Engine, error) {
	e := &Engine{}
	if _, err := e.Load(fsys, name); err != nil {
		return nil, err
	}
	return e, nil
}

// ModelInfo is what Load reports about the model it loaded.
type ModelInfo struct {
	OK         bool        `json:"ok"`
	Parameters int64       `json:"parameters"`
	Heads      []string    `json:"heads"`
	Notes      []string    `json:"notes"`
	Config     bert.Config `json:"config"`
	// Family describes the model's family for the Models view (DescribeFamily).
	Family *FamilyCard `json:"family"`
	// Tokenizer is the tokenizer's kind: "wordpiece", "bpe" or "unigram".
	Tokenizer string `json:"tokenizer"`
	// MaskToken is the mask token as text is written with it ("[MASK]", RoBERTa's "<mask>");
	// BERT's [MASK] is read as it too.
	MaskToken string `json:"mask_token"`
	// Specials are the tokenizer's special tokens.
	Specials tokenizer.Specials `json:"specials"`
}

// Load loads the HF model folder at the root of fsys (hf.LoadFS), which must hold a tokenizer
// (vocab.txt, tokenizer.json, vocab.json and merges.txt, spiece.model or spm.model), and
// replaces the engine's model with it; a failed load keeps the model there was.
func (e *Engine) Load(fsys fs.FS, name string) (*ModelInfo, error) {
	f, err := hf.LoadFS(fsys, name)
	if err != nil {
		return nil, err
	}
	if f.Encoder == nil {
		return nil, fmt.Errorf("model folder %s: no tokenizer files (%s, %s, %s and %s, %s or %s)", name,
			tokenizer.VocabFile, tokenizer.TokenizerJSONFile, tokenizer.BPEVocabFile, tokenizer.BPEMergesFile, auto.SpieceFile, auto.SpmFile)
	}
	PackForEval(f.Model)
	e.name, e.model, e.tok, e.wp, e.notes = name, f.Model, f.Encoder, f.Tokenizer, f.Report.Notes
	return e.Info(), nil
}

// Info describes the loaded model (nil before a load).
func (e *Engine) Info() *ModelInfo {
	if e.model == nil {
		return nil
	}
	n := e.model.NumParams()
	return &ModelInfo{OK: true, Parameters: n, Heads: e.model.HeadNames(), Notes: e.notes, Config: e.model.Config,
		Family: DescribeFamily(e.model, n), Tokenizer: e.tok.Kind(), MaskToken: tokenizer.MaskToken(e.tok), Specials: tokenizer.SpecialsOf(e.tok)}
}

// Name is the loaded model's name ("" before a load).
func (e *Engine) Name() string { return e.name }

// Model is the loaded model (nil before a load).
func (e *Engine) Model() *bert.Model { return e.model }

// Tokenizer is the loaded model's tokenizer (nil before a load).
func (e *Engine) Tokenizer() tokenizer.Encoder { return e.tok }

func (e *Engine) ready() error {
	if e.model == nil {
		return ErrNoModel
	}
	return nil
}

// Tokens is the tokenization of a text (and its pair), [CLS] and [SEP] included.
type Tokens struct {
	IDs     []int    `json:"input_ids"`
	Tokens  []string `json:"tokens"`
	TypeIDs []int    `json:"token_type_ids"` // 0: [CLS], sentence A, [SEP]; 1: sentence B, [SEP]
	Offsets [][2]int `json:"offsets"`        // code point spans into the text; [0,0] for added tokens
	Special []bool   `json:"special"`
	WordIDs []int    `json:"word_ids"` // -1 for added special tokens
	// Truncated reports that the text is longer than the model's positions.
	Truncated bool `json:"truncated"`
	// Length is the number of tokens before truncation ([CLS] and [SEP] included).
	Length int `json:"length"`
}

// Tokenize encodes text (and pair, when not nil) as the model reads it, cut to its positions.
func (e *Engine) Tokenize(text string, pair *string) (*Tokens, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	enc, err := pipeline.Encode(e.tok, text, pair, e.model.Config.MaxSequenceLength())
	if err != nil {
		return nil, err
	}
	length := enc.Len()
	if enc.Truncated {
		if length, err = pipeline.FullLength(e.tok, text, pair); err != nil {
			return nil, err
		}
	}
	return &Tokens{IDs: enc.IDs, Tokens: enc.Tokens, TypeIDs: enc.TypeIDs, Offsets: enc.CharOffsets,
		Special: enc.Special, WordIDs: enc.WordIDs, Truncated: enc.Truncated, Length: length}, nil
}

// FillMask predicts the topK tokens of every [MASK] (pipeline.FillMask).
func (e *Engine) FillMask(text string, pair *string, topK int) (*pipeline.FillMaskResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.FillMask(e.model, e.tok, text, pair, topK)
}

// NextSentence is the next-sentence prediction of the pair (pipeline.NextSentence).
func (e *Engine) NextSentence(text, pair string) (*pipeline.NSPResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.NextSentence(e.model, e.tok, text, pair)
}

// Attention returns every layer's attention probabilities from one forward pass, layer 0 first.
func (e *Engine) Attention(text string, pair *string) ([]pipeline.AttentionResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.AttentionLayers(e.model, e.tok, text, pair)
}

// AttentionLayer returns one layer's attention probabilities (pipeline.Attention).
func (e *Engine) AttentionLayer(text string, pair *string, layer int) (*pipeline.AttentionResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.Attention(e.model, e.tok, text, pair, layer)
}

// Steps walks layer's operations for the token at position token (pipeline.Steps).
func (e *Engine) Steps(text string, layer, token int) (*pipeline.StepsResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.Steps(e.model, e.tok, text, nil, layer, token)
}

// Embed returns one pooled vector per text (pipeline.Embed).
func (e *Engine) Embed(texts []string, pooling pipeline.Pooling) (*pipeline.EmbedResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.Embed(e.model, e.tok, texts, pooling)
}

// Embeddings maps every token of sentences to 2-D at every layer, layer 0 (the embedding
// output) first, one PCA per layer (pipeline.EmbeddingLayers).
func (e *Engine) Embeddings(sentences []string, opts pipeline.EmbeddingMapOptions) ([]pipeline.EmbeddingMapResult, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return pipeline.EmbeddingLayers(e.model, e.tok, sentences, opts)
}

// ErrNoLabs is the error of the lab questions of an engine without Labs.
var ErrNoLabs = errors.New("the training labs are not part of this engine")

func (e *Engine) labsReady() error {
	if err := e.ready(); err != nil {
		return err
	}
	if e.Labs == nil {
		return ErrNoLabs
	}
	if e.wp == nil {
		return fmt.Errorf("%w (this model's is %s)", ErrLabsWordPiece, e.tok.Kind())
	}
	return nil
}

// ErrLabsWordPiece is the error of the lab questions for a model whose tokenizer is not BERT's
// WordPiece: the masking and training labs build on its vocabulary.
var ErrLabsWordPiece = errors.New("the training and masking labs need a WordPiece (vocab.txt) tokenizer")

// MaskLab masks text as BERT's pre-training does, drawing from seed (Labs.MaskLab).
func (e *Engine) MaskLab(text string, seed uint64, wholeWord bool) (*MaskLabResult, error) {
	if err := e.labsReady(); err != nil {
		return nil, err
	}
	return e.Labs.MaskLab(e.wp, text, e.model.Config.MaxSequenceLength(), seed, wholeWord)
}

// NSPPairs builds n next-sentence instances from the sample corpus (Labs.NSPPairs).
func (e *Engine) NSPPairs(seed uint64, n int) ([]NSPPair, error) {
	if err := e.labsReady(); err != nil {
		return nil, err
	}
	return e.Labs.NSPPairs(e.wp, seed, n)
}

// Samples lists the sentences of the sample corpus (Labs.Samples).
func (e *Engine) Samples() ([]string, error) {
	if e.Labs == nil {
		return nil, ErrNoLabs
	}
	return e.Labs.Samples()
}

// TrainEvents is the answer to a training step: what happened, and whether the run has ended.
type TrainEvents struct {
	Events []train.Event `json:"events"`
	Done   bool          `json:"done"`
}

// TrainStart prepares a training-lab run on a copy of the loaded model (which the other
// questions keep using), replacing the previous run.
func (e *Engine) TrainStart(req FinetuneRequest) (*FinetuneInfo, error) {
	if err := e.labsReady(); err != nil {
		return nil, err
	}
	run, err := e.Labs.Start(e.model, e.wp, req)
	if err != nil {
		return nil, err
	}
	e.run = run
	return run.Info(), nil
}

// ErrNoRun is the error of the training lab's questions before TrainStart.
var ErrNoRun = errors.New("no training run: start one first")

// TrainStep does the run's next step, or its evaluation after an epoch.
func (e *Engine) TrainStep(ctx context.Context) (*TrainEvents, error) {
	if e.run == nil {
		return nil, ErrNoRun
	}
	evs, err := e.run.Advance(ctx)
	if err != nil {
		return nil, err
	}
	return &TrainEvents{Events: evs, Done: e.run.Done()}, nil
}

// TrainStop ends the run where it is.
func (e *Engine) TrainStop() (*TrainEvents, error) {
	if e.run == nil {
		return nil, ErrNoRun
	}
	if e.run.Done() {
		return &TrainEvents{Done: true}, nil
	}
	return &TrainEvents{Events: []train.Event{e.run.Stop()}, Done: true}, nil
}

// TrainPredict runs the run's model on text.
func (e *Engine) TrainPredict(text string) (*TaskPrediction, error) {
	if e.run == nil {
		return nil, ErrNoRun
	}
	return e.run.Predict(text)
}

// TrainExport returns the run's model as a zip of its HF folder, and the archive's name.
func (e *Engine) TrainExport() (name string, zip []byte, err error) {
	if e.run == nil {
		return "", nil, ErrNoRun
	}
	return e.run.Export()
}
