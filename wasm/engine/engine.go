//go:build js && wasm

// Package engine is the bertlab compute engine as the page runs it in a Web Worker: the same
// module as the page (wasm/app), started with Serve when it finds no document, that is, in the
// worker (assets/worker.js) or in Node. It is handed a model as bytes and is called through the
// global object `bertlab`:
//
//	bertlab.load({config, weights, vocab, tokenizerConfig, tokenizerJSON, vocabJSON, merges, spiece, spm,
//	              specialTokensMap}) -> {"ok":true,...} | {"error":...} (config, weights and one
//	              family's tokenizer files: vocab.txt, tokenizer.json, vocab.json and merges.txt,
//	              spiece.model or spm.model)
//	bertlab.fillMask(text, topK[, pair]) -> JSON of `bertlab fill-mask --json` (with "nsp" for a pair)
//	bertlab.nextSentence(text, pair) -> pipeline.NSPResult (IsNext / NotNext probabilities)
//	bertlab.tokenize(text[, pair]) -> {"input_ids":..., "tokens":..., "token_type_ids":..., "offsets":...,
//	                                    "special":..., "word_ids":..., "truncated":..., "length": tokens before truncation}
//	bertlab.attention(text[, pair]) -> {"layers":[pipeline.AttentionResult for layer 0, 1, ...]}
//	bertlab.steps(text, layer, token) -> pipeline.StepsResult (the walk through one layer)
//	bertlab.maskLab(text, seed, wholeWord) -> engine.MaskLabResult (BERT's 15% masking)
//	bertlab.nspPairs(seed, n) -> {"pairs":[engine.NSPPair ...]} from tinydata web/pretrain.txt
//	bertlab.samples() -> {"sentences":[...]} of tinydata web/pretrain.txt
//	bertlab.embeddings([sentence, ...], hideSpecial) -> {"layers":[pipeline.EmbeddingMapResult for layer 0 (embeddings), 1, ...]}
//	bertlab.explain(kind, requestJSON) -> explain.Report: kind "attributions", "lens", "ablation" or
//	                                   "importance" of an explain.Request; "neuron" of an
//	                                   engine.NeuronRequest answers explain.Neuron
//	bertlab.trainStart(requestJSON) -> engine.FinetuneInfo (a new training-lab run, engine.FinetuneRequest;
//	                                   task "mlm" pre-trains a tiny BERT from scratch)
//	bertlab.trainStep() -> {"events":[train.Event ...], "done":bool}: the run's next step (or evaluation)
//	bertlab.trainStop() -> {"events":[the EventDone]}: ends the run where it is
//	bertlab.trainPredict(text) -> engine.TaskPrediction of the run's model (fill-mask for "mlm")
//	bertlab.trainExport() -> {"name":"bertlab-TASK.zip","zip":base64}: the model as an HF folder
//	bertlab.replaced, bertlab.attentionParts: the family views' (family.go)
//	bertlab.familyStart, familyStep, familyStop: the family lab's race (familylab.go)
//
// The page asks for one training step at a time, so that between steps the worker reads the
// page's other messages (and the page can pause by not asking).
//
// Every function returns a JSON string; errors come back as {"error": "..."}. The answers are
// core/engine's: this package only turns JavaScript values into Go ones and back.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall/js"
	"testing/fstest"

	coreengine "github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/lab"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/tokenizer/auto"
)

type engine struct {
	e *coreengine.Engine
}

