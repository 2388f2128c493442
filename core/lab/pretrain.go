package lab

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/tinydata"
)

// The pre-training run's limits and defaults.
const (
	MLMSeqLen          = 64   // max_seq_length of the instances, and the model's positions
	MLMDefaultVocab    = 1000 // tokens of a corpus vocabulary
	MLMMaxSteps        = 5000
	MLMMaxText         = 1 << 20  // bytes of pasted text
	mlmHeldOutEvery    = 10       // every 10th instance is held out (when there are 20 or more)
	mlmEvalPoints      = 10       // evaluations over a run, besides the one before the first step
	mlmInitSeedStream  = 0x6d6c6d // "mlm": the random initialisation's seed, mixed with Seed
	mlmMaxCorpusVocab  = 8000
	mlmMinCorpusVocab  = 100
	mlmDefaultHidden   = 64
	mlmDefaultLayers   = 2
	mlmDefaultHeads    = 2
	mlmMaxHidden       = 256
	mlmMaxLayers       = 4
	mlmMaxHeads        = 8
	mlmMaxDisplayVocab = 8000 // the vocabulary is sent to the page only up to this size
)

// NewPretrain prepares a engine.TaskMLM run: the vocabulary, a random BertForMaskedLM of the
// requested size, the corpus made into instances (RoBERTa's full sentences, no NSP) masked
// dynamically as core/train masks them (15%, 80/10/10), and core/train's Pretrainer with the
// native `bertlab pretrain` recipe (AdamW, 1% warm-up then linear decay, weight decay 0.01,
// clipping at 1). loaded is the page's tokenizer, used with engine.VocabModel.
func NewPretrain(loaded *tokenizer.Tokenizer, req engine.FinetuneRequest) (*Pretrain, error) {
	steps := req.Steps
	if steps < 0 || steps > MLMMaxSteps {
		return nil, fmt.Errorf("steps must be 1 to %d, not %d", MLMMaxSteps, steps)
	}
	if steps == 0 && (req.Epochs < 1 || req.Epochs > 50) {
		return nil, fmt.Errorf("give 1 to %d steps, or 1 to 50 epochs (not %d)", MLMMaxSteps, req.Epochs)
	}
	if req.BatchSize < 1 || req.BatchSize > 256 {
		return nil, fmt.Errorf("batch size must be 1 to 256, not %d", req.BatchSize)
	}
	if !(req.LR > 0 && req.LR < 1) {
		return nil, fmt.Errorf("learning rate must be in (0, 1), not %g", req.LR)
	}
	L, H, A := cmp0(req.Layers, mlmDefaultLayers), cmp0(req.Hidden, mlmDefaultHidden), cmp0(req.Heads, mlmDefaultHeads)
	switch {
	case L < 1 || L > mlmMaxLayers:
		return nil, fmt.Errorf("layers must be 1 to %d, not %d", mlmMaxLayers, L)
	case H < 8 || H > mlmMaxHidden:
		return nil, fmt.Errorf("hidden size must be 8 to %d, not %d", mlmMaxHidden, H)
	case A < 1 || A > mlmMaxHeads || H%A != 0:
		return nil, fmt.Errorf("heads must be 1 to %d and divide the hidden size %d, not %d", mlmMaxHeads, H, A)
	case len(req.Text) > MLMMaxText:
		return nil, fmt.Errorf("the text is %d bytes; at most %d", len(req.Text), MLMMaxText)
	}

	// The corpus: documents of sentences.
	info := engine.PretrainInfo{Layers: L, Hidden: H, Heads: A, Intermediate: 4 * H, SeqLen: MLMSeqLen}
	var sents [][]string
	if strings.TrimSpace(req.Text) == "" {
		docs, err := tinydata.LoadDocuments(tinydata.WebPretrain)
		if err != nil {
			return nil, err
		}
		sents = dataset.Sentences(docs)
		info.Corpus = "sample"
	} else {
		docs, err := dataset.ParseText(req.Text)
		if err != nil {
			return nil, fmt.Errorf("the text: %w", err)
		}
		sents = dataset.Sentences(docs)
		info.Corpus = "text"
	}
	for _, d := range sents {
		info.Sentences += len(d)
	}
	info.Documents = len(sents)
	if info.Sentences == 0 {
		return nil, fmt.Errorf("the text has no sentence to train on")
	}

	// The vocabulary.
	var tok *tokenizer.Tokenizer
	switch req.Vocab {
	case "", engine.VocabCorpus:
		size := cmp0(req.VocabSize, MLMDefaultVocab)
		if size < mlmMinCorpusVocab || size > mlmMaxCorpusVocab {
			return nil, fmt.Errorf("vocabulary size must be %d to %d, not %d", mlmMinCorpusVocab, mlmMaxCorpusVocab, size)
		}
		tc := tokenizer.DefaultTrainer(size)
		if loaded != nil {
			tc.Tokenizer = loaded.Config() // the same normalisation as the page's model
		}
		tr, err := tokenizer.NewTrainer(tc)
		if err != nil {
			return nil, err
		}
		for _, d := range sents {
			for _, s := range d {
				tr.Add(s)
			}
		}
		if tok, err = tr.Train(); err != nil {
			return nil, fmt.Errorf("training the vocabulary: %w", err)
		}
		info.Vocab = engine.VocabCorpus
	case engine.VocabModel:
		if loaded == nil {
			return nil, fmt.Errorf("no model loaded: its vocabulary cannot be used")
		}
		tok, info.Vocab = loaded, engine.VocabModel
	default:
		return nil, fmt.Errorf("unknown vocabulary %q (want %q or %q)", req.Vocab, engine.VocabCorpus, engine.VocabModel)
	}
	v := tok.Vocab()
	info.VocabSize = v.Len()
	if v.Len() <= mlmMaxDisplayVocab {
		info.Tokens = make([]string, v.Len())
		for i := range info.Tokens {
			info.Tokens[i] = v.Token(i)
		}
	}

	// The model: BertForMaskedLM (no pooler, no NSP head), HF's initialisation, except that the
	// position embeddings start from sinusoids, as the built-in model's (bertlab pretrain
	// --position-init sinusoidal): from random ones a short run does not learn to look at
	// neighbouring words (scripts/PRETRAIN.md).
	c := bert.DefaultConfig()
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = v.Len(), H, L, A, 4*H
	c.MaxPositionEmbeddings, c.PadTokenID = MLMSeqLen, tok.PadID()
	m, err := bert.NewRandom(c, bert.Heads{MLM: true}, req.Seed^mlmInitSeedStream)
	if err != nil {
		return nil, err
	}
	m.SinusoidalPositions()
	info.Parameters = m.NumParams()

	// The data: full sentences without NSP, 15% masked dynamically (new masks every epoch).
	docs := train.TokenizeDocuments(tok, sents)
	for _, d := range docs {
		for _, s := range d {
			info.CorpusToken += len(s)
		}
	}
	dc := train.DefaultData(MLMSeqLen, req.Seed)
	dc.Instances.Task = train.NoSentenceTask
	dc.Dynamic = true
	data, err := train.NewPretrainData(tok, docs, dc)
	if err != nil {
		return nil, err
	}
	// Every 10th instance is held out when there are enough; else the evaluation masks the
	// training instances once each, with masks fixed for the whole run.
	var held []train.Instance
	if n := len(data.Instances); n >= 2*mlmHeldOutEvery {
		var keep []train.Instance
		for i, in := range data.Instances {
			if i%mlmHeldOutEvery == mlmHeldOutEvery-1 {
				held = append(held, in)
			} else {
				keep = append(keep, in)
			}
		}
		data.Instances = keep
		info.HeldOut = true
	} else {
		held = data.Instances
	}
	eval := make([]train.Instance, len(held))
	for i, in := range held {
		eval[i] = in.Masked(data.Masker, rand.New(rand.NewPCG(req.Seed, uint64(i))))
	}
	perEpoch := (data.Len() + req.BatchSize - 1) / req.BatchSize
	if steps == 0 {
		steps = min(req.Epochs*perEpoch, MLMMaxSteps)
	}
	pc := train.DefaultPretrain(steps)
	pc.BatchSize, pc.LR, pc.Seed = req.BatchSize, req.LR, req.Seed
	p, err := train.NewPretrainer(m, tok, data, pc)
	if err != nil {
		return nil, err
	}
	p.Eval = eval
	info.EvalEvery = max(1, steps/mlmEvalPoints)
	return &Pretrain{
		info: engine.FinetuneInfo{Task: engine.TaskMLM, Arch: "BertForMaskedLM", MainMetric: "mlm_accuracy", TotalSteps: steps,
			StepsPerEpoch: perEpoch, Train: len(data.Instances), Test: len(eval), MLM: &info},
		Pre: p, Tok: tok, MaxLen: MLMSeqLen, lastEval: -1,
	}, nil
}

