package main

import (
	"io"

	"github.com/bertlab/bertlab/internal/pretraincmd"
)

func init() {
	commands["pretrain"] = command{"pre-train a BERT, RoBERTa or ALBERT (--family) on plain text, resumable",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return pretraincmd.Run(args, stdout, stderr)
		}}
}
