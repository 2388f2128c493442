// Package pretraincmd is bertlab's pretrain command: its flags, the data, model and
// pre-trainer they set up, the run with its progress bar, and what it reports.
package pretraincmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/internal/cli"
	"github.com/bertlab/bertlab/internal/human"
	"github.com/bertlab/bertlab/internal/modelcard"
	"github.com/bertlab/bertlab/internal/progress"
)

const pretrainUsage = "bertlab pretrain (--model DIR | --preset NAME --vocab DIR) --data FILE.txt --out DIR [--steps N] [--batch 32] [--seq 128] [--lr 1e-4] [--resume] [--teacher DIR] ..."

// Run runs "bertlab pretrain" with args (the arguments after the command's name); usage
// problems wrap cli.ErrUsage.
func Run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pretrain", flag.ContinueOnError)
	model := fs.String("model", "", "model folder (HF layout) to start from; heads it lacks start random")
	preset := fs.String("preset", "", "start from a random model of this size instead: "+strings.Join(bert.PresetNames(), ", "))
	vocab := fs.String("vocab", "", "folder with vocab.txt (and tokenizer_config.json); needed with --preset, overrides the model's")
	var data cli.StringList
	fs.Var(&data, "data", "training text (.txt or .txt.gz): one sentence a line, a blank line between documents; several --data are read one after the other, and a file given twice counts twice (a recipe's weight)")
	var cloze cli.StringList
	fs.Var(&cloze, "cloze", "cloze sentences (sentence with one [MASK]<TAB>accepted|words) scored at each evaluation: cloze_NAME_top1 and _top5 in the metrics, NAME the file's base name (repeatable)")
	heldout := fs.String("heldout", "", "held-out text in the same format: masked-LM accuracy, top-5 and perplexity at --eval-every and at the end")
	out := fs.String("out", "", "output folder: checkpoint-<step>/ folders and, at the end, the model (HF layout)")
	steps := fs.Int("steps", 1000, "optimizer steps")
	batch := fs.Int("batch", 32, "sequences per optimizer step")
	accum := fs.Int("accum", 1, "gradient accumulation: split each step into this many micro-batches")
	seq := fs.Int("seq", 128, "max_seq_length: tokens per sequence with [CLS] and [SEP]")
	lr := fs.Float64("lr", 1e-4, "peak learning rate (AdamW)")
	warmup := fs.Int("warmup", -1, "linear warm-up steps, then linear decay to 0 (-1: 1% of --steps)")
	wd := fs.Float64("weight-decay", 0.01, "AdamW weight decay (not on biases and LayerNorm)")
	clip := fs.Float64("clip", 1, "global gradient-norm clipping (0: none)")
	seed := fs.Uint64("seed", 0, "random seed: initial weights, instances, masks, order, dropout")
	noNSP := fs.Bool("no-nsp", false, "no next-sentence prediction: full sentences packed into one segment (RoBERTa)")
	sop := fs.Bool("sop", false, "sentence-order prediction instead of next-sentence prediction (ALBERT)")
	family := fs.String("family", "bert", "the recipe: bert (masked LM + NSP); roberta (full sentences packed across documents, dynamic masks, no NSP; a RobertaForMaskedLM); albert (sentence order, embedding_size below the hidden size, one layer shared by every block; an AlbertForPreTraining); electra (a generator a quarter wide sharing the embeddings, its samples detected by the discriminator; an ElectraForPreTraining, the generator in generator/); distilbert (a student of --teacher's every other layer, 5·soft targets at T 2 + 2·masked LM + 1·cosine; a DistilBertForMaskedLM); deberta (disentangled attention, relative positions only, masked LM; a DebertaV2ForMaskedLM); every one keeps the WordPiece vocabulary")
	wholeWord := fs.Bool("whole-word", false, "whole-word masking: a word's WordPiece pieces are masked together")
	dynamic := fs.Bool("dynamic", false, "dynamic masking: new masks every epoch (RoBERTa)")
	dupe := fs.Int("dupe-factor", 1, "static masking: how many differently masked copies of each instance")
	maskProb := fs.Float64("mask-prob", 0.15, "masked_lm_prob: share of the tokens predicted")
	maxPred := fs.Int("max-predictions", 0, "max_predictions_per_seq (0: ceil(mask-prob × seq))")
	shortSeq := fs.Float64("short-seq-prob", 0.1, "short_seq_prob: share of instances with a random shorter length")
	noDropout := fs.Bool("no-dropout", false, "train without dropout")
	posInit := fs.String("position-init", "normal", "with --preset: start the position embeddings from N(0, initializer_range²) (normal, as HF) or from scaled sinusoids (sinusoidal)")
	posType := fs.String("position-embedding-type", bert.PositionAbsolute, "with --preset: position_embedding_type: "+strings.Join(bert.PositionTypes, ", ")+
		" (the relative types, HF 4.x's, load in transformers 4.x only)")
	saveEvery := fs.Int("save-every", 0, "write a checkpoint every N steps (0: only at the end)")
	keep := fs.Int("keep", 2, "checkpoints to keep (0: all)")
	evalEvery := fs.Int("eval-every", 0, "evaluate on --heldout every N steps (0: at the end only)")
	logEvery := fs.Int("log-every", 0, "when stderr is not a terminal, print a progress line every N steps (0: about 50 lines)")
	startStep := fs.Int("start-step", 0, "with --model: carry a run on from a saved model without its checkpoints: start at this step of the --steps schedule (data position and learning rate as the run would have them)")
	rewarm := fs.Int("rewarm", 1000, "with --start-step: ramp the learning rate up from 0 to the schedule's over this many steps (fresh optimizer moments)")
	resume := fs.Bool("resume", false, "continue from the latest checkpoint in --out (same data and settings)")
	teacherDir := fs.String("teacher", "", "distil this model folder (frozen; same vocabulary) into the one trained: masked LM only (--no-nsp); a resumed run uses the run's teacher")
	wHard := fs.Float64("distil-hard", 1, "with --teacher: weight of the masked-LM cross-entropy with the labels")
	wSoft := fs.Float64("distil-soft", 1, "with --teacher: weight of the KL divergence from the teacher's masked-LM distributions")
	wAttn := fs.Float64("distil-attention", 1, "with --teacher: weight of the KL divergence from the teacher's attention rows, head by head")
	neighbours := fs.String("neighbour-heads", "", "an auxiliary loss pulling these heads toward a neighbour token, such as 0.0-1,0.1+1 (layer.head and offset), for --neighbour-steps steps (masked LM only: --no-nsp)")
	nWeight := fs.Float64("neighbour-weight", 1, "with --neighbour-heads: weight of the mean KL divergence of those heads' rows from one-hot rows on the neighbour")
	nSteps := fs.Int("neighbour-steps", 2000, "with --neighbour-heads: the loss applies to the run's first N steps")
	pos, err := cli.ParseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	fam, err := train.ParseRecipeFamily(*family)
	if err != nil {
		return cli.UsageErr("--family: %v", err)
	}
	distil, plain := fam.Is(bert.FamilyDistilBERT), fam.Is(bert.FamilyBERT)
	switch {
	case len(pos) > 0:
		return cli.UsageErr("unexpected argument %q; %s", cli.OneLine(pos[0]), pretrainUsage)
	case len(data) == 0 || *out == "":
		return cli.UsageErr("%s", pretrainUsage)
	case distil && !*resume && (*teacherDir == "" || *model != "" || *preset != ""):
		return cli.UsageErr("--family distilbert makes its student from --teacher DIR (a BERT with an MLM head): give --teacher, not --model or --preset")
	case !distil && !*resume && (*model == "") == (*preset == ""):
		return cli.UsageErr("give one of --model DIR or --preset NAME (with --vocab DIR); %s", pretrainUsage)
	case *preset != "" && *vocab == "":
		return cli.UsageErr("--preset needs --vocab DIR (the vocabulary sets the model's vocab_size)")
	case *noNSP && *sop:
		return cli.UsageErr("--no-nsp and --sop exclude each other")
	case !plain && (*noNSP || *sop || *dynamic):
		return cli.UsageErr("--family %s sets the sentence task and the masking: leave out --no-nsp, --sop and --dynamic", *family)
	case *steps < 1 || *batch < 1 || *accum < 1 || *batch%*accum != 0:
		return cli.UsageErr("--steps %d, --batch %d, --accum %d: want positive counts, the batch a multiple of --accum", *steps, *batch, *accum)
	case *startStep < 0 || *startStep >= *steps || (*startStep > 0 && *model == ""):
		return cli.UsageErr("--start-step %d: want a step of the --steps %d schedule, with --model DIR (the saved model it carries on from)", *startStep, *steps)
	case *seq < 5:
		return cli.UsageErr("--seq %d: too short for [CLS] A [SEP] B [SEP]", *seq)
	case !slices.Contains(bert.PositionTypes, *posType):
		return cli.UsageErr("--position-embedding-type %q: want one of %s", *posType, strings.Join(bert.PositionTypes, ", "))
	case cli.FlagSet(fs, "position-embedding-type") && *preset == "":
		return cli.UsageErr("--position-embedding-type sets up a new model: it needs --preset (a folder or checkpoint keeps its config.json's)")
	}

	// The data's settings.
	dc := train.DefaultData(*seq, *seed)
	dc.Instances.ShortSeqProb = *shortSeq
	switch {
	case *noNSP:
		dc.Instances.Task = train.NoSentenceTask
	case *sop:
		dc.Instances.Task = train.SentenceOrder
	}
	dc.Masking.Prob, dc.Masking.WholeWord = *maskProb, *wholeWord
	if *maxPred > 0 {
		dc.Masking.MaxPredictions = *maxPred
	} else {
		dc.Masking.MaxPredictions = max(1, int(math.Ceil(*maskProb*float64(*seq))))
	}
	dc.Dynamic, dc.DupeFactor = *dynamic, *dupe
	if !plain {
		if err := train.ApplyRecipe(fam, &dc); err != nil {
			return err
		}
	}

	pc := train.DefaultPretrain(*steps)
	pc.BatchSize, pc.GradAccum, pc.LR, pc.WeightDecay, pc.MaxGradNorm = *batch, *accum, *lr, *wd, *clip
	if *warmup >= 0 {
		pc.Warmup = *warmup
	}
	pc.StartStep, pc.Rewarm = *startStep, *rewarm
	pc.Seed, pc.NoDropout, pc.OutDir, pc.SaveEvery, pc.KeepCheckpoints, pc.EvalEvery = *seed, *noDropout, *out, *saveEvery, *keep, *evalEvery
	if *neighbours != "" {
		if pc.Neighbours.Heads, err = train.ParseNeighbourHeads(*neighbours); err != nil {
			return cli.UsageErr("--neighbour-heads: %v", err)
		}
		pc.Neighbours.Weight, pc.Neighbours.Steps = *nWeight, *nSteps
	}

	// The model and its tokenizer: from the latest checkpoint, a folder, or a preset.
	latest, err := train.LatestCheckpoint(*out)
	if err != nil {
		return err
	}
	var m *bert.Model
	var tok *tokenizer.Tokenizer
	var notes []string
	switch {
	case *resume:
		if latest == "" {
			return fmt.Errorf("--resume: no checkpoint in %s", *out)
		}
		if tok, err = tokenizer.LoadDir(latest); err != nil {
			return err
		}
	case latest != "":
		return cli.UsageErr("%s already holds checkpoints (%s): pass --resume to continue, or choose another --out", *out, latest)
	default:
		if *preset != "" {
			if _, err := bert.Preset(*preset); err != nil {
				return cli.UsageErr("%v", err)
			}
		}
		if fam.Is(bert.FamilyDistilBERT) {
			m, tok, notes, err = train.StartDistilStudent(*teacherDir, *vocab)
		} else {
			m, tok, notes, err = train.StartFamilyModel(fam, *model, *preset, *vocab, *posType, *seed)
		}
		if err != nil {
			return err
		}
		switch *posInit {
		case "normal":
		case "sinusoidal":
			if *preset == "" {
				return cli.UsageErr("--position-init sinusoidal starts a random model: it needs --preset")
			}
			if m.Config.Relative() {
				return cli.UsageErr("--position-init sinusoidal: a %s model adds no position embeddings", m.Config.PositionEmbeddingType)
			}
			m.SinusoidalPositions()
			notes = append(notes, "position embeddings start from scaled sinusoids (--position-init sinusoidal)")
		default:
			return cli.UsageErr("--position-init %q: want normal or sinusoidal", *posInit)
		}
	}

	docs, err := train.ReadDocumentsFiles(data, tok)
	if err != nil {
		return err
	}
	td, err := train.NewPretrainData(tok, docs, dc)
	if err != nil {
		return fmt.Errorf("%s: %w", data.String(), err)
	}
	var p *train.Pretrainer
	if *resume {
		p, err = train.ResumeRecipe(fam, latest, td, pc)
	} else {
		p, err = train.NewRecipePretrainer(fam, m, tok, td, pc, *seed)
	}
	if err != nil {
		return err
	}
	if *resume && cli.FlagSet(fs, "position-embedding-type") && p.Model.Config.Positions() != *posType {
		return cli.UsageErr("--position-embedding-type %s, but %s holds a %s model", *posType, latest, p.Model.Config.Positions())
	}
	given := cli.FlagSet(fs, "distil-hard") || cli.FlagSet(fs, "distil-soft") || cli.FlagSet(fs, "distil-attention")
	weights := bert.DistilWeights{Hard: *wHard, Soft: *wSoft, Attention: *wAttn}
	if fam.Is(bert.FamilyDistilBERT) && !given {
		weights = train.DistilBERTWeights
	}
	teacher, err := p.SetupDistil(*out, *resume, train.TeacherRecord{Dir: *teacherDir, Weights: weights}, given)
	if errors.Is(err, train.ErrDistilUsage) {
		return cli.UsageErr("%v", err)
	} else if err != nil {
		return err
	}
	if *heldout != "" {
		if p.Eval, err = train.HeldoutInstances(*heldout, tok, dc); err != nil {
			return err
		}
	}

	if p.ExtraEval, err = clozeEval(p, cloze); err != nil {
		return err
	}

	mc := p.Model.Config
	for _, n := range notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	fmt.Fprintf(stdout, "pre-training %d layers, hidden %d, %s positions, %s parameters on %d examples an epoch (%d instances of at most %d tokens, %s, %s masking)\n",
		mc.NumHiddenLayers, mc.HiddenSize, mc.Positions(), human.Commas(p.Model.NumParams()), td.Len(), len(td.Instances), *seq, dc.Instances.Task, dc.MaskingName())
	if *resume {
		fmt.Fprintf(stdout, "resuming from %s at step %d of %d\n", latest, p.State.Step, *steps)
	} else if *startStep > 0 {
		fmt.Fprintf(stdout, "carrying on from %s at step %d of %d (epoch %.2f), the learning rate ramped up again over %d steps\n", *model, *startStep, *steps, td.EpochFloat(p.State.Position), *rewarm)
	}
	if teacher != nil {
		tc, w := p.Teacher.Model.Config, p.Teacher.Weights
		fmt.Fprintf(stdout, "distilling %s (%d layers, hidden %d, %s positions): loss %g·masked LM + %g·KL(teacher MLM) + %g·KL(teacher attention) + %g·(1 − cos hidden), temperature %g, student layer l from teacher layer %v\n",
			teacher.Dir, tc.NumHiddenLayers, tc.HiddenSize, tc.Positions(), w.Hard, w.Soft, w.Attention, w.Cosine, max(w.Temperature, 1), p.Teacher.LayerOf)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rec := &progress.Record{Bar: progress.New(stderr, p.State.Step, *steps, *logEvery)}
	start := time.Now()
	err = p.Run(ctx, rec.Event)
	rec.Bar.Finish()
	first, last, lastEval := rec.First, rec.Last, rec.LastEval
	if errors.Is(err, context.Canceled) {
		dir, serr := p.SaveCheckpoint()
		if serr != nil {
			return fmt.Errorf("interrupted at step %d, and the checkpoint failed: %w", p.State.Step, serr)
		}
		return fmt.Errorf("interrupted at step %d; saved %s: continue with the same command and --resume", p.State.Step, dir)
	}
	if errors.Is(err, train.ErrNonFinite) {
		if latest, _ := train.LatestCheckpoint(*out); latest != "" {
			return fmt.Errorf("%w; the last good checkpoint is %s (try a lower --lr)", err, latest)
		}
		return fmt.Errorf("%w; no checkpoint was written before it (try a lower --lr)", err)
	}
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if first != nil {
		fmt.Fprintf(stdout, "trained steps %d-%d of %d in %s (epoch %.2f): %.0f tokens/s\n", first.Step, last.Step, *steps,
			elapsed.Round(100*time.Millisecond), last.Epoch, last.TokensPerSec)
		fmt.Fprintf(stdout, "loss %.4f -> %.4f (masked LM %.4f -> %.4f", first.Loss, last.Loss, first.MLMLoss, last.MLMLoss)
		if dc.Instances.Task != train.NoSentenceTask {
			fmt.Fprintf(stdout, ", %s %.4f -> %.4f", dc.Instances.Task, first.NSPLoss, last.NSPLoss)
		}
		fmt.Fprintln(stdout, ")")
	}
	if lastEval != nil && p.Generator != nil {
		em := lastEval.Metrics
		fmt.Fprintf(stdout, "held-out: generator masked-LM accuracy %.4f; discriminator accuracy %.4f, P(replaced) %.3f on replaced and %.3f on original tokens (%.1f%% replaced)\n",
			em["generator_mlm_accuracy"], em["rtd_accuracy"], em["rtd_replaced_prob"], em["rtd_original_prob"], 100*em["replaced"])
	} else if lastEval != nil {
		em := lastEval.Metrics
		fmt.Fprintf(stdout, "held-out: masked-LM accuracy %.4f, top-5 %.4f, perplexity %.2f over %.0f predictions\n",
			em["mlm_accuracy"], em["mlm_top5"], em["perplexity"], em["n"])
	}
	fmt.Fprintf(stdout, "model saved to %s (HF layout; checkpoints in %s/%s<step>)\n", *out, *out, train.CheckpointPrefix)
	return nil
}

// clozeEval reads the cloze files and returns the evaluation that scores the model being trained
// on them (nil without files).
func clozeEval(p *train.Pretrainer, files []string) (func() (map[string]float64, error), error) {
	if len(files) == 0 {
		return nil, nil
	}
	sets := map[string][]dataset.Cloze{}
	for _, f := range files {
		items, err := modelcard.ReadCloze(f)
		if err != nil {
			return nil, fmt.Errorf("--cloze: %w", err)
		}
		sets[strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))] = items
	}
	return func() (map[string]float64, error) { return pipeline.ClozeMetrics(p.Model, p.Tokenizer, sets) }, nil
}
