package engine

import (
	"context"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
)

// What the engine asks of the training labs. The labs (package lab: fine-tuning, pre-training,
// the masking lab) link core/train's loops and tinydata's sample corpus, which an engine that
// only answers inference (the HTTP API) must not carry; so the engine holds them behind Labs and
// Run, and the labs' requests and answers are declared here.

// Labs makes training-lab runs and answers the masking lab. Package lab implements it.
type Labs interface {
	// Start prepares a run of req on a copy of body (body is left as it is) with tok, the
	// loaded model's tokenizer.
	Start(body *bert.Model, tok *tokenizer.Tokenizer, req FinetuneRequest) (Run, error)
	// MaskLab masks text (cut to maxLen tokens) as BERT's pre-training does, drawing from seed.
	MaskLab(tok *tokenizer.Tokenizer, text string, maxLen int, seed uint64, wholeWord bool) (*MaskLabResult, error)
	// NSPPairs builds n next-sentence instances from the sample corpus.
	NSPPairs(tok *tokenizer.Tokenizer, seed uint64, n int) ([]NSPPair, error)
	// Samples lists the sentences of the sample corpus.
	Samples() ([]string, error)
}

// Run is a training-lab run, driven one step at a time so that the caller decides when to go on.
type Run interface {
	// Info describes the run as it was prepared.
	Info() *FinetuneInfo
	// Advance does the next piece of work (one optimizer step, or an evaluation) and returns
	// its events; after the last it ends the run (an EventDone follows).
	Advance(ctx context.Context) ([]train.Event, error)
	// Done reports whether the run has ended.
	Done() bool
	// Stop ends the run where it is.
	Stop() train.Event
	// Predict runs the run's model on text.
	Predict(text string) (*TaskPrediction, error)
	// Export returns the run's model as a zip of its HF folder, and the archive's name.
	Export() (name string, zip []byte, err error)
}

// The fine-tuning tasks of the training lab, on tinydata's web sample (embedded in every build).
const (
	TaskSentiment = "sentiment" // sequence classification: web/sentiment-{train,test}.tsv
	TaskPOS       = "pos"       // token classification: web/pos-{train,test}.conll
)

// TaskMLM is the training lab's pre-training run: a small BERT from random weights, trained
// with masked LM on the sample corpus (tinydata web/pretrain.txt) or on the user's text.
const TaskMLM = "mlm"

// Where the pre-training run's vocabulary comes from (FinetuneRequest.Vocab).
const (
	// VocabCorpus is a WordPiece vocabulary trained on the run's corpus (tokenizer.Trainer):
	// small, so the model is small and every token can be shown.
	VocabCorpus = "corpus"
	// VocabModel is the loaded model's vocabulary (30,522 tokens for bert-base-uncased).
	VocabModel = "model"
)

// FinetuneRequest are the settings of a training-lab run.
type FinetuneRequest struct {
	Task      string  `json:"task"`
	Epochs    int     `json:"epochs"`
	LR        float64 `json:"lr"`
	BatchSize int     `json:"batch_size"`
	Seed      uint64  `json:"seed"`
	// MaxLen is the sequence length (0: 128, cut to the model's positions).
	MaxLen int `json:"max_len,omitempty"`
	// MaxTrain keeps the first MaxTrain training examples (0: all), for short runs.
	MaxTrain int `json:"max_train,omitempty"`
	// GroupByLength batches sentences of about one length together (HF's group_by_length):
	// less padding, so a step computes fewer positions (train.FinetuneConfig.GroupByLength).
	GroupByLength bool `json:"group_by_length,omitempty"`

	// TaskMLM only (see lab.NewPretrain). Steps are the optimizer steps of the run (0: Epochs
	// over the corpus).
	Steps int `json:"steps,omitempty"`
	// Layers, Hidden and Heads size the new model (0: 2, 64, 2).
	Layers int `json:"layers,omitempty"`
	Hidden int `json:"hidden,omitempty"`
	Heads  int `json:"heads,omitempty"`
	// Vocab is VocabCorpus (default) or VocabModel; VocabSize the size of a corpus
	// vocabulary (0: MLMDefaultVocab).
	Vocab     string `json:"vocab,omitempty"`
	VocabSize int    `json:"vocab_size,omitempty"`
	// Text is the corpus: documents separated by blank lines, a sentence a line; "" trains
	// on the sample corpus (tinydata web/pretrain.txt).
	Text string `json:"text,omitempty"`
}

