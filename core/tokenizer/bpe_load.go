package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// File names of a byte-level BPE tokenizer in a HuggingFace model folder.
const (
	// TokenizerJSONFile is the tokenizers library's own file: model,
	// pre-tokenizer, post-processor, decoder and added tokens together.
	TokenizerJSONFile = "tokenizer.json"
	// BPEVocabFile maps each vocabulary entry to its id (the "slow" files).
	BPEVocabFile = "vocab.json"
	// BPEMergesFile lists the merges, one "left right" pair a line, by rank.
	BPEMergesFile = "merges.txt"
)

// Limits on files read from outside, so that a broken or hostile file fails
// with an error instead of exhausting memory.
const (
	// MaxBPEFileSize is the largest tokenizer.json, vocab.json or
	// merges.txt read (RoBERTa's tokenizer.json is about 1.4 MB).
	MaxBPEFileSize = 64 << 20
	// MaxBPEVocab is the largest id of a vocabulary entry or added token,
	// plus one, and the most merges.
	MaxBPEVocab = 1 << 21
	// MaxBPETokenLen is the longest vocabulary entry or added token, in
	// bytes.
	MaxBPETokenLen = 1024
)

// BPEOptions are what the slow files (vocab.json, merges.txt) leave to the
// tokenizer_config.json or to the code: the settings transformers'
// RobertaConverter turns into a tokenizer.json.
type BPEOptions struct {
	// AddPrefixSpace adds a space before a text that does not start with
	// one, so that its first word is split as any other (add_prefix_space).
	AddPrefixSpace bool
	// TrimOffsets moves token spans past the spaces they start or end with
	// (trim_offsets).
	TrimOffsets bool
	// ClsToken and SepToken are the tokens RobertaProcessing adds (<s> and
	// </s>); UnkToken, PadToken and MaskToken name the other special
	// tokens. Those not in vocab.json get the next free ids, as transformers
	// adds them.
	ClsToken, SepToken, UnkToken, PadToken, MaskToken string
	// MaskLStrip makes the mask token take the whitespace before it, so
	// "a <mask>" and "a<mask>" give the same tokens (RoBERTa's mask token
	// has lstrip).
	MaskLStrip bool
}

// RobertaOptions returns RoBERTa's settings: no prefix space, trimmed
// offsets, <s> </s> <unk> <pad> <mask>, and the mask token taking the
// whitespace before it.
func RobertaOptions() BPEOptions {
	return BPEOptions{
		TrimOffsets: true,
		ClsToken:    "<s>", SepToken: "</s>", UnkToken: "<unk>", PadToken: "<pad>", MaskToken: "<mask>",
		MaskLStrip: true,
	}
}

// LoadBPEFiles builds a RoBERTa-style tokenizer from the slow files: vocab.json
// and merges.txt, with the settings o, as transformers' RobertaConverter
// does (ByteLevel pre-tokenizer and decoder, RobertaProcessing).
func LoadBPEFiles(vocabJSON, mergesTxt []byte, o BPEOptions) (*BPE, error) {
	vocab, err := parseBPEVocab(vocabJSON, true)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", BPEVocabFile, err)
	}
	merges, err := parseMergesTxt(mergesTxt)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", BPEMergesFile, err)
	}
	t, err := newBPE(vocab, merges)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", BPEMergesFile, err)
	}
	t.addPrefixSpace, t.useRegex, t.decoder = o.AddPrefixSpace, true, "ByteLevel"
	next := t.VocabSize()
	idOf := func(key, name string) (int, error) {
		if name == "" {
			return -1, fmt.Errorf("tokenizer: %s is empty", key)
		}
		if len(name) > MaxBPETokenLen {
			return -1, fmt.Errorf("tokenizer: %s is longer than %d bytes", key, MaxBPETokenLen)
		}
		if id, ok := t.ids[name]; ok {
			return id, nil
		}
		next++
		return next - 1, nil
	}
	for _, s := range []struct {
		key, name string
		lstrip    bool
	}{
		{"cls_token", o.ClsToken, false}, {"pad_token", o.PadToken, false}, {"sep_token", o.SepToken, false},
		{"unk_token", o.UnkToken, false}, {"mask_token", o.MaskToken, o.MaskLStrip},
	} {
		if t.isAdded(s.name) { // one token named twice (cls and sep alike)
			continue
		}
		id, err := idOf(s.key, s.name)
		if err != nil {
			return nil, err
		}
		t.added = append(t.added, addedToken{content: s.name, id: id, lstrip: s.lstrip, special: true})
	}
	t.post = bpePost{kind: postRoberta, trimOffsets: o.TrimOffsets, addPrefixSpace: o.AddPrefixSpace, clsTok: o.ClsToken, sepTok: o.SepToken}
	t.post.cls, _ = t.TokenID(o.ClsToken)
	t.post.sep, _ = t.TokenID(o.SepToken)
	t.finish(o)
	return t, nil
}

