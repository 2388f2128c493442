package hf

import "strings"

// legacyLayerNorm maps the LayerNorm parameter names of checkpoints ported from the original
// TensorFlow BERT (gamma, beta) to the names transformers uses today (weight, bias).
var legacyLayerNorm = [...]struct{ old, new string }{
	{"LayerNorm.gamma", "LayerNorm.weight"},
	{"LayerNorm.beta", "LayerNorm.bias"},
}

// CanonicalName returns the current HuggingFace name of a parameter that older checkpoints store
// under a legacy name: "…LayerNorm.gamma" becomes "…LayerNorm.weight" and "…LayerNorm.beta"
// becomes "…LayerNorm.bias". Every other name is returned unchanged.
//
// The rule is the one transformers applies when loading (a suffix match on "LayerNorm.gamma" and
// "LayerNorm.beta"), so a name it renames is renamed here and no other. Prefix handling ("bert.")
// and stale buffers such as position_ids belong to the folder loader, not here.
func CanonicalName(name string) string {
	for _, r := range legacyLayerNorm {
		if strings.HasSuffix(name, r.old) {
			return name[:len(name)-len(r.old)] + r.new
		}
	}
	return name
}
