package familylab

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/human"
	"github.com/bertlab/bertlab/internal/modelcard"
)

// Table is the record as a Markdown table, one row a variant, with the settings above it.
func Table(rec *Record) string {
	c := rec.Config
	var b strings.Builder
	fmt.Fprintf(&b, "# Family lab: %s at %s size, the same %s budget\n\n", joinFamilies(rec), c.Preset, c.Budget)
	fmt.Fprintf(&b, "Budget %s %s per variant; sequences of %d tokens, %d a step; peak learning rate %g with %.0f%% warm-up; "+
		"%.0f%% of tokens masked; seed %d. Held-out: %d sequences of %s, %d masked positions, the same for every variant.\n\n",
		fmtAmount(c.Amount), c.Budget, c.SeqLen, c.Batch, c.LR, 100*c.WarmupFrac, 100*c.MaskProb, c.Seed,
		rec.HeldoutSeqs, filepath.Base(c.Heldout), rec.HeldoutN)
	b.WriteString("| variant | HF class | parameters | E / H | blocks (distinct) | sentence task | masking | steps | tokens | training FLOPs | seconds | held-out top-1 | top-5 | perplexity | forward (ms) |")
	for _, t := range c.Tasks {
		fmt.Fprintf(&b, " %s |", t.Name)
	}
	b.WriteString("\n|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	b.WriteString(strings.Repeat("---:|", len(c.Tasks)))
	b.WriteString("\n")
	rows := rec.Results
	if rec.Teacher != nil {
		rows = append(slices.Clip(rows), *rec.Teacher)
	}
	for i, r := range rows {
		secs := fmt.Sprintf("%.1f", r.Seconds)
		if r.Resumed {
			secs += " (resumed)"
		}
		name, steps, tokens, flops := string(r.Family), fmt.Sprint(r.Steps), human.Commas(r.Tokens), fmtAmount(r.FLOPs)
		if i == len(rec.Results) { // the teacher: trained elsewhere
			name, steps, tokens, flops, secs = "teacher ("+string(r.Family)+", "+filepath.Base(r.Folder)+")", "", "", "", ""
		}
		params, gen := human.Commas(r.Params), ""
		if r.GeneratorParams > 0 {
			params += " (+" + human.Commas(r.GeneratorParams) + " generator)"
			gen = fmt.Sprintf(" (MLM head fine-tuned %d steps)", r.ProbeSteps)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d / %d | %d (%d) | %s | %s | %s | %s | %s | %s | %.2f%%%s | %.2f%% | %.1f | %.1f |",
			name, r.Architecture, params, r.EmbeddingDim, r.Hidden, r.Blocks, r.Layers, r.SentenceTask,
			r.Masking, steps, tokens, flops, secs, 100*r.Final.Accuracy, gen, 100*r.Final.Top5,
			r.Final.Perplexity, r.ForwardMs)
		for _, t := range c.Tasks {
			cell := " |"
			for _, sc := range r.Tasks {
				if sc.Name == t.Name {
					cell = fmt.Sprintf(" %.2f%% |", 100*sc.Value)
				}
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	for _, r := range rec.Results {
		if r.GeneratorParams > 0 && r.Generator != nil {
			fmt.Fprintf(&b, "\n%s's discriminator has no masked-LM head: its held-out figures above are those of a copy of it with "+
				"BERT's masked-LM head (random, decoder tied to its embeddings) fine-tuned, whole, for %d steps of the same data "+
				"(not counted in the budget). Its generator ends at %.2f%% top-1 (the curves). On held-out text corrupted by the "+
				"generator's samples the discriminator calls %.2f%% of the tokens right and gives P(replaced) %.3f on average to "+
				"replaced tokens, %.3f to original ones.\n", r.Family, r.ProbeSteps, 100*r.Generator.Accuracy,
				100*r.Final.RTDAccuracy, r.Final.ReplacedProb, r.Final.OriginalProb)
		}
	}
	if len(c.Tasks) > 0 {
		b.WriteString("\nFine-tuning: each variant's final body with BERT's head for the task (the pooler and a classifier, or a " +
			"classifier on every token: the same head on every family, so that the bodies are what differs), fine-tuned whole with " +
			"dropout, AdamW, 10% warm-up and linear decay, then scored on the test set:")
		for _, t := range c.Tasks {
			n := "all"
			if t.MaxTrain > 0 {
				n = fmt.Sprintf("the first %d", t.MaxTrain)
			}
			fmt.Fprintf(&b, " %s, %s examples of %s for %d epochs of batch %d at %g, scored on %s;", t.Name, n,
				filepath.Base(t.Train), t.Epochs, t.Batch, t.LR, filepath.Base(t.Test))
		}
		b.WriteString(" accuracy (part of speech: token accuracy).\n")
	}
	fmt.Fprintf(&b, "\nForward (ms): the final model's eval forward pass with its pre-training heads over %d held-out sequences of %d tokens, "+
		"the median of %d rounds that time every model in turn (GOMAXPROCS %d).", c.Batch, c.SeqLen, forwardRounds, runtime.GOMAXPROCS(0))
	if rec.Teacher != nil {
		b.WriteString(" The teacher row is DistilBERT's teacher measured the same way (held-out set, tasks, forward pass).")
	}
	b.WriteString("\n")
	b.WriteString("\nTraining FLOPs count the matrix products of the forward and backward passes from the shapes " +
		"(train.StepFLOPs; ELECTRA's count its generator too, DistilBERT's its teacher's forward passes); the loss curves show the masked-LM loss alone (the sentence " +
		"task's and ELECTRA's discriminator's are apart; ELECTRA's is its generator's).\n\n")
	for _, f := range Curves {
		fmt.Fprintf(&b, "![%s](%s)\n", strings.TrimSuffix(f, ".png"), f)
	}
	return b.String()
}

func joinFamilies(rec *Record) string {
	var names []string
	for _, r := range rec.Results {
		names = append(names, string(r.Family))
	}
	return strings.Join(names, ", ")
}

// writeReport writes the table and the curves.
func writeReport(out string, rec *Record) error {
	if err := hf.WriteFileAtomic(filepath.Join(out, TableFile), []byte(Table(rec))); err != nil {
		return err
	}
	for _, f := range Curves {
		byFLOPs := strings.Contains(f, "flops")
		heldout := strings.HasPrefix(f, "heldout")
		var ss []modelcard.Series
		for _, r := range rec.Results {
			pts := r.Train
			if heldout {
				pts = r.Evals
			}
			s := modelcard.Series{Label: string(r.Family), Dots: heldout}
			if r.GeneratorParams > 0 {
				s.Label += " (generator)"
			}
			for _, p := range pts {
				x := float64(p.Tokens) / 1e3
				if byFLOPs {
					x = p.FLOPs / 1e12
				}
				y := p.Loss
				if heldout {
					y = 100 * p.Accuracy
				}
				s.X, s.Y = append(s.X, x), append(s.Y, y)
			}
			if !heldout {
				s.Y = trailingMean(s.Y, max(1, len(s.Y)/25))
			}
			ss = append(ss, s)
		}
		title, yLabel := "Masked-LM training loss (trailing mean of 4% of the steps)", "loss (nats)"
		if heldout {
			title, yLabel = "Held-out masked-LM accuracy", "top-1 %"
		}
		xLabel := "training tokens (thousands)"
		if byFLOPs {
			xLabel = "training FLOPs (×10¹²)"
		}
		png, err := modelcard.LineChartPNG(title, xLabel, yLabel, ss, 900, 540)
		if err != nil {
			return err
		}
		if err := hf.WriteFileAtomic(filepath.Join(out, f), png); err != nil {
			return err
		}
	}
	return nil
}

// trailingMean smooths ys with a trailing window of k values (shorter at the start).
func trailingMean(ys []float64, k int) []float64 {
	out := make([]float64, len(ys))
	sum := 0.0
	for i, y := range ys {
		sum += y
		if i >= k {
			sum -= ys[i-k]
		}
		out[i] = sum / float64(min(i+1, k))
	}
	return out
}

// PagePoints is how many training points a variant keeps in the page's record (PageRecord).
const PagePoints = 200

// PageRecord is rec thinned for the page's Family lab (assets/family/record.json): each
// variant's training curve in at most PagePoints points, each the mean loss of its window of
// steps at the window's last step (the evaluations kept whole), and every folder cut to its
// last element, so that the page fetches kilobytes, not the megabytes of every step.
func PageRecord(rec *Record) *Record {
	out := *rec
	thin := func(r Result) Result {
		r.Folder = filepath.Base(r.Folder)
		if n := len(r.Train); n > PagePoints {
			k := (n + PagePoints - 1) / PagePoints
			var pts []Point
			for i := 0; i < n; i += k {
				w := r.Train[i:min(i+k, n)]
				p := w[len(w)-1]
				var loss, sent, rtd float64
				for _, q := range w {
					loss, sent, rtd = loss+q.Loss, sent+q.SentenceLoss, rtd+q.RTDLoss
				}
				m := float64(len(w))
				p.Loss, p.SentenceLoss, p.RTDLoss = loss/m, sent/m, rtd/m
				pts = append(pts, p)
			}
			r.Train = pts
		}
		return r
	}
	out.Results = nil
	for _, r := range rec.Results {
		out.Results = append(out.Results, thin(r))
	}
	if rec.Teacher != nil {
		t := thin(*rec.Teacher)
		out.Teacher = &t
	}
	return &out
}

// WritePageRecord writes PageRecord(rec) to path, atomically.
func WritePageRecord(path string, rec *Record) error {
	data, err := json.MarshalIndent(PageRecord(rec), "", " ")
	if err != nil {
		return err
	}
	return hf.WriteFileAtomic(path, append(data, '\n'))
}