// isAdded reports whether content is already an added token.
func (t *BPE) isAdded(content string) bool {
	for _, a := range t.added {
		if a.content == content {
			return true
		}
	}
	return false
}

// LoadBPE builds a tokenizer from the contents of a tokenizer.json whose
// model is BPE with the ByteLevel pre-tokenizer (RoBERTa's, GPT-2's). The
// mask, padding and unknown tokens are the added tokens or entries named as
// in RobertaOptions, where present. Anything the file asks for that this
// package does not implement (another model, a normalizer, another
// pre-tokenizer, post-processor or decoder, BPE dropout, unknown fields)
// is an error naming the field. Truncation and padding saved in the file
// are ignored, as transformers ignores them: pass maxLen to Encode.
func LoadBPE(data []byte) (*BPE, error) {
	t, err := parseTokenizerJSON(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", TokenizerJSONFile, err)
	}
	t.finish(RobertaOptions())
	return t, nil
}

// LoadBPEFS loads a byte-level BPE tokenizer from the root of fsys, a model
// folder: tokenizer.json when present, else vocab.json and merges.txt with
// RobertaOptions changed by what tokenizer_config.json says
// (add_prefix_space, trim_offsets, the special tokens and the mask token's
// lstrip). name is the folder as messages call it.
func LoadBPEFS(fsys fs.FS, name string) (*BPE, error) {
	read := func(file string) ([]byte, error) {
		f, err := fsys.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, MaxBPEFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", filepath.Join(name, file), err)
		}
		if len(data) > MaxBPEFileSize {
			return nil, fmt.Errorf("tokenizer: %s: larger than %d bytes", filepath.Join(name, file), MaxBPEFileSize)
		}
		return data, nil
	}
	opts := RobertaOptions()
	cfg, err := read(ConfigFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := parseBPEConfig(cfg, &opts); err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", filepath.Join(name, ConfigFile), err)
		}
	}
	data, err := read(TokenizerJSONFile)
	if err == nil {
		t, err := parseTokenizerJSON(data)
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", filepath.Join(name, TokenizerJSONFile), err)
		}
		t.finish(opts)
		return t, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	vocab, err := read(BPEVocabFile)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", name, err)
	}
	merges, err := read(BPEMergesFile)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", name, err)
	}
	t, err := LoadBPEFiles(vocab, merges, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	return t, nil
}

