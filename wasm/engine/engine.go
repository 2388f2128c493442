//go:build js && wasm

// Package engine is the bertlab compute engine as the page runs it in a Web Worker: the same
// module as the page (wasm/app), started with Serve when it finds no document, that is, in the
// worker (assets/worker.js) or in Node. It is handed a model as bytes and is called through the
// global object `bertlab`:
//
//	bertlab.load({config, weights, vocab, tokenizerConfig}) -> {"ok":true,...} | {"error":...}
//	bertlab.fillMask(text, topK[, pair]) -> JSON of `bertlab fill-mask --json` (with "nsp" for a pair)
//	bertlab.nextSentence(text, pair) -> pipeline.NSPResult (IsNext / NotNext probabilities)
//	bertlab.tokenize(text[, pair]) -> {"input_ids":..., "tokens":..., "token_type_ids":..., "offsets":...,
//	                                    "special":..., "word_ids":..., "truncated":..., "length": tokens before truncation}
//	bertlab.attention(text[, pair]) -> {"layers":[pipeline.AttentionResult for layer 0, 1, ...]}
//	bertlab.steps(text, layer, token) -> pipeline.StepsResult (the walk through one layer)
//	bertlab.maskLab(text, seed, wholeWord) -> pipeline.MaskLabResult (BERT's 15% masking)
//	bertlab.nspPairs(seed, n) -> {"pairs":[pipeline.NSPPair ...]} from tinydata web/pretrain.txt
//	bertlab.samples() -> {"sentences":[...]} of tinydata web/pretrain.txt
//	bertlab.embeddings([sentence, ...], hideSpecial) -> {"layers":[pipeline.EmbeddingMapResult for layer 0 (embeddings), 1, ...]}
//	bertlab.trainStart(requestJSON) -> pipeline.FinetuneInfo (a new training-lab run, pipeline.FinetuneRequest;
//	                                   task "mlm" pre-trains a tiny BERT from scratch)
//	bertlab.trainStep() -> {"events":[train.Event ...], "done":bool}: the run's next step (or evaluation)
//	bertlab.trainStop() -> {"events":[the EventDone]}: ends the run where it is
//	bertlab.trainPredict(text) -> pipeline.TaskPrediction of the run's model (fill-mask for "mlm")
//	bertlab.trainExport() -> {"name":"bertlab-TASK.zip","zip":base64}: the model as an HF folder
//
// The page asks for one training step at a time, so that between steps the worker reads the
// page's other messages (and the page can pause by not asking).
//
// Every function returns a JSON string; errors come back as {"error": "..."}.
package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall/js"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/checkpoint"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/pipeline/embedmap"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
)

type engine struct {
	model *bert.Model
	tok   *tokenizer.Tokenizer
	ft    *pipeline.Finetune // the training lab's run; nil before the first
}

// Serve sets up the global `bertlab` object, calls the global bertlabReady (when there is one)
// and then serves calls until the module is torn down: it never returns.
func Serve() {
	e := &engine{}
	api := js.Global().Get("Object").New()
	api.Set("load", jsFunc(e.load))
	api.Set("fillMask", jsFunc(e.fillMask))
	api.Set("nextSentence", jsFunc(e.nextSentence))
	api.Set("tokenize", jsFunc(e.tokenize))
	api.Set("attention", jsFunc(e.attention))
	api.Set("steps", jsFunc(e.steps))
	api.Set("maskLab", jsFunc(e.maskLab))
	api.Set("nspPairs", jsFunc(e.nspPairs))
	api.Set("samples", jsFunc(e.samples))
	api.Set("embeddings", jsFunc(e.embeddings))
	api.Set("trainStart", jsFunc(e.trainStart))
	api.Set("trainStep", jsFunc(e.trainStep))
	api.Set("trainStop", jsFunc(e.trainStop))
	api.Set("trainPredict", jsFunc(e.trainPredict))
	api.Set("trainExport", jsFunc(e.trainExport))
	js.Global().Set("bertlab", api)
	if ready := js.Global().Get("bertlabReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

// jsFunc wraps a handler so that it always returns a JSON string and never lets a panic kill
// the module (a dead module would leave the page without its engine).
func jsFunc(h func(args []js.Value) (any, error)) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				ret = errJSON(fmt.Errorf("internal error: %v", r))
			}
		}()
		v, err := h(args)
		if err != nil {
			return errJSON(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return errJSON(err)
		}
		return string(b)
	})
}

func errJSON(err error) string {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b)
}

func bytesOf(v js.Value, field string) ([]byte, error) {
	f := v.Get(field)
	if f.IsUndefined() || f.IsNull() {
		return nil, nil
	}
	if f.Type() == js.TypeString {
		return []byte(f.String()), nil
	}
	if f.Type() != js.TypeObject {
		return nil, fmt.Errorf("load: %s must be a string or a Uint8Array, not a %s", field, f.Type())
	}
	n := f.Get("length")
	if n.Type() != js.TypeNumber {
		return nil, fmt.Errorf("load: %s must be a string or a Uint8Array", field)
	}
	b := make([]byte, n.Int())
	js.CopyBytesToGo(b, f)
	return b, nil
}

