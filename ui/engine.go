// Package ui is the bertlab page: vugu components, one file pair per view. The components hold
// no model math: every number they show comes from an Engine (in the browser, core/engine in the
// engine wasm in a Web Worker; in tests, the same core/engine run natively).
package ui

//go:generate go tool vugugen -s -skip-go-mod -skip-main

import (
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/pipeline"
)

// Engine is what the page asks for numbers. Its methods block until the answer comes, so the
// page calls them from goroutines, never from an event handler (which holds the render lock).
type Engine interface {
	// Models lists the model folders the page can load (assets/models/index.json).
	Models() (*ModelIndex, error)
	// Load loads the model folder at url (relative to the page), replacing the current model.
	Load(m ModelRef) (*ModelInfo, error)
	// LoadFiles loads a model folder the user picked (config.json, model.safetensors and the
	// tokenizer's files, PickModelFiles), replacing the current model; a failed load keeps it.
	LoadFiles(files []LocalFile) (*ModelInfo, error)
	// Tokenize, FillMask and Attention read the pair (text, pair) when pair is not "": BERT's
	// two segments, sentence A and sentence B.
	Tokenize(text, pair string) (*Tokens, error)
	FillMask(text, pair string, topK int) (*pipeline.FillMaskResult, error)
	// NextSentence is the next-sentence prediction of the pair (pipeline.NextSentence).
	NextSentence(text, pair string) (*pipeline.NSPResult, error)
	// Attention returns every layer's attention probabilities, layer 0 first.
	Attention(text, pair string) ([]pipeline.AttentionResult, error)
	// Steps walks layer's operations for the token at position token (pipeline.Steps).
	Steps(text string, layer, token int) (*pipeline.StepsResult, error)
	// MaskLab masks text as BERT's pre-training does, drawing from seed (lab.MaskLab).
	MaskLab(text string, seed int, wholeWord bool) (*engine.MaskLabResult, error)
	// NSPPairs builds n next-sentence instances from the sample corpus (lab.NSPPairs).
	NSPPairs(seed, n int) ([]engine.NSPPair, error)
	// Samples lists the sentences of the sample corpus (lab.SampleSentences).
	Samples() ([]string, error)
	// Embeddings maps every token of sentences to 2-D at every layer, layer 0 (the embedding
	// output) first, one PCA per layer (pipeline.EmbeddingLayers).
	Embeddings(sentences []string, opts pipeline.EmbeddingMapOptions) ([]pipeline.EmbeddingMapResult, error)

	// Attributions, Lens, Ablation and Importance answer the explanation questions of
	// core/explain ("why did BERT say that?") as core/engine's methods of those names do.
	Attributions(r explain.Request) (*explain.Report, error)
	Lens(r explain.Request) (*explain.Report, error)
	Ablation(r explain.Request) (*explain.Report, error)
	Importance(r explain.Request) (*explain.Report, error)
	// Neuron is the neuron view of one attention row (engine.Neuron).
	Neuron(r engine.NeuronRequest) (*explain.Neuron, error)

	// TrainStart prepares a training-lab run (lab.NewFinetune) on a copy of the loaded
	// model, replacing the previous run.
	TrainStart(req engine.FinetuneRequest) (*engine.FinetuneInfo, error)
	// TrainStep does the run's next step, or its evaluation after an epoch (Finetune.Advance).
	TrainStep() (*TrainEvents, error)
	// TrainStop ends the run where it is.
	TrainStop() (*TrainEvents, error)
	// TrainPredict runs the run's model on text.
	TrainPredict(text string) (*engine.TaskPrediction, error)
	// TrainExport returns the run's model as a zip of its HF folder, and the archive's name.
	TrainExport() (name string, zip []byte, err error)

	// The family views' questions (family.go).
	FamilyEngine
}

// TrainEvents is the engine's answer to a training step: what happened, and whether the run
// has ended.
type TrainEvents = engine.TrainEvents

// ModelIndex is assets/models/index.json.
type ModelIndex struct {
	// Default names the model the page loads first; "" means the first of Models.
	Default string     `json:"default,omitempty"`
	Models  []ModelRef `json:"models"`
}

// ModelRef is one model folder of the index.
type ModelRef struct {
	Name string `json:"name"`
	// Path is the folder's URL relative to models/, ending in "/".
	Path string `json:"path"`
	// Files are the folder's files the engine needs (config.json, model.safetensors, vocab.txt
	// and tokenizer_config.json when present).
	Files []string `json:"files"`
	// Note is shown under the header, e.g. that the weights are random.
	Note string `json:"note,omitempty"`
}

// ModelInfo is what the engine reports after a load.
type ModelInfo struct {
	Parameters int64    `json:"parameters"`
	Heads      []string `json:"heads"`
	Notes      []string `json:"notes"`
	Config     struct {
		VocabSize             int    `json:"vocab_size"`
		HiddenSize            int    `json:"hidden_size"`
		NumHiddenLayers       int    `json:"num_hidden_layers"`
		NumAttentionHeads     int    `json:"num_attention_heads"`
		MaxPositionEmbeddings int    `json:"max_position_embeddings"`
		IntermediateSize      int    `json:"intermediate_size"`
		TypeVocabSize         int    `json:"type_vocab_size"`
		HiddenAct             string `json:"hidden_act"`
	} `json:"config"`
	// Tokenizer is the tokenizer's kind ("wordpiece", "bpe", "unigram") and MaskToken its mask
	// token ("[MASK]", RoBERTa's "<mask>"; the page writes [MASK], which the engine reads as it).
	Tokenizer string `json:"tokenizer"`
	MaskToken string `json:"mask_token"`
	// Family describes the model's family (engine.DescribeFamily).
	Family *FamilyCard `json:"family"`
}

// Tokens is the engine's tokenize answer for one text, [CLS] and [SEP] included.
type Tokens = engine.Tokens
