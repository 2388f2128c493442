package tokenizer

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReadVocab(t *testing.T) {
	for _, c := range []struct {
		name, in string
		tokens   []string
		err      string // substring of the error; "" for none
	}{
		{"plain", "a\nb\nc\n", []string{"a", "b", "c"}, ""},
		{"no final newline", "a\nb\nc", []string{"a", "b", "c"}, ""},
		{"crlf", "a\r\nb\r\nc\r\n", []string{"a", "b", "c"}, ""},
		{"mixed", "a\r\nb\nc", []string{"a", "b", "c"}, ""},
		{"empty line is a token", "a\n\nb\n", []string{"a", "", "b"}, ""},
		{"inner spaces kept", " a\nb c\n", []string{" a", "b c"}, ""},
		{"unicode", "[PAD]\n##😀\n我\n", []string{"[PAD]", "##😀", "我"}, ""},
		{"empty", "", nil, "no tokens"},
		{"duplicate", "a\nb\nc\nb\n", nil, `vocab line 4: duplicate token "b" (first at id 1, line 2)`},
		{"duplicate after crlf", "a\r\na\n", nil, "line 2: duplicate"},
		{"duplicate empty", "a\n\n\n", nil, "line 3: duplicate"},
		{"invalid utf-8", "a\n\xff\xfe\n", nil, "line 2: token \"\\xff\\xfe\" is not valid UTF-8"},
		{"too long", "a\n" + strings.Repeat("x", MaxTokenBytes+1) + "\n", nil, "vocab line 2: token of 1025 bytes, longer than 1024"},
		{"far too long", "a\n" + strings.Repeat("x", 1<<20), nil, "vocab line 2: longer than 1024 bytes"},
		{"longest allowed", strings.Repeat("x", MaxTokenBytes) + "\r\n", []string{strings.Repeat("x", MaxTokenBytes)}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := ReadVocab(strings.NewReader(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v.tokens, c.tokens) || v.Len() != len(c.tokens) {
				t.Fatalf("tokens %q, want %q", v.tokens, c.tokens)
			}
			for i, tok := range c.tokens {
				if id, ok := v.ID(tok); !ok || id != i || v.Token(i) != tok {
					t.Errorf("ID(%q) = %d, %v; Token(%d) = %q", tok, id, ok, i, v.Token(i))
				}
			}
		})
	}
}

func TestVocabAccessors(t *testing.T) {
	v := mustVocab(t, "a", "##b", "[UNK]")
	if id, ok := v.ID("##b"); !ok || id != 1 {
		t.Errorf("ID(##b) = %d, %v", id, ok)
	}
	if _, ok := v.ID("b"); ok {
		t.Error(`ID("b") found`)
	}
	if v.Token(-1) != "" || v.Token(3) != "" {
		t.Error("Token out of range is not empty")
	}
	for _, bad := range [][]string{nil, {"a", "a"}, {"a\nb"}, {"a\r"}, {"\xff"}} {
		if _, err := NewVocab(bad); err == nil {
			t.Errorf("NewVocab(%q): no error", bad)
		}
	}
}

func TestVocabWriteTo(t *testing.T) {
	in := "[PAD]\n\nb c\n##😀\n"
	v, err := ReadVocab(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := v.WriteTo(&buf)
	if err != nil || n != int64(len(in)) || buf.String() != in {
		t.Fatalf("WriteTo = %d, %v: %q, want %q", n, err, buf.String(), in)
	}
	fail := &failWriter{left: 5}
	if n, err := v.WriteTo(fail); err == nil || n != 5 {
		t.Errorf("failing writer: %d, %v", n, err)
	}
}

type failWriter struct{ left int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errors.New("disk full")
	}
	w.left -= len(p)
	return len(p), nil
}

func TestConfig(t *testing.T) {
	yes, no := true, false
	def := DefaultConfig()
	with := func(f func(*Config)) Config {
		c := DefaultConfig()
		f(&c)
		return c
	}
	for _, c := range []struct {
		name, in string
		want     Config
		err      string
	}{
		{"empty object", `{}`, def, ""},
		{"uncased fixture", `{"tokenizer_class": "BertTokenizer", "do_lower_case": true, "tokenize_chinese_chars": true,
			"strip_accents": null, "do_basic_tokenize": true, "never_split": null, "unk_token": "[UNK]",
			"model_max_length": 512, "clean_up_tokenization_spaces": true}`, with(func(c *Config) { c.ModelMaxLength = 512 }), ""},
		{"cased", `{"do_lower_case": false}`, with(func(c *Config) { c.DoLowerCase = false }), ""},
		{"strip accents", `{"strip_accents": true}`, with(func(c *Config) { c.StripAccents = &yes }), ""},
		{"keep accents", `{"strip_accents": false, "tokenize_chinese_chars": false}`,
			with(func(c *Config) { c.StripAccents = &no; c.TokenizeChineseChars = false }), ""},
		{"added token objects", `{"mask_token": {"__type": "AddedToken", "content": "<mask>", "lstrip": true}, "cls_token": null}`,
			with(func(c *Config) { c.MaskToken = "<mask>" }), ""},
		{"very large max length", `{"model_max_length": 1000000000000000019884624838656}`, def, ""},
		{"max length as float", `{"model_max_length": 512.0}`, with(func(c *Config) { c.ModelMaxLength = 512 }), ""},
		{"huge exponent", `{"model_max_length": 1e999}`, def, ""},
		{"negative max length", `{"model_max_length": -1}`, Config{}, "model_max_length: negative"},
		{"fractional max length", `{"model_max_length": 1.5}`, Config{}, "model_max_length: not an integer"},
		{"bool as string", `{"do_lower_case": "false"}`, Config{}, "tokenizer config"},
		{"token as number", `{"unk_token": 5}`, Config{}, "unk_token"},
		{"object without content", `{"sep_token": {"id": 3}}`, Config{}, `sep_token: object without a "content"`},
		{"array", `[]`, Config{}, "not a JSON object"},
		{"null", `null`, Config{}, "not a JSON object"},
		{"truncated", `{"do_lower_case": tr`, Config{}, "tokenizer config"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !configEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			// Marshal and parse back.
			data, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseConfig(data)
			if err != nil || !configEqual(back, got) {
				t.Fatalf("round trip through %s: %+v, %v", data, back, err)
			}
		})
	}
}

func TestConfigJSON(t *testing.T) {
	c := DefaultConfig()
	c.ModelMaxLength = 512
	data, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tokenizer_class":"BertTokenizer","do_lower_case":true,"strip_accents":null,"tokenize_chinese_chars":true,` +
		`"model_max_length":512,"unk_token":"[UNK]","sep_token":"[SEP]","pad_token":"[PAD]","cls_token":"[CLS]","mask_token":"[MASK]"}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
}
