package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Config holds the tokenizer settings of a HuggingFace tokenizer_config.json.
type Config struct {
	// DoLowerCase lowercases the text (do_lower_case; "uncased" models).
	DoLowerCase bool
	// StripAccents removes accents (NFD, then drop category Mn) when true,
	// keeps them when false; nil follows DoLowerCase, as HuggingFace does.
	StripAccents *bool
	// TokenizeChineseChars makes every CJK ideograph a word of its own
	// (tokenize_chinese_chars).
	TokenizeChineseChars bool
	// ModelMaxLength is the longest input the model accepts, in tokens
	// (model_max_length); 0 means unknown or unlimited. The tokenizer itself
	// does not apply it: pass it to Encode as maxLen.
	ModelMaxLength int
	// UnkToken, SepToken, PadToken, ClsToken and MaskToken name the special
	// tokens (unk_token, sep_token, pad_token, cls_token, mask_token).
	UnkToken, SepToken, PadToken, ClsToken, MaskToken string
}

// DefaultConfig returns the settings HuggingFace uses for keys that a
// tokenizer_config.json leaves out: lowercasing, accents following
// lowercasing, CJK splitting, no known maximum length, and the usual BERT
// special tokens.
func DefaultConfig() Config {
	return Config{
		DoLowerCase:          true,
		TokenizeChineseChars: true,
		UnkToken:             "[UNK]",
		SepToken:             "[SEP]",
		PadToken:             "[PAD]",
		ClsToken:             "[CLS]",
		MaskToken:            "[MASK]",
	}
}

// stripAccents reports whether accents are removed under c.
func (c Config) stripAccents() bool {
	if c.StripAccents != nil {
		return *c.StripAccents
	}
	return c.DoLowerCase
}

// ParseConfig parses a HuggingFace tokenizer_config.json. Keys it does not
// know are ignored and keys it knows but that are absent take the values of
// DefaultConfig. Special tokens may be given as strings or as AddedToken
// objects ({"content": "[MASK]", ...}); a model_max_length of 1e18 or more
// (HuggingFace writes int(1e30) for "no limit") becomes 0.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if err := c.UnmarshalJSON(data); err != nil {
		return Config{}, err
	}
	return c, nil
}

// UnmarshalJSON parses c from tokenizer_config.json as ParseConfig does.
func (c *Config) UnmarshalJSON(data []byte) error {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return errors.New("tokenizer config: not a JSON object")
	}
	var raw struct {
		DoLowerCase          *bool           `json:"do_lower_case"`
		StripAccents         *bool           `json:"strip_accents"`
		TokenizeChineseChars *bool           `json:"tokenize_chinese_chars"`
		ModelMaxLength       *json.Number    `json:"model_max_length"`
		UnkToken             json.RawMessage `json:"unk_token"`
		SepToken             json.RawMessage `json:"sep_token"`
		PadToken             json.RawMessage `json:"pad_token"`
		ClsToken             json.RawMessage `json:"cls_token"`
		MaskToken            json.RawMessage `json:"mask_token"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("tokenizer config: %w", err)
	}
	out := DefaultConfig()
	if raw.DoLowerCase != nil {
		out.DoLowerCase = *raw.DoLowerCase
	}
	out.StripAccents = raw.StripAccents
	if raw.TokenizeChineseChars != nil {
		out.TokenizeChineseChars = *raw.TokenizeChineseChars
	}
	if raw.ModelMaxLength != nil {
		n, err := parseMaxLength(*raw.ModelMaxLength)
		if err != nil {
			return fmt.Errorf("tokenizer config: model_max_length: %w", err)
		}
		out.ModelMaxLength = n
	}
	for _, f := range []struct {
		key string
		raw json.RawMessage
		dst *string
	}{
		{"unk_token", raw.UnkToken, &out.UnkToken},
		{"sep_token", raw.SepToken, &out.SepToken},
		{"pad_token", raw.PadToken, &out.PadToken},
		{"cls_token", raw.ClsToken, &out.ClsToken},
		{"mask_token", raw.MaskToken, &out.MaskToken},
	} {
		if err := parseTokenName(f.raw, f.dst); err != nil {
			return fmt.Errorf("tokenizer config: %s: %w", f.key, err)
		}
	}
	*c = out
	return nil
}

// parseMaxLength reads model_max_length, mapping HuggingFace's "very large
// integer" (no limit) to 0.
func parseMaxLength(n json.Number) (int, error) {
	if i, err := n.Int64(); err == nil {
		switch {
		case i < 0:
			return 0, fmt.Errorf("negative value %d", i)
		case i >= 1e18:
			return 0, nil
		}
		return int(i), nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil && !(errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0)) {
		return 0, fmt.Errorf("invalid value %s", n.String())
	}
	switch {
	case f >= 1e18 || math.IsInf(f, 1):
		return 0, nil
	case f < 0:
		return 0, fmt.Errorf("negative value %s", n.String())
	case f != math.Trunc(f):
		return 0, fmt.Errorf("not an integer: %s", n.String())
	}
	return int(f), nil
}

// parseTokenName reads a special token given as a string, as an AddedToken
// object with a "content" string, or as null (keep the default).
func parseTokenName(raw json.RawMessage, dst *string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '{' {
		var obj struct {
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
		if obj.Content == nil {
			return errors.New(`object without a "content" string`)
		}
		*dst = *obj.Content
		return nil
	}
	return json.Unmarshal(raw, dst)
}

// MarshalJSON writes c as a HuggingFace tokenizer_config.json for
// BertTokenizer; model_max_length is left out when it is 0 (unlimited).
func (c Config) MarshalJSON() ([]byte, error) {
	out := struct {
		TokenizerClass       string `json:"tokenizer_class"`
		DoLowerCase          bool   `json:"do_lower_case"`
		StripAccents         *bool  `json:"strip_accents"`
		TokenizeChineseChars bool   `json:"tokenize_chinese_chars"`
		ModelMaxLength       int    `json:"model_max_length,omitempty"`
		UnkToken             string `json:"unk_token"`
		SepToken             string `json:"sep_token"`
		PadToken             string `json:"pad_token"`
		ClsToken             string `json:"cls_token"`
		MaskToken            string `json:"mask_token"`
	}{
		"BertTokenizer", c.DoLowerCase, c.StripAccents, c.TokenizeChineseChars, c.ModelMaxLength,
		c.UnkToken, c.SepToken, c.PadToken, c.ClsToken, c.MaskToken,
	}
	return json.Marshal(out)
}
