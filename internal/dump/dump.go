// Package dump runs a model on the inputs of a reference fixture (inputs.json) and writes every
// output tensor, and optionally the per-layer intermediates and the gradients, to safetensors
// files under the names the fixtures use: what `bertlab dump` does, for comparing bertlab with
// an independent implementation tensor by tensor.
package dump

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tensor"
)

// Inputs is the layout of the fixtures' inputs.json: [B, S] integer matrices.
type Inputs struct {
	InputIDs          [][]int `json:"input_ids"`
	TokenTypeIDs      [][]int `json:"token_type_ids"`
	AttentionMask     [][]int `json:"attention_mask"`
	Labels            [][]int `json:"labels"`
	NextSentenceLabel []int   `json:"next_sentence_label"`
	// SentenceOrderLabel is ALBERT's (AlbertForPreTraining's SOP head, where BERT has NSP).
	SentenceOrderLabel []int `json:"sentence_order_label"`
}

// maxInputsFile bounds inputs.json.
const maxInputsFile = 64 << 20

// Options name the files to write.
type Options struct {
	Out           string // every output tensor (hidden states, attentions, logits, losses)
	Intermediates string // per-layer intermediates (layer.N.query, ..., mlm_transform); "": none
	Grads         string // d loss / d parameter of every weight (eval mode); "": none
}