// parseBPEConfig reads the keys of a RoBERTa tokenizer_config.json that
// the slow files need into o.
func parseBPEConfig(data []byte, o *BPEOptions) error {
	var raw struct {
		AddPrefixSpace *bool           `json:"add_prefix_space"`
		TrimOffsets    *bool           `json:"trim_offsets"`
		ClsToken       json.RawMessage `json:"cls_token"`
		SepToken       json.RawMessage `json:"sep_token"`
		UnkToken       json.RawMessage `json:"unk_token"`
		PadToken       json.RawMessage `json:"pad_token"`
		MaskToken      json.RawMessage `json:"mask_token"`
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return jsonError(data, err)
	}
	if raw.AddPrefixSpace != nil {
		o.AddPrefixSpace = *raw.AddPrefixSpace
	}
	if raw.TrimOffsets != nil {
		o.TrimOffsets = *raw.TrimOffsets
	}
	for _, f := range []struct {
		key string
		raw json.RawMessage
		dst *string
	}{
		{"cls_token", raw.ClsToken, &o.ClsToken}, {"sep_token", raw.SepToken, &o.SepToken},
		{"unk_token", raw.UnkToken, &o.UnkToken}, {"pad_token", raw.PadToken, &o.PadToken},
		{"mask_token", raw.MaskToken, &o.MaskToken},
	} {
		if err := parseTokenName(f.raw, f.dst); err != nil {
			return fmt.Errorf("%s: %w", f.key, err)
		}
	}
	if m := bytes.TrimSpace(raw.MaskToken); len(m) > 0 && m[0] == '{' {
		var obj struct {
			LStrip bool `json:"lstrip"`
		}
		if err := json.Unmarshal(m, &obj); err != nil {
			return fmt.Errorf("mask_token: %w", err)
		}
		o.MaskLStrip = obj.LStrip
	}
	return nil
}

// finish looks up the ids of the tokens the engine asks for and sets up
// the cache.
func (t *BPE) finish(o BPEOptions) {
	look := func(name string) int {
		if id, ok := t.TokenID(name); ok && name != "" {
			return id
		}
		return -1
	}
	t.mask, t.pad, t.unkSpecial = look(o.MaskToken), look(o.PadToken), look(o.UnkToken)
	t.cls, t.sep = -1, -1
	if t.post.kind == postRoberta {
		t.cls, t.sep = t.post.cls, t.post.sep
	}
	t.addedByID = make(map[int]int, len(t.added))
	t.passes = [2][]int{}
	for i, a := range t.added {
		// The first of two added tokens with one id is the one decoded.
		if _, dup := t.addedByID[a.id]; !dup {
			t.addedByID[a.id] = i
		}
		if a.normalized {
			t.passes[1] = append(t.passes[1], i)
		} else {
			t.passes[0] = append(t.passes[0], i)
		}
	}
	t.cache = &bpeCache{m: make(map[string][]bpeSym)}
}

// newBPE builds the model from a vocabulary and merges (pairs of entries).
func newBPE(vocab map[string]int, merges [][2]string) (*BPE, error) {
	t := &BPE{ids: vocab, unk: -1, merges: make(map[uint64]bpeMerge, len(merges))}
	size := 0
	for _, id := range vocab {
		size = max(size, id+1)
	}
	t.tokens = make([]string, size)
	seen := make([]bool, size)
	for tok, id := range vocab {
		if seen[id] {
			return nil, fmt.Errorf("id %d is given to %q and %q", id, t.tokens[id], tok)
		}
		seen[id] = true
		t.tokens[id] = tok
	}
	for b := range 256 {
		t.byteID[b] = -1
		if id, ok := vocab[string(byteChars[b])]; ok {
			t.byteID[b] = int32(id)
		}
	}
	for i, m := range merges {
		a, okA := vocab[m[0]]
		b, okB := vocab[m[1]]
		c, okC := vocab[m[0]+m[1]]
		switch {
		case !okA:
			return nil, fmt.Errorf("merge %d: %q is not in the vocabulary", i+1, m[0])
		case !okB:
			return nil, fmt.Errorf("merge %d: %q is not in the vocabulary", i+1, m[1])
		case !okC:
			return nil, fmt.Errorf("merge %d: the merged %q is not in the vocabulary", i+1, m[0]+m[1])
		}
		// A pair listed twice keeps its last rank, as in HuggingFace.
		t.merges[pairKey(int32(a), int32(b))] = bpeMerge{int32(i), int32(c)}
	}
	return t, nil
}

