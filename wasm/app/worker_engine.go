//go:build js && wasm

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"syscall/js"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/ui"
)

// workerEngine is ui.Engine over this module's engine role running in a Web Worker. Requests
// carry an id; the worker answers {id, result} with the engine's JSON string (see
// assets/worker.js).
type workerEngine struct {
	worker  js.Value
	mu      sync.Mutex
	next    int
	pending map[int]chan string
}

func newWorkerEngine(script string) *workerEngine {
	e := &workerEngine{pending: map[int]chan string{}}
	e.worker = js.Global().Get("Worker").New(script)
	e.worker.Set("onmessage", js.FuncOf(func(_ js.Value, args []js.Value) any {
		data := args[0].Get("data")
		id := data.Get("id").Int()
		e.mu.Lock()
		ch := e.pending[id]
		delete(e.pending, id)
		e.mu.Unlock()
		if ch != nil {
			ch <- data.Get("result").String() // buffered: never blocks the callback
		}
		return nil
	}))
	e.worker.Set("onerror", js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "the engine worker failed: " + args[0].Get("message").String()
		js.Global().Get("console").Call("error", msg)
		e.failAll(msg)
		return nil
	}))
	postInit(e.worker)
	return e
}

// postInit tells the worker what to run: this same module, which index.html left compiled in
// bertlabModule, and its file name, bertlabWasm, which the worker fetches itself when there is
// no module, or when the browser cannot hand a module over (then postMessage throws).
func postInit(worker js.Value) {
	url := js.Global().Get("bertlabWasm")
	defer func() {
		if r := recover(); r != nil {
			js.Global().Get("console").Call("warn", fmt.Sprintf("handing the compiled module to the worker failed (%v): it fetches %s", r, url))
			worker.Call("postMessage", map[string]any{"init": map[string]any{"url": url}})
		}
	}()
	worker.Call("postMessage", map[string]any{"init": map[string]any{"module": js.Global().Get("bertlabModule"), "url": url}})
}

func (e *workerEngine) failAll(msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, ch := range e.pending {
		ch <- string(b)
		delete(e.pending, id)
	}
}

// call sends fn(args...) to the worker and decodes its JSON answer into out.
func (e *workerEngine) call(out any, fn string, args ...any) error {
	ch := make(chan string, 1)
	e.mu.Lock()
	e.next++
	id := e.next
	e.pending[id] = ch
	e.mu.Unlock()
	e.worker.Call("postMessage", map[string]any{"id": id, "fn": fn, "args": args})
	res := <-ch
	var fail struct {
		Error *string `json:"error"`
	}
	if err := json.Unmarshal([]byte(res), &fail); err != nil {
		return fmt.Errorf("%s: bad answer from the engine: %w", fn, err)
	}
	if fail.Error != nil {
		return errors.New(*fail.Error)
	}
	if err := json.Unmarshal([]byte(res), out); err != nil {
		return fmt.Errorf("%s: bad answer from the engine: %w", fn, err)
	}
	return nil
}

func (e *workerEngine) Models() (*ui.ModelIndex, error) {
	var idx ui.ModelIndex
	return &idx, e.call(&idx, "models")
}

func (e *workerEngine) Load(m ui.ModelRef) (*ui.ModelInfo, error) {
	files := make([]any, len(m.Files))
	for i, f := range m.Files {
		files[i] = f
	}
	var info ui.ModelInfo
	return &info, e.call(&info, "loadURL", "models/"+m.Path, files)
}

// LoadFiles hands the browser's File objects to the worker, which reads them itself: the
// weights never pass through the page's memory.
func (e *workerEngine) LoadFiles(files []ui.LocalFile) (*ui.ModelInfo, error) {
	arg := js.Global().Get("Object").New()
	for _, f := range files {
		if f.Data != nil {
			u8 := js.Global().Get("Uint8Array").New(len(f.Data))
			js.CopyBytesToJS(u8, f.Data)
			arg.Set(f.Name, u8)
			continue
		}
		arg.Set(f.Name, js.Value(f.Handle))
	}
	var info ui.ModelInfo
	return &info, e.call(&info, "loadFiles", arg)
}

// withPair is the engine's arguments: the pair goes last, and only when there is one.
func withPair(pair string, args ...any) []any {
	if pair == "" {
		return args
	}
	return append(args, pair)
}

