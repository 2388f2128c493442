package hf

import "testing"

func TestCanonicalName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"bert.embeddings.LayerNorm.gamma", "bert.embeddings.LayerNorm.weight"},
		{"bert.embeddings.LayerNorm.beta", "bert.embeddings.LayerNorm.bias"},
		{"bert.encoder.layer.11.attention.output.LayerNorm.gamma", "bert.encoder.layer.11.attention.output.LayerNorm.weight"},
		{"bert.encoder.layer.0.output.LayerNorm.beta", "bert.encoder.layer.0.output.LayerNorm.bias"},
		{"cls.predictions.transform.LayerNorm.gamma", "cls.predictions.transform.LayerNorm.weight"},
		{"embeddings.LayerNorm.gamma", "embeddings.LayerNorm.weight"}, // no "bert." prefix
		{"LayerNorm.beta", "LayerNorm.bias"},
		// Already canonical: unchanged.
		{"bert.embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.weight"},
		{"bert.embeddings.LayerNorm.bias", "bert.embeddings.LayerNorm.bias"},
		{"bert.embeddings.word_embeddings.weight", "bert.embeddings.word_embeddings.weight"},
		{"cls.predictions.bias", "cls.predictions.bias"},
		// gamma/beta that are not a LayerNorm's parameter are left alone, as transformers does.
		{"encoder.scale.gamma", "encoder.scale.gamma"},
		{"bert.embeddings.beta", "bert.embeddings.beta"},
		{"bert.embeddings.LayerNorm.gamma.extra", "bert.embeddings.LayerNorm.gamma.extra"},
		{"bert.embeddings.LayerNorm.gammas", "bert.embeddings.LayerNorm.gammas"},
		{"bert.embeddings.layernorm.gamma", "bert.embeddings.layernorm.gamma"}, // case matters
		{"", ""},
	}
	for _, tt := range tests {
		if got := CanonicalName(tt.in); got != tt.want {
			t.Errorf("CanonicalName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