// parseBPEVocab reads vocab.json (whole is true) or tokenizer.json's
// model.vocab: an object from entry to id. Errors in a whole file give its
// line and column.
func parseBPEVocab(data []byte, whole bool) (map[string]int, error) {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var vocab map[string]int
	if err := json.Unmarshal(data, &vocab); err != nil {
		if whole {
			return nil, jsonError(data, err)
		}
		return nil, err
	}
	if len(vocab) > MaxBPEVocab {
		return nil, fmt.Errorf("%d entries, more than %d", len(vocab), MaxBPEVocab)
	}
	for tok, id := range vocab {
		switch {
		case id < 0 || id >= MaxBPEVocab:
			return nil, fmt.Errorf("entry %q: id %d out of range [0, %d)", tok, id, MaxBPEVocab)
		case tok == "":
			return nil, errors.New("empty entry")
		case len(tok) > MaxBPETokenLen:
			return nil, fmt.Errorf("entry %.20q...: longer than %d bytes", tok, MaxBPETokenLen)
		}
	}
	return vocab, nil
}

// parseMergesTxt reads merges.txt: an optional "#version" line, then one
// merge a line, two entries separated by one space. Empty lines are
// skipped, as HuggingFace does.
func parseMergesTxt(data []byte) ([][2]string, error) {
	var merges [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 2*MaxBPETokenLen+2)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSuffix(sc.Text(), "\r")
		if (line == 1 && strings.HasPrefix(s, "#version")) || s == "" {
			continue
		}
		a, b, ok := strings.Cut(s, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("line %d: %.40q is not two entries separated by a space", line, s)
		}
		if len(merges) >= MaxBPEVocab {
			return nil, fmt.Errorf("line %d: more than %d merges", line, MaxBPEVocab)
		}
		merges = append(merges, [2]string{a, b})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("after %d merges: %w", len(merges), err)
	}
	return merges, nil
}

// jsonError adds the line and column to a JSON error that has an offset.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off <= 0 || off > int64(len(data)) {
		return err
	}
	off-- // the offset is just after the byte that failed
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// strictJSON decodes data into v, rejecting fields v does not have: a
// field this package does not know could change the output.
func strictJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// typeOf returns the "type" of a component object.
func typeOf(raw json.RawMessage) (string, error) {
	var v struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	if v.Type == nil {
		return "", errors.New(`no "type"`)
	}
	return *v.Type, nil
}

// byteLevelJSON holds the fields of the ByteLevel pre-tokenizer, decoder
// and post-processor.
type byteLevelJSON struct {
	Type           string `json:"type"`
	AddPrefixSpace *bool  `json:"add_prefix_space"`
	TrimOffsets    *bool  `json:"trim_offsets"`
	UseRegex       *bool  `json:"use_regex"`
}

