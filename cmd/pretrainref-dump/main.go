// Command dump writes the batches that `bertlab pretrain` draws for the built-in model's
// recipe (FULL-SENTENCES instances without NSP, dynamic 15% masking, seed 1), and the held-out
// evaluation instances, as little-endian int32 arrays for an independent trainer
// (scripts/pretrainref/train.py). Each file is: B, S, then input_ids, labels (-100 where
// nothing is predicted) and attention_mask, each [B, S].
//
//	go run ./cmd/pretrainref-dump --vocab DIR --steps 4800 --batch 8 --out /tmp/tref
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
)

func main() {
	vocab := flag.String("vocab", "build/pretrain/bertlab-mini/vocab", "vocabulary folder (bertlab vocab)")
	trainFile := flag.String("train", "tinydata/pretrain/train.txt", "pre-training corpus")
	heldout := flag.String("heldout", "tinydata/pretrain/heldout.txt", "held-out corpus")
	steps := flag.Int("steps", 4800, "steps to write")
	batch := flag.Int("batch", 8, "sequences a step")
	seq := flag.Int("seq", 128, "max_seq_length")
	seed := flag.Uint64("seed", 1, "data seed")
	out := flag.String("out", "", "output folder (train.bin, heldout.bin)")
	flag.Parse()
	if err := run(*vocab, *trainFile, *heldout, *out, *steps, *batch, *seq, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}

func run(vocab, trainFile, heldout, out string, steps, batch, seq int, seed uint64) error {
	if out == "" || steps < 1 || batch < 1 {
		return fmt.Errorf("need --out, --steps >= 1 and --batch >= 1")
	}
	tok, err := tokenizer.LoadDir(vocab)
	if err != nil {
		return err
	}
	// The data settings of `bertlab pretrain --no-nsp --dynamic --seq S --seed N`.
	dc := train.DefaultData(seq, seed)
	dc.Instances.Task = train.NoSentenceTask
	dc.Dynamic = true
	dc.Masking.MaxPredictions = max(1, int(math.Ceil(dc.Masking.Prob*float64(seq))))
	td, err := data(trainFile, tok, dc)
	if err != nil {
		return err
	}
	var all []train.Instance
	pos := train.Position{}
	for range steps {
		var insts []train.Instance
		insts, pos = td.Next(pos, batch)
		all = append(all, insts...)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := write(filepath.Join(out, "train.bin"), all, seq); err != nil {
		return err
	}
	hd, err := data(heldout, tok, dc)
	if err != nil {
		return err
	}
	if err := write(filepath.Join(out, "heldout.bin"), hd.Fixed(), seq); err != nil {
		return err
	}
	fmt.Printf("vocabulary %d, %d training sequences (%d steps of %d), %d held-out\n", tok.Vocab().Len(), len(all), steps, batch, len(hd.Instances))
	return nil
}

// data reads a corpus file as bertlab pretrain does.
func data(path string, tok *tokenizer.Tokenizer, dc train.DataConfig) (*train.PretrainData, error) {
	docs, err := train.ReadDocumentsFile(path, tok)
	if err != nil {
		return nil, err
	}
	return train.NewPretrainData(tok, docs, dc)
}

// write stores insts padded to seq as B, S, input_ids, labels, attention_mask (int32).
func write(path string, insts []train.Instance, seq int) error {
	b, err := train.NewPretrainBatch(insts, 0, seq)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	put := func(a []int) error {
		x := make([]int32, len(a))
		for i, v := range a {
			x[i] = int32(v)
		}
		return binary.Write(w, binary.LittleEndian, x)
	}
	for _, a := range [][]int{{b.B, b.S}, b.InputIDs, b.MLMLabels, b.AttentionMask} {
		if err := put(a); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
