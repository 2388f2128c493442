// Package lab is bertlab's training labs, apart from inference (core/pipeline): fine-tuning
// (Finetune), pre-training a small BERT from scratch (Pretrain) and the masking lab (MaskLab,
// NSPPairs). Each run is an engine.Run (advance, stop, predict, export) and Labs is the
// engine.Labs that the browser's engine holds; they train on tinydata's sample, which the
// HTTP API, answering inference only, does not link.
package lab

import (
	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// Labs is the engine.Labs of this package.
type Labs struct{}

var _ engine.Labs = Labs{}

// Start prepares a run of req: Pretrain for engine.TaskMLM (body is not used: the run starts
// from random weights; tok is the loaded model's tokenizer, whose vocabulary the run may take),
// Finetune for the other tasks.
func (Labs) Start(body *bert.Model, tok *tokenizer.Tokenizer, req engine.FinetuneRequest) (engine.Run, error) {
	if req.Task == engine.TaskMLM {
		return NewPretrain(tok, req)
	}
	return NewFinetune(body, tok, req)
}

// MaskLab is the package's MaskLab.
func (Labs) MaskLab(tok *tokenizer.Tokenizer, text string, maxLen int, seed uint64, wholeWord bool) (*engine.MaskLabResult, error) {
	return MaskLab(tok, text, maxLen, seed, wholeWord)
}

// NSPPairs is the package's NSPPairs.
func (Labs) NSPPairs(tok *tokenizer.Tokenizer, seed uint64, n int) ([]engine.NSPPair, error) {
	return NSPPairs(tok, seed, n)
}

// Samples is SampleSentences.
func (Labs) Samples() ([]string, error) { return SampleSentences() }