// Serve sets up the global `bertlab` object, calls the global bertlabReady (when there is one)
// and then serves calls until the module is torn down: it never returns.
func Serve() {
	e := &engine{e: &coreengine.Engine{Labs: lab.Labs{}}}
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
	api.Set("explain", jsFunc(e.explain))
	api.Set("trainStart", jsFunc(e.trainStart))
	api.Set("trainStep", jsFunc(e.trainStep))
	api.Set("trainStop", jsFunc(e.trainStop))
	api.Set("trainPredict", jsFunc(e.trainPredict))
	api.Set("trainExport", jsFunc(e.trainExport))
	serveFamily(e, api)
	serveFamilyLab(e, api)
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

// loadFields are load's fields and the files of the model folder they hold.
var loadFields = []struct{ field, file string }{
	{"config", hf.ConfigFile},
	{"weights", hf.WeightsFile},
	{"weightsIndex", hf.WeightsIndexFile},
	{"vocab", hf.VocabFile},
	{"tokenizerConfig", hf.TokenizerConfigFile},
	{"tokenizerJSON", tokenizer.TokenizerJSONFile},
	{"vocabJSON", tokenizer.BPEVocabFile},
	{"merges", tokenizer.BPEMergesFile},
	{"spiece", auto.SpieceFile},
	{"spm", auto.SpmFile},
	{"specialTokensMap", auto.SpecialTokensMapFile},
}

// load makes the files it is handed into a folder in memory and loads it as every other home
// of the engine loads a folder (hf.LoadFS).
func (e *engine) load(args []js.Value) (any, error) {
	if len(args) != 1 || args[0].Type() != js.TypeObject {
		return nil, fmt.Errorf("load: want one object {config, weights (or weightsIndex and shards: {name: bytes}), and the tokenizer's files: vocab, tokenizerJSON, vocabJSON and merges, spiece or spm; tokenizerConfig, specialTokensMap}")
	}
	files := fstest.MapFS{}
	for _, f := range loadFields {
		b, err := bytesOf(args[0], f.field)
		if err != nil {
			return nil, err
		}
		if b != nil {
			files[f.file] = &fstest.MapFile{Data: b}
		}
	}
	// The shards of weights saved in shards: {name: bytes}, each named as transformers names
	// them (model-00001-of-00002.safetensors); the index says which tensor is where.
	if sh := args[0].Get("shards"); sh.Type() == js.TypeObject {
		keys := js.Global().Get("Object").Call("keys", sh)
		for i := range keys.Length() {
			name := keys.Index(i).String()
			if !hf.IsShardFile(name) {
				return nil, fmt.Errorf("load: shards: %q is not a shard's name (model-00001-of-00002.safetensors)", name)
			}
			b, err := bytesOf(sh, name)
			if err != nil {
				return nil, err
			}
			files[name] = &fstest.MapFile{Data: b}
		}
	}
	if files[hf.ConfigFile] == nil || files[hf.WeightsFile] == nil && files[hf.WeightsIndexFile] == nil {
		return nil, fmt.Errorf("load: config.json and the weights (model.safetensors, or model.safetensors.index.json with its shards) are needed, with the tokenizer's files")
	}
	return e.e.Load(files, "")
}

func optString(args []js.Value, i int) *string {
	if len(args) > i && args[i].Type() == js.TypeString {
		s := args[i].String()
		return &s
	}
	return nil
}

func textArg(args []js.Value, want string) (string, error) {
	if len(args) < 1 || args[0].Type() != js.TypeString {
		return "", fmt.Errorf("want %s", want)
	}
	return args[0].String(), nil
}

func (e *engine) fillMask(args []js.Value) (any, error) {
	text, err := textArg(args, "fillMask: want (text, topK[, pair])")
	if err != nil {
		return nil, err
	}
	k := 5
	if len(args) > 1 && args[1].Type() == js.TypeNumber {
		k = args[1].Int()
	}
	return e.e.FillMask(text, optString(args, 2), k)
}

// nextSentence answers the next-sentence prediction for a pair (the mask view without masks).
func (e *engine) nextSentence(args []js.Value) (any, error) {
	if len(args) < 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		return nil, fmt.Errorf("nextSentence: want (text, pair)")
	}
	return e.e.NextSentence(args[0].String(), args[1].String())
}

func (e *engine) tokenize(args []js.Value) (any, error) {
	text, err := textArg(args, "tokenize: want (text[, pair])")
	if err != nil {
		return nil, err
	}
	return e.e.Tokenize(text, optString(args, 1))
}

// attention answers every layer's attention probabilities from one forward pass (the attention
// view draws all layers and heads at once).
func (e *engine) attention(args []js.Value) (any, error) {
	text, err := textArg(args, "attention: want (text[, pair])")
	if err != nil {
		return nil, err
	}
	layers, err := e.e.Attention(text, optString(args, 1))
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
	return e.e.Steps(args[0].String(), layer, token)
}

