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
// "isnext"; absent, the model's own answer. The answers are core/engine's (Engine.Attributions,
// Lens, Ablation, Importance), which bound the request (integrated gradients: steps times the
// text's tokens at most engine.MaxIGTokenSteps).
var explainRoutes = []string{"/api/explain/attributions", "/api/explain/lens", "/api/explain/ablation"}

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
	h.routes[explainRoutes[0]] = h.explainRoute(func(r explain.Request, _ bool) (*explain.Report, error) {
		return h.e.Attributions(r)
	})
	h.routes[explainRoutes[1]] = h.explainRoute(func(r explain.Request, _ bool) (*explain.Report, error) {
		return h.e.Lens(r)
	})
	h.routes[explainRoutes[2]] = h.explainRoute(func(r explain.Request, importance bool) (*explain.Report, error) {
		if len(r.Ablate) == 0 {
			return nil, badRequest(`missing "ablate": give the heads to switch off, e.g. [{"layer": 0, "head": 1}]`)
		}
		rep, err := h.e.Ablation(r)
		if err != nil || !importance {
			return rep, err
		}
		imp, err := h.e.Importance(r)
		if err != nil {
			return nil, err
		}
		rep.Importance = imp.Importance
		return rep, nil
	})
}

// explainRoute parses an explanation request and checks what JSON can get wrong (a steps or
// top_k given as 0); the engine bounds the rest, and its errors are the client's (400).
func (h *Handler) explainRoute(answer func(explain.Request, bool) (*explain.Report, error)) route {
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
		return func() (any, error) {
			rep, err := answer(r, req.Importance)
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
