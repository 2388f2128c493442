//go:build js && wasm

package engine

import (
	"fmt"
	"syscall/js"
)

// serveFamily adds the family views' functions to the `bertlab` object:
//
//	bertlab.replaced(text[, pair]) -> pipeline.ReplacedResult (ELECTRA's discriminator: each token's
//	                                  probability of having been replaced)
//	bertlab.attentionParts(text, layer[, pair]) -> pipeline.AttentionPartsResult (one layer of
//	                                  DeBERTa's scores split into c2c, c2p and p2c)
func serveFamily(e *engine, api js.Value) {
	api.Set("replaced", jsFunc(e.replaced))
	api.Set("attentionParts", jsFunc(e.attentionParts))
}

func (e *engine) replaced(args []js.Value) (any, error) {
	text, err := textArg(args, "replaced: want (text[, pair])")
	if err != nil {
		return nil, err
	}
	return e.e.Replaced(text, optString(args, 1))
}

func (e *engine) attentionParts(args []js.Value) (any, error) {
	if len(args) < 2 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("attentionParts: want (text, layer[, pair])")
	}
	layer, err := intArg(args, 1, "attentionParts")
	if err != nil {
		return nil, err
	}
	var pair *string
	if p := optString(args, 2); p != nil && *p != "" {
		pair = p
	}
	return e.e.AttentionParts(args[0].String(), pair, layer)
}