// parseTokenizerJSON reads a tokenizer.json into a BPE without its
// finishing touches.
func parseTokenizerJSON(data []byte) (*BPE, error) {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var f struct {
		Version       *string         `json:"version"`
		Truncation    json.RawMessage `json:"truncation"`
		Padding       json.RawMessage `json:"padding"`
		AddedTokens   json.RawMessage `json:"added_tokens"`
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Decoder       json.RawMessage `json:"decoder"`
		Model         json.RawMessage `json:"model"`
	}
	if err := strictJSON(data, &f); err != nil {
		return nil, jsonError(data, err)
	}
	switch {
	case f.Version != nil && *f.Version != "1.0":
		return nil, fmt.Errorf("version %q: only 1.0 is known", *f.Version)
	case !isNull(f.Normalizer):
		typ, _ := typeOf(f.Normalizer)
		return nil, fmt.Errorf("normalizer: type %q is not supported (only null)", typ)
	case isNull(f.Model):
		return nil, errors.New("model: missing")
	}
	// Truncation and padding saved in the file are settings of a call, not
	// of the tokenizer: transformers replaces them on every call (and turns
	// them off unless asked), and so does Encode's maxLen. Only their form
	// is checked.
	for _, c := range []struct {
		key string
		raw json.RawMessage
	}{{"truncation", f.Truncation}, {"padding", f.Padding}} {
		if r := bytes.TrimSpace(c.raw); !isNull(r) && r[0] != '{' {
			return nil, fmt.Errorf("%s: neither null nor an object", c.key)
		}
	}
	t, err := parseBPEModel(f.Model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}

	if isNull(f.PreTokenizer) {
		return nil, errors.New("pre_tokenizer: missing (byte-level BPE needs ByteLevel)")
	}
	var pre byteLevelJSON
	if typ, err := typeOf(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	} else if typ != "ByteLevel" {
		return nil, fmt.Errorf("pre_tokenizer: type %q is not supported (only ByteLevel)", typ)
	}
	if err := strictJSON(f.PreTokenizer, &pre); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	t.addPrefixSpace = pre.AddPrefixSpace == nil || *pre.AddPrefixSpace
	t.useRegex = pre.UseRegex == nil || *pre.UseRegex

	if !isNull(f.Decoder) {
		var dec byteLevelJSON
		if typ, err := typeOf(f.Decoder); err != nil {
			return nil, fmt.Errorf("decoder: %w", err)
		} else if typ != "ByteLevel" {
			return nil, fmt.Errorf("decoder: type %q is not supported (only ByteLevel)", typ)
		}
		if err := strictJSON(f.Decoder, &dec); err != nil {
			return nil, fmt.Errorf("decoder: %w", err)
		}
		t.decoder = "ByteLevel"
	}

	if !isNull(f.PostProcessor) {
		if t.post, err = parseBPEPost(f.PostProcessor); err != nil {
			return nil, fmt.Errorf("post_processor: %w", err)
		}
	}

	if !isNull(f.AddedTokens) {
		var added []struct {
			ID         *int    `json:"id"`
			Content    *string `json:"content"`
			SingleWord bool    `json:"single_word"`
			LStrip     bool    `json:"lstrip"`
			RStrip     bool    `json:"rstrip"`
			Normalized bool    `json:"normalized"`
			Special    bool    `json:"special"`
		}
		if err := strictJSON(f.AddedTokens, &added); err != nil {
			return nil, fmt.Errorf("added_tokens: %w", err)
		}
		if len(added) > MaxBPEVocab {
			return nil, fmt.Errorf("added_tokens: %d tokens, more than %d", len(added), MaxBPEVocab)
		}
		for i, a := range added {
			switch {
			case a.ID == nil || a.Content == nil:
				return nil, fmt.Errorf(`added_tokens[%d]: "id" and "content" are required`, i)
			case *a.ID < 0 || *a.ID >= MaxBPEVocab:
				return nil, fmt.Errorf("added_tokens[%d]: id %d out of range [0, %d)", i, *a.ID, MaxBPEVocab)
			case *a.Content == "":
				return nil, fmt.Errorf("added_tokens[%d]: empty content", i)
			case len(*a.Content) > MaxBPETokenLen:
				return nil, fmt.Errorf("added_tokens[%d]: content longer than %d bytes", i, MaxBPETokenLen)
			case a.SingleWord:
				return nil, fmt.Errorf("added_tokens[%d] %q: single_word is not supported", i, *a.Content)
			}
			t.added = append(t.added, addedToken{
				content: *a.Content, id: *a.ID, lstrip: a.LStrip, rstrip: a.RStrip,
				normalized: a.Normalized, special: a.Special,
			})
		}
	}
	if p := &t.post; p.kind == postRoberta {
		for _, s := range []struct {
			key string
			id  int
		}{{"cls", p.cls}, {"sep", p.sep}} {
			if s.id >= t.VocabSize() {
				return nil, fmt.Errorf("post_processor: %s: id %d is not in the vocabulary", s.key, s.id)
			}
		}
	}
	return t, nil
}

