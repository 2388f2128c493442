package train

import (
	"fmt"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// Purposes of the generators of a data set (see newRNG).
const (
	streamInstances uint64 = iota + 1
	streamOrder
	streamMask
)

// DataConfig says how a corpus becomes pre-training examples.
type DataConfig struct {
	Instances InstanceConfig
	Masking   MaskingConfig
	// DupeFactor is dupe_factor for static masking: every instance is seen with this many
	// different masks, each fixed for the whole run (the reference uses 10); less than 1 means 1.
	DupeFactor int
	// Dynamic draws new masks for every instance in every epoch (RoBERTa's dynamic masking)
	// instead of the DupeFactor fixed ones.
	Dynamic bool
	// Seed selects the instances, their order in each epoch and the masks.
	Seed uint64
}

// MaskingName says how c masks: "static ×N" (N masked copies of each instance) or "dynamic",
// and "whole-word".
func (c DataConfig) MaskingName() string {
	s := fmt.Sprintf("static ×%d", c.DupeFactor)
	if c.Dynamic {
		s = "dynamic"
	}
	if c.Masking.WholeWord {
		s += " whole-word"
	}
	return s
}

// DefaultData is the reference's recipe for sequences of seqLen tokens with static masks.
func DefaultData(seqLen int, seed uint64) DataConfig {
	return DataConfig{Instances: DefaultInstances(seqLen), Masking: DefaultMasking(seqLen), DupeFactor: 1, Seed: seed}
}

// PretrainData is a corpus made into instances, and the order and masks in which training sees
// them. Everything it hands out is a function of its seed and of the position asked for (epoch,
// index): there is no generator state to save, so a resumed run sees exactly the examples an
// uninterrupted one would. It is not safe for concurrent use (it caches an epoch's order).
type PretrainData struct {
	Config DataConfig
	// Instances are the unmasked instances, made once with CreateInstances.
	Instances []Instance
	Masker    *Masker
	PadID     int

	orderEpoch int // the epoch whose order is cached
	order      []int
}

// NewPretrainData makes the instances of docs.
func NewPretrainData(tok *tokenizer.Tokenizer, docs []TokenDocument, c DataConfig) (*PretrainData, error) {
	if c.DupeFactor < 1 {
		c.DupeFactor = 1
	}
	masker, err := NewMasker(tok, c.Masking)
	if err != nil {
		return nil, err
	}
	insts, err := CreateInstances(docs, c.Instances, tok.CLSID(), tok.SEPID(), newRNG(c.Seed, streamInstances))
	if err != nil {
		return nil, err
	}
	if len(insts) == 0 {
		return nil, fmt.Errorf("pre-training data: no instance could be made from %d documents (a sentence pair needs two sentences or two documents)", len(docs))
	}
	return &PretrainData{Config: c, Instances: insts, Masker: masker, PadID: tok.PadID(), orderEpoch: -1}, nil
}

// Len is the number of examples in an epoch: each instance once with dynamic masking,
// DupeFactor times (with different masks) with static masking.
func (d *PretrainData) Len() int {
	if d.Config.Dynamic {
		return len(d.Instances)
	}
	return len(d.Instances) * d.Config.DupeFactor
}

// Example returns the k-th example of an epoch, masked: the epochs visit the examples in
// different random orders.
func (d *PretrainData) Example(epoch, k int) Instance {
	if d.orderEpoch != epoch {
		d.order = newRNG(d.Config.Seed, streamOrder, uint64(epoch)).Perm(d.Len())
		d.orderEpoch = epoch
	}
	e := d.order[k]
	n := len(d.Instances)
	copyOf := uint64(e / n) // static: which of the DupeFactor masks
	if d.Config.Dynamic {
		copyOf = uint64(epoch)
	}
	i := e % n
	return d.Instances[i].Masked(d.Masker, newRNG(d.Config.Seed, streamMask, copyOf, uint64(i)))
}

// Fixed returns every instance once with its first static mask, in corpus order: the
// deterministic set that evaluation uses.
func (d *PretrainData) Fixed() []Instance {
	out := make([]Instance, len(d.Instances))
	for i, in := range d.Instances {
		out[i] = in.Masked(d.Masker, newRNG(d.Config.Seed, streamMask, 0, uint64(i)))
	}
	return out
}

// Position is where training is in its data: the next example is the Index-th of epoch Epoch.
type Position struct {
	Epoch, Index int
}

// Next returns the n examples from pos on, moving into the next epoch when one ends, and the
// position after them.
func (d *PretrainData) Next(pos Position, n int) ([]Instance, Position) {
	out := make([]Instance, 0, n)
	for range n {
		if pos.Index >= d.Len() {
			pos = Position{Epoch: pos.Epoch + 1}
		}
		out = append(out, d.Example(pos.Epoch, pos.Index))
		pos.Index++
	}
	return out, pos
}

// EpochFloat is pos as a fractional epoch count (HF's logged "epoch").
func (d *PretrainData) EpochFloat(pos Position) float64 {
	return float64(pos.Epoch) + float64(pos.Index)/float64(d.Len())
}

// PretrainBatch is a padded batch of instances with its labels.
type PretrainBatch struct {
	bert.Batch
	MLMLabels []int // [B, S], bert.IgnoreIndex where nothing is predicted; nil when nothing is
	NSPLabels []int // [B]; nil without a sentence task
	Tokens    int   // positions that are not padding
}

// NewPretrainBatch pads instances to the longest of them (or to padTo, if longer) with padID,
// as DataCollatorForLanguageModeling pads: attention mask 0, token type 0, label IgnoreIndex.
func NewPretrainBatch(insts []Instance, padID, padTo int) (PretrainBatch, error) {
	if len(insts) == 0 {
		return PretrainBatch{}, fmt.Errorf("batch: no instance")
	}
	S := padTo
	for _, in := range insts {
		S = max(S, len(in.InputIDs))
	}
	B := len(insts)
	pb := PretrainBatch{Batch: bert.Batch{B: B, S: S, InputIDs: make([]int, B*S), TokenTypeIDs: make([]int, B*S), AttentionMask: make([]int, B*S)},
		MLMLabels: make([]int, B*S), NSPLabels: make([]int, B)}
	predicted, nsp := false, false
	for b, in := range insts {
		if len(in.TokenTypeIDs) != len(in.InputIDs) || in.Labels != nil && len(in.Labels) != len(in.InputIDs) {
			return PretrainBatch{}, fmt.Errorf("batch: instance %d has %d ids, %d token types, %d labels", b, len(in.InputIDs), len(in.TokenTypeIDs), len(in.Labels))
		}
		row := b * S
		for s := range S {
			pb.InputIDs[row+s], pb.MLMLabels[row+s] = padID, bert.IgnoreIndex
			if s < len(in.InputIDs) {
				pb.InputIDs[row+s], pb.TokenTypeIDs[row+s], pb.AttentionMask[row+s] = in.InputIDs[s], in.TokenTypeIDs[s], 1
				if in.Labels != nil {
					pb.MLMLabels[row+s] = in.Labels[s]
					predicted = predicted || in.Labels[s] != bert.IgnoreIndex
				}
			}
		}
		pb.Tokens += len(in.InputIDs)
		pb.NSPLabels[b] = in.NextSentenceLabel
		nsp = nsp || in.NextSentenceLabel != bert.IgnoreIndex
	}
	if !predicted {
		pb.MLMLabels = nil
	}
	if !nsp {
		pb.NSPLabels = nil
	}
	return pb, nil
}