func (e *engine) load(args []js.Value) (any, error) {
	if len(args) != 1 || args[0].Type() != js.TypeObject {
		return nil, fmt.Errorf("load: want one object {config, weights, vocab, tokenizerConfig}")
	}
	files := map[string][]byte{}
	for _, k := range []string{"config", "weights", "vocab", "tokenizerConfig"} {
		b, err := bytesOf(args[0], k)
		if err != nil {
			return nil, err
		}
		files[k] = b
	}
	if files["config"] == nil || files["weights"] == nil || files["vocab"] == nil {
		return nil, fmt.Errorf("load: config.json, model.safetensors and vocab.txt are all needed")
	}
	cfg, err := bert.ParseConfig(files["config"])
	if err != nil {
		return nil, named("config.json", err)
	}
	w := files["weights"]
	m, rep, err := checkpoint.LoadModelReader(bytes.NewReader(w), int64(len(w)), checkpoint.WeightsFile, cfg)
	if err != nil {
		return nil, named(checkpoint.WeightsFile, err)
	}
	vocab, err := tokenizer.ReadVocab(bytes.NewReader(files["vocab"]))
	if err != nil {
		return nil, fmt.Errorf("vocab.txt: %w", err)
	}
	tc := tokenizer.DefaultConfig()
	if files["tokenizerConfig"] != nil {
		if tc, err = tokenizer.ParseConfig(files["tokenizerConfig"]); err != nil {
			return nil, fmt.Errorf("tokenizer_config.json: %w", err)
		}
	}
	tok, err := tokenizer.New(vocab, tc)
	if err != nil {
		return nil, err
	}
	// Replace the model only once the new one loaded: a failed load keeps the previous one working.
	e.model, e.tok = m, tok
	return map[string]any{"ok": true, "parameters": m.NumParams(), "heads": m.HeadNames(), "notes": rep.Notes, "config": cfg}, nil
}

// named makes sure an error of a load names the file it is about.
func named(file string, err error) error {
	if strings.Contains(err.Error(), file) {
		return err
	}
	return fmt.Errorf("%s: %w", file, err)
}

func (e *engine) ready() error {
	if e.model == nil {
		return fmt.Errorf("no model loaded: call bertlab.load first")
	}
	return nil
}

func optString(args []js.Value, i int) *string {
	if len(args) > i && args[i].Type() == js.TypeString {
		s := args[i].String()
		return &s
	}
	return nil
}

func (e *engine) fillMask(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if len(args) < 1 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("fillMask: want (text, topK[, pair])")
	}
	k := 5
	if len(args) > 1 && args[1].Type() == js.TypeNumber {
		k = args[1].Int()
	}
	return pipeline.FillMask(e.model, e.tok, args[0].String(), optString(args, 2), k)
}

// nextSentence answers the next-sentence prediction for a pair (the mask view without masks).
func (e *engine) nextSentence(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if len(args) < 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		return nil, fmt.Errorf("nextSentence: want (text, pair)")
	}
	return pipeline.NextSentence(e.model, e.tok, args[0].String(), args[1].String())
}

func (e *engine) tokenize(args []js.Value) (any, error) {
	if e.tok == nil {
		return nil, fmt.Errorf("no tokenizer loaded: call bertlab.load first")
	}
	if len(args) < 1 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("tokenize: want (text[, pair])")
	}
	text, pair := args[0].String(), optString(args, 1)
	enc, err := pipeline.Encode(e.tok, text, pair, e.model.Config.MaxPositionEmbeddings)
	if err != nil {
		return nil, err
	}
	length := enc.Len()
	if enc.Truncated {
		if length, err = pipeline.FullLength(e.tok, text, pair); err != nil {
			return nil, err
		}
	}
	return map[string]any{"input_ids": enc.IDs, "tokens": enc.Tokens, "token_type_ids": enc.TypeIDs, "offsets": enc.CharOffsets,
		"special": enc.Special, "word_ids": enc.WordIDs, "truncated": enc.Truncated, "length": length}, nil
}

// attention answers every layer's attention probabilities from one forward pass (the attention
// view draws all layers and heads at once).
func (e *engine) attention(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if len(args) < 1 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("attention: want (text[, pair])")
	}
	layers, err := pipeline.AttentionLayers(e.model, e.tok, args[0].String(), optString(args, 1))
	if err != nil {
		return nil, err
	}
	return map[string]any{"layers": layers}, nil
}

func intArg(args []js.Value, i int, name string) (int, error) {
	if len(args) <= i || args[i].Type() != js.TypeNumber {
		return 0, fmt.Errorf("%s: argument %d must be a number", name, i+1)
	}
	return args[i].Int(), nil
}