// parseBPEModel reads tokenizer.json's "model".
func parseBPEModel(raw json.RawMessage) (*BPE, error) {
	var m struct {
		Type                    *string         `json:"type"`
		Dropout                 *float64        `json:"dropout"`
		UnkToken                *string         `json:"unk_token"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		FuseUnk                 bool            `json:"fuse_unk"`
		ByteFallback            bool            `json:"byte_fallback"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Vocab                   json.RawMessage `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
	}
	if err := strictJSON(raw, &m); err != nil {
		return nil, err
	}
	switch {
	case m.Type != nil && *m.Type != "BPE":
		return nil, fmt.Errorf("type %q is not supported (only BPE)", *m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, fmt.Errorf("dropout %g is not supported (only null)", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, fmt.Errorf("continuing_subword_prefix %q is not supported (only empty)", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, fmt.Errorf("end_of_word_suffix %q is not supported (only empty)", *m.EndOfWordSuffix)
	case m.ByteFallback:
		return nil, errors.New("byte_fallback is not supported (byte-level BPE needs none)")
	case isNull(m.Vocab):
		return nil, errors.New("vocab: missing")
	}
	vocab, err := parseBPEVocab(m.Vocab, false)
	if err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	var merges [][2]string
	if !isNull(m.Merges) {
		if merges, err = parseMergesJSON(m.Merges); err != nil {
			return nil, fmt.Errorf("merges: %w", err)
		}
	}
	t, err := newBPE(vocab, merges)
	if err != nil {
		return nil, err
	}
	t.fuseUnk, t.ignoreMerges = m.FuseUnk, m.IgnoreMerges
	if m.UnkToken != nil {
		id, ok := vocab[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("unk_token %q is not in the vocabulary", *m.UnkToken)
		}
		t.unk = id
	}
	return t, nil
}

// parseMergesJSON reads merges written as "left right" strings (older
// files) or as [left, right] arrays.
func parseMergesJSON(raw json.RawMessage) ([][2]string, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	if len(list) > MaxBPEVocab {
		return nil, fmt.Errorf("%d merges, more than %d", len(list), MaxBPEVocab)
	}
	merges := make([][2]string, len(list))
	for i, item := range list {
		var s string
		if err := json.Unmarshal(item, &s); err == nil {
			a, b, ok := strings.Cut(s, " ")
			if !ok || strings.Contains(b, " ") {
				return nil, fmt.Errorf("[%d]: %.40q is not two entries separated by a space", i, s)
			}
			merges[i] = [2]string{a, b}
			continue
		}
		var pair []string
		if err := json.Unmarshal(item, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("[%d]: neither a string nor a pair of strings", i)
		}
		merges[i] = [2]string{pair[0], pair[1]}
	}
	return merges, nil
}

// parseBPEPost reads the post-processor: RobertaProcessing or ByteLevel.
func parseBPEPost(raw json.RawMessage) (bpePost, error) {
	typ, err := typeOf(raw)
	if err != nil {
		return bpePost{}, err
	}
	switch typ {
	case "ByteLevel":
		var b byteLevelJSON
		if err := strictJSON(raw, &b); err != nil {
			return bpePost{}, err
		}
		return bpePost{kind: postByteLevel, trimOffsets: b.TrimOffsets == nil || *b.TrimOffsets,
			addPrefixSpace: b.AddPrefixSpace == nil || *b.AddPrefixSpace}, nil
	case "RobertaProcessing":
		var r struct {
			Type           string             `json:"type"`
			Sep            [2]json.RawMessage `json:"sep"`
			Cls            [2]json.RawMessage `json:"cls"`
			TrimOffsets    *bool              `json:"trim_offsets"`
			AddPrefixSpace *bool              `json:"add_prefix_space"`
		}
		if err := strictJSON(raw, &r); err != nil {
			return bpePost{}, err
		}
		p := bpePost{kind: postRoberta, trimOffsets: r.TrimOffsets == nil || *r.TrimOffsets,
			addPrefixSpace: r.AddPrefixSpace == nil || *r.AddPrefixSpace}
		for _, s := range []struct {
			key string
			raw [2]json.RawMessage
			tok *string
			id  *int
		}{{"sep", r.Sep, &p.sepTok, &p.sep}, {"cls", r.Cls, &p.clsTok, &p.cls}} {
			if err := json.Unmarshal(s.raw[0], s.tok); err != nil {
				return bpePost{}, fmt.Errorf("%s: the token must be a string", s.key)
			}
			if err := json.Unmarshal(s.raw[1], s.id); err != nil || *s.id < 0 {
				return bpePost{}, fmt.Errorf("%s: the id must be an integer >= 0", s.key)
			}
		}
		return p, nil
	}
	return bpePost{}, fmt.Errorf("type %q is not supported (only RobertaProcessing, ByteLevel or null)", typ)
}