func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Pretrain is a pre-training run of the training lab (engine.TaskMLM): core/train's Pretrainer
// over a new random BertForMaskedLM, driven one step at a time (Advance).
type Pretrain struct {
	Pre *train.Pretrainer
	Tok *tokenizer.Tokenizer
	// MaxLen is the sequence length of the data, and of Predict.
	MaxLen   int
	info     engine.FinetuneInfo
	finished bool
	start    time.Time
	// The step of the latest evaluation (-1 before any) and its figures.
	lastEval    int
	lastMetrics map[string]float64
}

// Info describes the run as NewPretrain prepared it.
func (f *Pretrain) Info() *engine.FinetuneInfo { return &f.info }

// Done reports whether the run has ended: every step taken and evaluated, or Stop called.
func (f *Pretrain) Done() bool { return f.finished }

// Advance does the next piece of work of the run: an evaluation before the first step, every
// EvalEvery steps and after the last, else one optimizer step; after the last it ends the run
// (an EventDone follows).
func (f *Pretrain) Advance(ctx context.Context) ([]train.Event, error) {
	if f.finished {
		return nil, nil
	}
	if f.start.IsZero() {
		f.start = time.Now()
	}
	p := f.Pre
	step := p.State.Step
	needsEval := f.lastEval < step && (step%f.info.MLM.EvalEvery == 0 || step == p.Config.Steps)
	var evs []train.Event
	if needsEval {
		ev, err := p.Evaluate()
		if err != nil {
			return nil, err
		}
		f.lastEval, f.lastMetrics = step, ev.Metrics
		evs = append(evs, ev)
	} else {
		ev, err := p.Step(ctx)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	if p.State.Step >= p.Config.Steps && f.lastEval == p.State.Step {
		evs = append(evs, f.Stop())
	}
	return evs, nil
}

// Stop ends the run where it is: the metrics are those of the latest evaluation.
func (f *Pretrain) Stop() train.Event {
	f.finished = true
	p := f.Pre
	return train.Event{Kind: train.EventDone, Step: p.State.Step, TotalSteps: p.Config.Steps,
		Epoch: p.Data.EpochFloat(p.State.Position), Tokens: p.State.Tokens, Metrics: f.lastMetrics, Elapsed: time.Since(f.start)}
}

// MLMFolderFiles are the files of an HF BertForMaskedLM folder of m, in memory: config.json
// (architectures ["BertForMaskedLM"]), model.safetensors (F32, bert.* and cls.predictions.*
// names), vocab.txt and tokenizer_config.json; hf.LoadFolder reads them back.
func MLMFolderFiles(m *bert.Model, tok *tokenizer.Tokenizer) (map[string][]byte, error) {
	if m.MLM == nil {
		return nil, fmt.Errorf("export: the model has no MLM head")
	}
	cfg := m.Config
	cfg.Extra = maps.Clone(cfg.Extra) // the model's own config stays as it is
	if err := cfg.SetExtra("architectures", []string{"BertForMaskedLM"}); err != nil {
		return nil, err
	}
	cj, err := cfg.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("export: config: %w", err)
	}
	var ts []hf.Tensor
	for _, p := range m.Params() {
		ts = append(ts, hf.Tensor{Name: p.Name, Shape: p.T.Shape, Data: p.T.Data})
	}
	return folderFiles(cj, ts, tok)
}