// maskLab masks text the way BERT's pre-training data is masked (the masking lab).
func (e *engine) maskLab(args []js.Value) (any, error) {
	if len(args) < 2 || args[0].Type() != js.TypeString {
		return nil, fmt.Errorf("maskLab: want (text, seed, wholeWord)")
	}
	seed, err := intArg(args, 1, "maskLab")
	if err != nil {
		return nil, err
	}
	return e.e.MaskLab(args[0].String(), uint64(seed), len(args) > 2 && args[2].Truthy())
}

// nspPairs builds next-sentence instances from the sample corpus.
func (e *engine) nspPairs(args []js.Value) (any, error) {
	seed, err := intArg(args, 0, "nspPairs")
	if err != nil {
		return nil, err
	}
	n := 6
	if len(args) > 1 && args[1].Type() == js.TypeNumber {
		n = min(max(args[1].Int(), 1), 50)
	}
	pairs, err := e.e.NSPPairs(uint64(seed), n)
	if err != nil {
		return nil, err
	}
	return map[string]any{"pairs": pairs}, nil
}

// samples lists the sentences of the sample corpus.
func (e *engine) samples([]js.Value) (any, error) {
	s, err := e.e.Samples()
	if err != nil {
		return nil, err
	}
	return map[string]any{"sentences": s}, nil
}

// embeddings maps every token of a few sentences to 2-D at every layer, one PCA per layer (the
// embeddings view), so that its layer slider needs no further request.
func (e *engine) embeddings(args []js.Value) (any, error) {
	if len(args) < 1 || args[0].Type() != js.TypeObject || args[0].Get("length").Type() != js.TypeNumber {
		return nil, fmt.Errorf("embeddings: want ([sentence, ...], hideSpecial)")
	}
	// Bounded before the array is read: the engine would refuse it anyway.
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
	layers, err := e.e.Embeddings(sentences, opts)
	if err != nil {
		return nil, err
	}
	return map[string]any{"layers": layers}, nil
}

// explain answers one explanation question (core/engine's Attributions, Lens, Ablation,
// Importance or Neuron) of a request in JSON.
func (e *engine) explain(args []js.Value) (any, error) {
	if len(args) != 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		return nil, fmt.Errorf("explain: want (kind, requestJSON)")
	}
	kind, body := args[0].String(), []byte(args[1].String())
	if kind == "neuron" {
		var r coreengine.NeuronRequest
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("explain neuron: %w", err)
		}
		return e.e.Neuron(r)
	}
	ask := map[string]func(explain.Request) (*explain.Report, error){
		"attributions": e.e.Attributions, "lens": e.e.Lens, "ablation": e.e.Ablation, "importance": e.e.Importance,
	}[kind]
	if ask == nil {
		return nil, fmt.Errorf("explain: kind %q: want attributions, lens, ablation, importance or neuron", kind)
	}
	var r explain.Request
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("explain %s: %w", kind, err)
	}
	return ask(r)
}

// trainStart prepares a training-lab run on a copy of the loaded model (which the other views
// keep using), replacing the previous run.
func (e *engine) trainStart(args []js.Value) (any, error) {
	text, err := textArg(args, "trainStart: want (requestJSON)")
	if err != nil {
		return nil, err
	}
	var req coreengine.FinetuneRequest
	if err := json.Unmarshal([]byte(text), &req); err != nil {
		return nil, fmt.Errorf("trainStart: %w", err)
	}
	return e.e.TrainStart(req)
}

func (e *engine) trainStep([]js.Value) (any, error) {
	return e.e.TrainStep(context.Background())
}

func (e *engine) trainStop([]js.Value) (any, error) {
	return e.e.TrainStop()
}

func (e *engine) trainPredict(args []js.Value) (any, error) {
	text, err := textArg(args, "trainPredict: want (text)")
	if err != nil {
		return nil, err
	}
	return e.e.TrainPredict(text)
}

func (e *engine) trainExport([]js.Value) (any, error) {
	name, b, err := e.e.TrainExport()
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": name, "zip": b}, nil
}
