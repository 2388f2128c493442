package api

import (
	"net/http"

	"github.com/bertlab/bertlab/core/explain"
)

// The explanation routes (core/explain), all POST with a JSON body:
//
//	/api/explain/attributions {"text", "pair"?, "target"?, "method"? ("gxi"|"ig"), "steps"? (1..256),
//	                           "baseline"? ("mask"|"pad")}                -> explain.Report with "attribution"
//	/api/explain/lens         {"text", "pair"?, "target"?, "top_k"?}      -> explain.Report with "lens"
//	/api/explain/ablation     {"text", "pair"?, "ablate": [{"layer", "head"}...], "top_k"?,
//	                           "importance"?, "target"?}                  -> explain.Report with "ablation"
//	                                                                         (and "importance")
//
// "target" is as `bertlab explain --target` takes it: a word (its logit at the first [MASK]) or
// "isnext"; absent, the model's own answer. Integrated gradients cost steps forward and backward
// passes: steps times the text's tokens is bounded by maxIGTokenSteps.
var explainRoutes = []string{"/api/explain/attributions", "/api/explain/lens", "/api/explain/ablation"}

// maxIGTokenSteps bounds steps × tokens of one integrated-gradients request: 256 steps on 128
// tokens, 64 on 512.
const maxIGTokenSteps = 256 * 128

func init() { apiRoutes = append(apiRoutes, explainRoutes...) }

type explainRequest struct {
	Text       *string        `json:"text"`
	Pair       *string        `json:"pair"`
	Target     *string        `json:"target"`
	Method     *string        `json:"method"`
	Steps      *int           `json:"steps"`
	Baseline   *string        `json:"baseline"`
	TopK       *int           `json:"top_k"`
	Ablate     []explain.Head `json:"ablate"`
	Importance bool           `json:"importance"`
}

// addExplainRoutes registers the explanation routes.
func (h *Handler) addExplainRoutes() {
	h.routes[explainRoutes[0]] = h.explainRoute(func(e *explain.Explainer, r explain.Request, _ bool) (*explain.Report, error) {
		return e.Attribute(r)
	})
	h.routes[explainRoutes[1]] = h.explainRoute(func(e *explain.Explainer, r explain.Request, _ bool) (*explain.Report, error) {
		return e.Lens(r)
	})
	h.routes[explainRoutes[2]] = h.explainRoute(func(e *explain.Explainer, r explain.Request, importance bool) (*explain.Report, error) {
		if len(r.Ablate) == 0 {
			return nil, badRequest(`missing "ablate": give the heads to switch off, e.g. [{"layer": 0, "head": 1}]`)
		}
		rep, err := e.Ablation(r)
		if err != nil || !importance {
			return rep, err
		}
		imp, err := e.Importance(r)
		if err != nil {
			return nil, err
		}
		rep.Importance = imp.Importance
		return rep, nil
	})
}

// explainRoute parses and bounds an explanation request; answer computes it.
func (h *Handler) explainRoute(answer func(*explain.Explainer, explain.Request, bool) (*explain.Report, error)) route {
	return func(body []byte) (func() (any, error), error) {
		var req explainRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		if err := needText(req.Text); err != nil {
			return nil, err
		}
		r := explain.Request{Text: *req.Text, Ablate: req.Ablate}
		for _, f := range []struct {
			dst *string
			src *string
		}{{&r.Pair, req.Pair}, {&r.Target, req.Target}, {&r.Method, req.Method}, {&r.Baseline, req.Baseline}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if req.Steps != nil {
			if *req.Steps < 1 || *req.Steps > explain.MaxSteps {
				return nil, badRequest("steps %d outside [1, %d]", *req.Steps, explain.MaxSteps)
			}
			r.Steps = *req.Steps
		}
		if req.TopK != nil {
			if *req.TopK < 1 || *req.TopK > explain.MaxTopK {
				return nil, badRequest("top_k %d outside [1, %d]", *req.TopK, explain.MaxTopK)
			}
			r.TopK = *req.TopK
		}
		c := h.e.Model().Config
		if n := c.NumHiddenLayers * c.NumAttentionHeads; len(req.Ablate) > n {
			return nil, badRequest("%d heads to ablate: the model has %d", len(req.Ablate), n)
		}
		if _, err := explain.HeadMask(c, req.Ablate); err != nil {
			return nil, badRequest("ablate: %v", err)
		}
		m, tok := h.e.Model(), h.e.Tokenizer()
		e := &explain.Explainer{Model: explain.PreTraining(m), Tok: tok}
		return func() (any, error) {
			if r.Method == explain.MethodIG {
				enc, err := explainEncode(e, r)
				if err != nil {
					return nil, badRequest("%v", err)
				}
				steps := r.Steps
				if steps == 0 {
					steps = explain.DefaultSteps
				}
				if steps*enc > maxIGTokenSteps {
					return nil, badRequest("integrated gradients over %d tokens x %d steps exceed %d: use fewer steps or a shorter text", enc, steps, maxIGTokenSteps)
				}
			}
			rep, err := answer(e, r, req.Importance)
			if err != nil {
				if _, ok := err.(*httpError); ok {
					return nil, err
				}
				return nil, &httpError{http.StatusBadRequest, err.Error()}
			}
			return rep, nil
		}, nil
	}
}

// explainEncode is the number of tokens the request's text encodes to.
func explainEncode(e *explain.Explainer, r explain.Request) (int, error) {
	maxLen := e.Model.Bert.Config.MaxPositionEmbeddings
	if r.Pair != "" {
		enc, err := e.Tok.EncodePair(r.Text, r.Pair, maxLen)
		return enc.Len(), err
	}
	enc, err := e.Tok.Encode(r.Text, maxLen)
	return enc.Len(), err
}