// folderFiles encodes the weights and the tokenizer beside config.json cj.
func folderFiles(cj []byte, ts []hf.Tensor, tok *tokenizer.Tokenizer) (map[string][]byte, error) {
	var w bytes.Buffer
	if err := hf.Encode(&w, ts, hf.WriteOptions{Metadata: map[string]string{"format": "pt"}}); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var vocab bytes.Buffer
	if _, err := tok.Vocab().WriteTo(&vocab); err != nil {
		return nil, fmt.Errorf("export: vocab.txt: %w", err)
	}
	tc, err := json.MarshalIndent(tok.Config(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: tokenizer_config.json: %w", err)
	}
	return map[string][]byte{
		hf.ConfigFile:        append(cj, '\n'),
		hf.WeightsFile:       w.Bytes(),
		tokenizer.VocabFile:  vocab.Bytes(),
		tokenizer.ConfigFile: append(tc, '\n'),
	}, nil
}

// folderZip stores files as an uncompressed zip archive whose files lie in the folder dir
// (e.g. "bertlab-mlm/config.json"), in the order of an HF folder.
func folderZip(files map[string][]byte, dir string) ([]byte, error) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, name := range []string{hf.ConfigFile, hf.WeightsFile, tokenizer.VocabFile, tokenizer.ConfigFile} {
		w, err := z.CreateHeader(&zip.FileHeader{Name: dir + "/" + name, Method: zip.Store, Modified: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Predict runs the run's model on text: the top-5 fill-mask predictions of every [MASK].
func (f *Pretrain) Predict(text string) (*engine.TaskPrediction, error) {
	r, err := pipeline.FillMask(f.Pre.Model, f.Tok, text, nil, 5)
	if err != nil {
		return nil, err
	}
	return &engine.TaskPrediction{Task: engine.TaskMLM, Fill: r}, nil
}

// Export returns the run's model as a zip of its HF folder "bertlab-mlm/", and the archive's
// name.
func (f *Pretrain) Export() (name string, data []byte, err error) {
	dir := "bertlab-" + f.info.Task
	files, err := MLMFolderFiles(f.Pre.Model, f.Tok)
	if err != nil {
		return "", nil, err
	}
	data, err = folderZip(files, dir)
	return dir + ".zip", data, err
}
