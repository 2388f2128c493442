package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/bertlab/bertlab/internal/familylab"
)

func init() {
	commands["family"] = command{"pre-train BERT, RoBERTa, ALBERT, ELECTRA, DistilBERT and DeBERTa side by side on the same token or FLOP budget, then fine-tune each on the same tasks (the family lab), resumable",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return familylab.Command(ctx, args, stdout, stderr)
		}}
}