// Write runs m on in (read from the file inputs, as messages call it) and writes the files of
// opt, saying what it wrote on stdout.
func Write(m *bert.Model, in *Inputs, inputs string, opt Options, stdout io.Writer) error {
	batch, err := in.Batch()
	if err != nil {
		return fmt.Errorf("%s: %w", inputs, err)
	}
	o, err := m.Forward(batch, bert.Options{MLM: m.MLM != nil, NSP: m.NSP != nil, RTD: m.RTD != nil, Trace: true})
	if err != nil {
		return fmt.Errorf("%s: %w", inputs, err)
	}
	var ts []hf.Tensor
	add := func(name string, t *tensor.Tensor) {
		if t != nil {
			ts = append(ts, hf.Tensor{Name: name, Shape: t.Shape, Data: t.Data})
		}
	}
	for i, h := range o.Trace.HiddenStates {
		add(fmt.Sprintf("hidden_states.%d", i), h)
	}
	for i, a := range o.Trace.Attentions {
		add(fmt.Sprintf("attentions.%d", i), a)
	}
	add("last_hidden_state", o.Hidden)
	add("pooler_output", o.Pooled)
	family := !m.Config.FamilyOf().Is(bert.FamilyBERT)
	if family {
		if err := familyOutputs(m, o, in, add, stdout); err != nil {
			return fmt.Errorf("%s: %w", inputs, err)
		}
	} else {
		add("prediction_logits", o.MLMLogits)
		add("seq_relationship_logits", o.NSPLogits)
	}
	if !family && in.Labels != nil && in.NextSentenceLabel != nil && o.MLMLogits != nil && o.NSPLogits != nil {
		l, err := bert.PreTrainingLoss(o, flatten(in.Labels), in.NextSentenceLabel)
		if err != nil {
			return fmt.Errorf("%s: %w", inputs, err)
		}
		scalar := func(v float64) *tensor.Tensor { return &tensor.Tensor{Shape: []int{1}, Data: []float32{float32(v)}} }
		add("loss", scalar(l.Total))
		add("masked_lm_loss", scalar(l.MLM))
		add("next_sentence_loss", scalar(l.NSP))
		fmt.Fprintf(stdout, "loss %.6f (masked LM %.6f, next sentence %.6f)\n", l.Total, l.MLM, l.NSP)
	}
	if err := hf.Write(opt.Out, ts, hf.WriteOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d tensors to %s\n", len(ts), opt.Out)
	if opt.Intermediates != "" {
		var its []hf.Tensor
		for l, lt := range o.Trace.Layers {
			for _, p := range []struct {
				n string
				t *tensor.Tensor
			}{{"query", lt.Query}, {"key", lt.Key}, {"value", lt.Value}, {"scores", lt.Scores}, {"context", lt.Context},
				{"attention_output", lt.AttentionOutput}, {"intermediate", lt.Intermediate}} {
				its = append(its, hf.Tensor{Name: fmt.Sprintf("layer.%d.%s", l, p.n), Shape: p.t.Shape, Data: p.t.Data})
			}
			// DeBERTa's parts of the scores.
			for _, p := range []struct {
				n string
				t *tensor.Tensor
			}{{"c2p", lt.C2P}, {"p2c", lt.P2C}} {
				if p.t != nil {
					its = append(its, hf.Tensor{Name: fmt.Sprintf("layer.%d.%s", l, p.n), Shape: p.t.Shape, Data: p.t.Data})
				}
			}
		}
		if t := o.Trace.Embeddings; t != nil {
			its = append(its, hf.Tensor{Name: "embeddings", Shape: t.Shape, Data: t.Data})
		}
		if t := o.Trace.MLMTransform; t != nil {
			its = append(its, hf.Tensor{Name: "mlm_transform", Shape: t.Shape, Data: t.Data})
		}
		if err := hf.Write(opt.Intermediates, its, hf.WriteOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %d intermediates to %s\n", len(its), opt.Intermediates)
	}
	if opt.Grads != "" {
		n, err := writeGrads(opt.Grads, m, batch, in)
		if err != nil {
			return fmt.Errorf("gradients: %w", err)
		}
		fmt.Fprintf(stdout, "wrote %d gradients to %s\n", n, opt.Grads)
	}
	return nil
}

// familyOutputs adds the outputs of the families other than BERT under transformers' names:
// …ForMaskedLM's MaskedLMOutput (logits, and loss for the labels), AlbertForPreTraining's
// prediction_logits and sop_logits (its loss the masked LM's plus the sentence order's), or
// ElectraForPreTraining's logits [B, S] (its loss the binary cross-entropy of the labels, 1 =
// replaced, over the attended tokens).
func familyOutputs(m *bert.Model, o *bert.Output, in *Inputs, add func(string, *tensor.Tensor), stdout io.Writer) error {
	scalar := func(v float64) *tensor.Tensor { return &tensor.Tensor{Shape: []int{1}, Data: []float32{float32(v)}} }
	if o.RTDLogits != nil {
		add("logits", o.RTDLogits)
		if in.Labels != nil {
			loss, err := replacedLoss(o.RTDLogits.Data, flatten(in.Labels), flatten(in.AttentionMask))
			if err != nil {
				return err
			}
			add("loss", scalar(loss))
			fmt.Fprintf(stdout, "loss %.6f (replaced tokens)\n", loss)
		}
		return nil
	}
	if o.NSPLogits == nil {
		add("logits", o.MLMLogits)
		if in.Labels != nil && o.MLMLogits != nil {
			loss, _, err := bert.CrossEntropy(o.MLMLogits.Data, m.Config.VocabSize, flatten(in.Labels))
			if err != nil {
				return err
			}
			add("loss", scalar(loss))
			fmt.Fprintf(stdout, "loss %.6f (masked LM)\n", loss)
		}
		return nil
	}
	add("prediction_logits", o.MLMLogits)
	add("sop_logits", o.NSPLogits)
	if in.Labels != nil && in.SentenceOrderLabel != nil && o.MLMLogits != nil {
		mlm, _, err := bert.CrossEntropy(o.MLMLogits.Data, m.Config.VocabSize, flatten(in.Labels))
		if err != nil {
			return err
		}
		sop, _, err := bert.CrossEntropy(o.NSPLogits.Data, 2, in.SentenceOrderLabel)
		if err != nil {
			return err
		}
		add("loss", scalar(mlm+sop))
		fmt.Fprintf(stdout, "loss %.6f (masked LM %.6f, sentence order %.6f)\n", mlm+sop, mlm, sop)
	}
	return nil
}

// replacedLoss is ElectraForPreTraining's loss: the mean over attended tokens (mask nil: all)
// of the binary cross-entropy of sigmoid(logit) and the label (0 original, 1 replaced).
func replacedLoss(logits []float32, labels, mask []int) (float64, error) {
	var sum float64
	n := 0
	for i, z := range logits {
		if mask != nil && mask[i] == 0 {
			continue
		}
		y := labels[i]
		if y != 0 && y != 1 {
			return 0, fmt.Errorf("replaced-token label %d at %d, want 0 or 1", y, i)
		}
		// −[y·log σ(z) + (1−y)·log(1−σ(z))] = max(z, 0) − z·y + log(1 + e^−|z|)
		x := float64(z)
		sum += math.Max(x, 0) - x*float64(y) + math.Log1p(math.Exp(-math.Abs(x)))
		n++
	}
	if n == 0 {
		return math.NaN(), nil
	}
	return sum / float64(n), nil
}

// writeGrads writes d loss / d parameter of BertForPreTraining's loss on the batch (eval mode,
// no dropout) under the parameters' names (the family's names for RoBERTa and DistilBERT, whose
// loss is the masked LM's). A tied MLM decoder gets its own entry, cls.predictions.decoder.weight
// (lm_head.decoder.weight, vocab_projector.weight), holding the total gradient of the shared
// tensor (the same as the word embeddings'), as autograd reports it for a state dict that lists
// both names.
func writeGrads(path string, m *bert.Model, batch bert.Batch, in *Inputs) (int, error) {
	if in.Labels == nil && in.NextSentenceLabel == nil {
		return 0, fmt.Errorf("the inputs have no labels nor next_sentence_label: there is no loss to differentiate")
	}
	g := m.NewGrads()
	if _, err := m.ForwardBackward(batch, flatten(in.Labels), in.NextSentenceLabel, bert.TrainOptions{}, g); err != nil {
		return 0, err
	}
	tied := m.MLM != nil && m.MLM.Decoder == m.WordEmb
	var ts []hf.Tensor
	var wordEmb hf.Tensor
	lastMLM := -1
	fam := m.Config.Family
	for _, p := range g.Params() {
		t := hf.Tensor{Name: hf.FamilyName(fam, p.Name), Shape: p.T.Shape, Data: p.T.Data}
		if p.Name == "bert.embeddings.word_embeddings.weight" {
			wordEmb = t
		}
		ts = append(ts, t)
		if strings.HasPrefix(p.Name, "cls.predictions.") {
			lastMLM = len(ts) - 1
		}
	}
	if tied && lastMLM >= 0 && wordEmb.Data != nil {
		dec := wordEmb
		dec.Name = hf.FamilyName(fam, "cls.predictions.decoder.weight")
		ts = append(ts[:lastMLM+1], append([]hf.Tensor{dec}, ts[lastMLM+1:]...)...)
	}
	return len(ts), hf.Write(path, ts, hf.WriteOptions{})
}

// ReadInputs reads an inputs.json of at most 64 MiB.
func ReadInputs(path string) (*Inputs, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxInputsFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", path, st.Size(), maxInputsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in Inputs
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &in, nil
}

// Batch checks that every matrix is [B, S] and builds the model's batch.
func (in *Inputs) Batch() (bert.Batch, error) {
	B := len(in.InputIDs)
	if B == 0 || len(in.InputIDs[0]) == 0 {
		return bert.Batch{}, fmt.Errorf("input_ids is empty")
	}
	S := len(in.InputIDs[0])
	for _, f := range []struct {
		name string
		m    [][]int
	}{{"input_ids", in.InputIDs}, {"token_type_ids", in.TokenTypeIDs}, {"attention_mask", in.AttentionMask}, {"labels", in.Labels}} {
		if f.m == nil {
			continue
		}
		if len(f.m) != B {
			return bert.Batch{}, fmt.Errorf("%s has %d rows, input_ids has %d", f.name, len(f.m), B)
		}
		for i, r := range f.m {
			if len(r) != S {
				return bert.Batch{}, fmt.Errorf("%s row %d has %d entries, want %d", f.name, i, len(r), S)
			}
		}
	}
	if in.NextSentenceLabel != nil && len(in.NextSentenceLabel) != B {
		return bert.Batch{}, fmt.Errorf("next_sentence_label has %d entries, want %d", len(in.NextSentenceLabel), B)
	}
	if in.SentenceOrderLabel != nil && len(in.SentenceOrderLabel) != B {
		return bert.Batch{}, fmt.Errorf("sentence_order_label has %d entries, want %d", len(in.SentenceOrderLabel), B)
	}
	return bert.Batch{B: B, S: S, InputIDs: flatten(in.InputIDs), TokenTypeIDs: flatten(in.TokenTypeIDs), AttentionMask: flatten(in.AttentionMask)}, nil
}

func flatten(m [][]int) []int {
	if m == nil {
		return nil
	}
	var out []int
	for _, r := range m {
		out = append(out, r...)
	}
	return out
}