// FinetuneInfo describes a run that Labs.Start prepared.
type FinetuneInfo struct {
	Task          string   `json:"task"`
	Arch          string   `json:"arch"`
	Labels        []string `json:"labels"`
	MainMetric    string   `json:"main_metric"`
	TotalSteps    int      `json:"total_steps"`
	StepsPerEpoch int      `json:"steps_per_epoch"`
	Train         int      `json:"train"` // training examples
	Test          int      `json:"test"`  // test examples, scored after every epoch
	// MLM describes a pre-training run's model and data (TaskMLM only).
	MLM *PretrainInfo `json:"mlm,omitempty"`
}

// PretrainInfo describes the model and data of a pre-training run (FinetuneInfo.MLM).
type PretrainInfo struct {
	Layers       int   `json:"layers"`
	Hidden       int   `json:"hidden"`
	Heads        int   `json:"heads"`
	Intermediate int   `json:"intermediate"`
	Parameters   int64 `json:"parameters"`
	SeqLen       int   `json:"seq_len"`
	// Vocab is where the vocabulary comes from (VocabCorpus or VocabModel), VocabSize its size
	// and Tokens its tokens by id (empty for a vocabulary too large to show).
	Vocab     string   `json:"vocab"`
	VocabSize int      `json:"vocab_size"`
	Tokens    []string `json:"tokens,omitempty"`
	// Corpus: "sample" (tinydata web/pretrain.txt) or "text" (the user's), its documents,
	// sentences (lines) and tokens.
	Corpus      string `json:"corpus"`
	Documents   int    `json:"documents"`
	Sentences   int    `json:"sentences"`
	CorpusToken int    `json:"corpus_tokens"`
	// HeldOut reports that Test counts held-out instances; otherwise the evaluation set is the
	// training instances with one fixed mask each.
	HeldOut   bool `json:"held_out"`
	EvalEvery int  `json:"eval_every"` // steps between evaluations (and one before the first step)
}

// TaskPrediction is a fine-tuned model's answer for one text: class probabilities for
// sequence classification, a tag (with its probability) per word for token classification.
type TaskPrediction struct {
	Task   string    `json:"task"`
	Labels []string  `json:"labels,omitempty"`
	Probs  []float64 `json:"probs,omitempty"` // by label, classification
	Label  string    `json:"label,omitempty"` // the most probable class
	Words  []string  `json:"words,omitempty"` // tagging: the words, as the tokenizer splits them
	Tags   []string  `json:"tags,omitempty"`
	TagP   []float64 `json:"tag_probs,omitempty"`
	// Fill is a pre-training run's fill-mask answer (TaskMLM).
	Fill *pipeline.FillMaskResult `json:"fill,omitempty"`
}

// What masking did to a position (MaskLabResult.Kinds).
const (
	KindSpecial = "special" // [CLS], [SEP]: never chosen
	KindKept    = ""        // not chosen: the model predicts nothing here
	KindMask    = "mask"    // chosen, replaced by [MASK] (80%)
	KindRandom  = "random"  // chosen, replaced by a random token (10%)
	KindSame    = "same"    // chosen, left as it was (10%); the model must still predict it
)

// MaskLabResult is one text masked the way BERT's pre-training data is: what the masking lab shows.
type MaskLabResult struct {
	Tokens []string `json:"tokens"` // the text's tokens, [CLS] and [SEP] included
	Shown  []string `json:"shown"`  // the tokens the model reads after masking
	Kinds  []string `json:"kinds"`  // one of the Kind constants per position
	// Chosen are the predicted positions, ascending.
	Chosen       []int  `json:"chosen"`
	Maskable     int    `json:"maskable"`       // positions that may be chosen
	NumToPredict int    `json:"num_to_predict"` // round(15% of Maskable), capped
	Seed         uint64 `json:"seed"`
	WholeWord    bool   `json:"whole_word"`
	Truncated    bool   `json:"truncated"`
}

// NSPPair is one next-sentence-prediction instance: [CLS] A [SEP] B [SEP].
type NSPPair struct {
	Tokens   []string `json:"tokens"`
	Segments []int    `json:"segments"` // token_type_ids: 0 for A, 1 for B
	IsNext   bool     `json:"is_next"`  // B follows A in the document (label 0), else B is random (label 1)
	Doc      int      `json:"doc"`      // the document A comes from
}
