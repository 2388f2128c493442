package api

// The family routes, POST with a JSON body:
//
//	/api/replaced         {"text", "pair"?}             -> pipeline.ReplacedResult: ELECTRA's
//	                                                       discriminator, each token's probability
//	                                                       of having been replaced
//	/api/attention-parts  {"text", "pair"?, "layer"?}   -> pipeline.AttentionPartsResult: one layer
//	                                                       of DeBERTa's scores split into c2c, c2p
//	                                                       and p2c (layer 0 when absent)
//
// A model without the part asked for (no replaced-token head, no disentangled attention) answers
// 400 with the engine's message.
var familyRoutes = []string{"/api/replaced", "/api/attention-parts"}

func init() { apiRoutes = append(apiRoutes, familyRoutes...) }

type replacedRequest struct {
	Text *string `json:"text"`
	Pair *string `json:"pair"`
}

// addFamilyRoutes registers the family routes.
func (h *Handler) addFamilyRoutes() {
	h.routes[familyRoutes[0]] = func(body []byte) (func() (any, error), error) {
		var req replacedRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		if err := needText(req.Text); err != nil {
			return nil, err
		}
		if h.e.Model().RTD == nil {
			return nil, badRequest("the model has no replaced-token head (an ELECTRA discriminator, ElectraForPreTraining)")
		}
		return func() (any, error) {
			res, err := h.e.Replaced(*req.Text, req.Pair)
			if err != nil {
				return nil, badRequest("%v", err)
			}
			return res, nil
		}, nil
	}
	h.routes[familyRoutes[1]] = func(body []byte) (func() (any, error), error) {
		var req attentionRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		if err := needText(req.Text); err != nil {
			return nil, err
		}
		c := h.e.Model().Config
		if c.Disentangled == nil {
			return nil, badRequest("model_type %q has no disentangled attention to split (DeBERTa-v2/v3 only)", c.FamilyOf())
		}
		layer := 0
		if req.Layer != nil {
			layer = *req.Layer
		}
		if layer < 0 || layer >= c.NumHiddenLayers {
			return nil, badRequest("layer %d outside [0, %d]", layer, c.NumHiddenLayers-1)
		}
		return func() (any, error) {
			res, err := h.e.AttentionParts(*req.Text, req.Pair, layer)
			if err != nil {
				return nil, badRequest("%v", err)
			}
			return res, nil
		}, nil
	}
}
