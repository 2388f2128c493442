package main

import (
	"io"

	"github.com/bertlab/bertlab/internal/pretraincmd"
)

func init() {
	commands["pretrain"] = command{"pre-train a BERT or one of its family (--family roberta, albert, electra, distilbert, deberta) on plain text, resumable",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return pretraincmd.Run(args, stdout, stderr)
		}}
}