func (e *workerEngine) Tokenize(text, pair string) (*ui.Tokens, error) {
	var t ui.Tokens
	return &t, e.call(&t, "tokenize", withPair(pair, text)...)
}

func (e *workerEngine) FillMask(text, pair string, topK int) (*pipeline.FillMaskResult, error) {
	var r pipeline.FillMaskResult
	return &r, e.call(&r, "fillMask", withPair(pair, text, topK)...)
}

func (e *workerEngine) NextSentence(text, pair string) (*pipeline.NSPResult, error) {
	var r pipeline.NSPResult
	return &r, e.call(&r, "nextSentence", text, pair)
}

func (e *workerEngine) Attention(text, pair string) ([]pipeline.AttentionResult, error) {
	var r struct {
		Layers []pipeline.AttentionResult `json:"layers"`
	}
	err := e.call(&r, "attention", withPair(pair, text)...)
	return r.Layers, err
}

func (e *workerEngine) Steps(text string, layer, token int) (*pipeline.StepsResult, error) {
	var r pipeline.StepsResult
	return &r, e.call(&r, "steps", text, layer, token)
}

func (e *workerEngine) MaskLab(text string, seed int, wholeWord bool) (*engine.MaskLabResult, error) {
	var r engine.MaskLabResult
	return &r, e.call(&r, "maskLab", text, seed, wholeWord)
}

func (e *workerEngine) NSPPairs(seed, n int) ([]engine.NSPPair, error) {
	var r struct {
		Pairs []engine.NSPPair `json:"pairs"`
	}
	err := e.call(&r, "nspPairs", seed, n)
	return r.Pairs, err
}

func (e *workerEngine) Samples() ([]string, error) {
	var r struct {
		Sentences []string `json:"sentences"`
	}
	err := e.call(&r, "samples")
	return r.Sentences, err
}

func (e *workerEngine) Embeddings(sentences []string, opts pipeline.EmbeddingMapOptions) ([]pipeline.EmbeddingMapResult, error) {
	arg := make([]any, len(sentences))
	for i, s := range sentences {
		arg[i] = s
	}
	var r struct {
		Layers []pipeline.EmbeddingMapResult `json:"layers"`
	}
	err := e.call(&r, "embeddings", arg, opts.HideSpecial)
	return r.Layers, err
}

// explain asks the engine's explain function of kind with the request as JSON.
func (e *workerEngine) explain(out any, kind string, req any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return e.call(out, "explain", kind, string(b))
}

func (e *workerEngine) Attributions(r explain.Request) (*explain.Report, error) {
	var rep explain.Report
	return &rep, e.explain(&rep, "attributions", r)
}

func (e *workerEngine) Lens(r explain.Request) (*explain.Report, error) {
	var rep explain.Report
	return &rep, e.explain(&rep, "lens", r)
}

func (e *workerEngine) Ablation(r explain.Request) (*explain.Report, error) {
	var rep explain.Report
	return &rep, e.explain(&rep, "ablation", r)
}

func (e *workerEngine) Importance(r explain.Request) (*explain.Report, error) {
	var rep explain.Report
	return &rep, e.explain(&rep, "importance", r)
}

func (e *workerEngine) Neuron(r engine.NeuronRequest) (*explain.Neuron, error) {
	var n explain.Neuron
	return &n, e.explain(&n, "neuron", r)
}

func (e *workerEngine) TrainStart(req engine.FinetuneRequest) (*engine.FinetuneInfo, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var info engine.FinetuneInfo
	return &info, e.call(&info, "trainStart", string(b))
}

func (e *workerEngine) TrainStep() (*ui.TrainEvents, error) {
	var r ui.TrainEvents
	return &r, e.call(&r, "trainStep")
}

func (e *workerEngine) TrainStop() (*ui.TrainEvents, error) {
	var r ui.TrainEvents
	return &r, e.call(&r, "trainStop")
}

func (e *workerEngine) TrainPredict(text string) (*engine.TaskPrediction, error) {
	var r engine.TaskPrediction
	return &r, e.call(&r, "trainPredict", text)
}

func (e *workerEngine) TrainExport() (string, []byte, error) {
	var r struct {
		Name string `json:"name"`
		Zip  []byte `json:"zip"`
	}
	err := e.call(&r, "trainExport")
	return r.Name, r.Zip, err
}