// steps answers the walk through one layer for one token (the "Inside a layer" view).
func (e *engine) steps(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if len(args) < 3 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("steps: want (text, layer, token)")
	}
	layer, err := intArg(args, 1, "steps")
	if err != nil {
		return nil, err
	}
	token, err := intArg(args, 2, "steps")
	if err != nil {
		return nil, err
	}
	return pipeline.Steps(e.model, e.tok, args[0].String(), nil, layer, token)
}

// maskLab masks text the way BERT's pre-training data is masked (the masking lab).
func (e *engine) maskLab(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if len(args) < 2 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("maskLab: want (text, seed, wholeWord)")
	}
	seed, err := intArg(args, 1, "maskLab")
	if err != nil {
		return nil, err
	}
	ww := len(args) > 2 && args[2].Truthy()
	return pipeline.MaskLab(e.tok, args[0].String(), e.model.Config.MaxPositionEmbeddings, uint64(seed), ww)
}

// nspPairs builds next-sentence instances from the sample corpus.
func (e *engine) nspPairs(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	seed, err := intArg(args, 0, "nspPairs")
	if err != nil {
		return nil, err
	}
	n := 6
	if len(args) > 1 && args[1].Type() == js.TypeNumber {
		n = min(max(args[1].Int(), 1), 50)
	}
	pairs, err := pipeline.NSPPairs(e.tok, uint64(seed), n)
	if err != nil {
		return nil, err
	}
	return map[string]any{"pairs": pairs}, nil
}

// samples lists the sentences of the sample corpus.
func (e *engine) samples([]js.Value) (any, error) {
	s, err := pipeline.SampleSentences()
	if err != nil {
		return nil, err
	}
	return map[string]any{"sentences": s}, nil
}

// embeddings maps every token of a few sentences to 2-D at every layer, one PCA per layer (the
// embeddings view), so that its layer slider needs no further request.
func (e *engine) embeddings(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if len(args) < 1 || args[0].Type() != js.TypeObject || args[0].Get("length").Type() != js.TypeNumber {
		return nil, fmt.Errorf("embeddings: want ([sentence, ...], hideSpecial)")
	}
	n := args[0].Get("length").Int()
	if n > pipeline.MaxEmbeddingSentences {
		return nil, fmt.Errorf("embeddings: %d sentences; at most %d", n, pipeline.MaxEmbeddingSentences)
	}
	sentences := make([]string, n)
	for i := range sentences {
		v := args[0].Index(i)
		if v.Type() != js.TypeString {
			return nil, fmt.Errorf("embeddings: sentence %d is not a string", i+1)
		}
		sentences[i] = v.String()
	}
	opts := pipeline.EmbeddingMapOptions{HideSpecial: len(args) > 1 && args[1].Truthy()}
	layers, err := embedmap.Layers(e.model, e.tok, sentences, opts)
	if err != nil {
		return nil, err
	}
	return map[string]any{"layers": layers}, nil
}

// trainStart prepares a training-lab run on a copy of the loaded model (which the other views
// keep using), replacing the previous run.
func (e *engine) trainStart(args []js.Value) (any, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if len(args) < 1 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("trainStart: want (requestJSON)")
	}
	var req pipeline.FinetuneRequest
	if err := json.Unmarshal([]byte(args[0].String()), &req); err != nil {
		return nil, fmt.Errorf("trainStart: %w", err)
	}
	ft, err := pipeline.NewFinetune(e.model, e.tok, req)
	if err != nil {
		return nil, err
	}
	e.ft = ft
	return ft.Info, nil
}

func (e *engine) run() error {
	if e.ft == nil {
		return fmt.Errorf("no training run: call bertlab.trainStart first")
	}
	return nil
}

type trainEvents struct {
	Events []train.Event `json:"events"`
	Done   bool          `json:"done"`
}

func (e *engine) trainStep([]js.Value) (any, error) {
	if err := e.run(); err != nil {
		return nil, err
	}
	evs, err := e.ft.Advance(context.Background())
	if err != nil {
		return nil, err
	}
	return trainEvents{Events: evs, Done: e.ft.Done()}, nil
}

func (e *engine) trainStop([]js.Value) (any, error) {
	if err := e.run(); err != nil {
		return nil, err
	}
	if e.ft.Done() {
		return trainEvents{Done: true}, nil
	}
	return trainEvents{Events: []train.Event{e.ft.Stop()}, Done: true}, nil
}

func (e *engine) trainPredict(args []js.Value) (any, error) {
	if err := e.run(); err != nil {
		return nil, err
	}
	if len(args) < 1 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("trainPredict: want (text)")
	}
	return e.ft.Predict(args[0].String())
}

func (e *engine) trainExport([]js.Value) (any, error) {
	if err := e.run(); err != nil {
		return nil, err
	}
	name, b, err := e.ft.Zip()
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": name, "zip": b}, nil
}
