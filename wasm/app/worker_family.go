//go:build js && wasm

package main

import "github.com/bertlab/bertlab/core/pipeline"

// Replaced asks the worker for ELECTRA's replaced-token probabilities (bertlab.replaced).
func (e *workerEngine) Replaced(text, pair string) (*pipeline.ReplacedResult, error) {
	var r pipeline.ReplacedResult
	return &r, e.call(&r, "replaced", withPair(pair, text)...)
}

// AttentionParts asks the worker for one layer of DeBERTa's split scores
// (bertlab.attentionParts).
func (e *workerEngine) AttentionParts(text, pair string, layer int) (*pipeline.AttentionPartsResult, error) {
	var r pipeline.AttentionPartsResult
	return &r, e.call(&r, "attentionParts", text, layer, pair)
}
