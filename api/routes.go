package api

import (
	"net/http"

	"github.com/bertlab/bertlab/core/pipeline"
)

// The request bodies. Pointers tell an absent field from a zero one.

type fillMaskRequest struct {
	Text *string `json:"text"`
	Pair *string `json:"pair"`
	TopK *int    `json:"top_k"`
}

type tokenizeRequest struct {
	Text *string `json:"text"`
	Pair *string `json:"pair"`
}

type attentionRequest struct {
	Text  *string `json:"text"`
	Pair  *string `json:"pair"`
	Layer *int    `json:"layer"`
}

type embedRequest struct {
	Texts   []string `json:"texts"`
	Pooling string   `json:"pooling"`
}

// FillMaskResponse is the answer of /api/fill-mask: the JSON of `bertlab fill-mask --json` with
// the truncation flag.
type FillMaskResponse struct {
	*pipeline.FillMaskResult
	// Truncated reports that the text was cut to the model's max_position_embeddings tokens.
	Truncated bool `json:"truncated"`
}

// TokenizeResponse is the answer of /api/tokenize, in the layout of `bertlab tokenize`: offsets
// are character (code point) spans into the text they came from, [0, 0] for added specials.
type TokenizeResponse struct {
	InputIDs     []int    `json:"input_ids"`
	Tokens       []string `json:"tokens"`
	TokenTypeIDs []int    `json:"token_type_ids"`
	Offsets      [][2]int `json:"offsets"`
	Truncated    bool     `json:"truncated"`
}

const defaultTopK = 5

// A route parses and checks a request body and returns the computation that answers it, which
// runs in a computation slot; a bad request is refused before it takes one.
type route func(body []byte) (compute func() (any, error), err error)

func needText(text *string) error {
	if text == nil {
		return badRequest(`missing "text"`)
	}
	return nil
}

func (h *Handler) fillMask(body []byte) (func() (any, error), error) {
	var req fillMaskRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if err := needText(req.Text); err != nil {
		return nil, err
	}
	k := defaultTopK
	if req.TopK != nil {
		k = *req.TopK
	}
	if k < 1 || k > pipeline.MaxTopK {
		return nil, badRequest("top_k %d outside [1, %d]", k, pipeline.MaxTopK)
	}
	if h.e.Model().MLM == nil {
		return nil, &httpError{http.StatusNotImplemented, "fill-mask is not available: the model has no MLM head (cls.predictions)"}
	}
	return func() (any, error) {
		// FillMask truncates as Tokenize does here; encoding twice costs little beside the model.
		enc, err := h.e.Tokenize(*req.Text, req.Pair)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		res, err := h.e.FillMask(*req.Text, req.Pair, k)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		return FillMaskResponse{res, enc.Truncated}, nil
	}, nil
}

func (h *Handler) tokenize(body []byte) (func() (any, error), error) {
	var req tokenizeRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if err := needText(req.Text); err != nil {
		return nil, err
	}
	return func() (any, error) {
		enc, err := h.e.Tokenize(*req.Text, req.Pair)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		return TokenizeResponse{InputIDs: enc.IDs, Tokens: enc.Tokens, TokenTypeIDs: enc.TypeIDs, Offsets: enc.Offsets, Truncated: enc.Truncated}, nil
	}, nil
}

func (h *Handler) attention(body []byte) (func() (any, error), error) {
	var req attentionRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if err := needText(req.Text); err != nil {
		return nil, err
	}
	layer := 0
	if req.Layer != nil {
		layer = *req.Layer
	}
	if L := h.e.Model().Config.NumHiddenLayers; layer < 0 || layer >= L {
		return nil, badRequest("layer %d outside [0, %d]", layer, L-1)
	}
	return func() (any, error) {
		res, err := h.e.AttentionLayer(*req.Text, req.Pair, layer)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		return res, nil
	}, nil
}

func (h *Handler) embed(body []byte) (func() (any, error), error) {
	var req embedRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if len(req.Texts) == 0 {
		return nil, badRequest(`missing "texts": give a list of one to %d texts`, h.opt.MaxTexts)
	}
	if len(req.Texts) > h.opt.MaxTexts {
		return nil, badRequest("%d texts: at most %d per request", len(req.Texts), h.opt.MaxTexts)
	}
	pooling, err := pipeline.ParsePooling(req.Pooling)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return func() (any, error) {
		res, err := h.e.Embed(req.Texts, pooling)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		return res, nil
	}, nil
}
