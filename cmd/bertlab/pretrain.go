package main

import (
	"io"

	"github.com/bertlab/bertlab/internal/pretraincmd"
)

func init() {
	commands["pretrain"] = command{"pre-train a BERT on plain text (masked LM + next sentence), resumable",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return pretraincmd.Run(args, stdout, stderr)
		}}
}
