package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/bertlab/bertlab/api"
	"github.com/bertlab/bertlab/core/engine"
)

func init() {
	commands["serve"] = command{"serve the page and the JSON API (fill-mask, tokenize, attention, embed) over HTTP", runServe}
}

// shutdownGrace is how long in-flight requests get to finish after SIGINT or SIGTERM.
const shutdownGrace = 10 * time.Second

func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, stop, args, stdout, stderr)
}

// serve runs the server until ctx ends, then shuts it down gracefully. stop is called once the
// shutdown starts, so that a second Ctrl-C ends the process at once.
func serve(ctx context.Context, stop func(), args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	model := flags.String("model", "", "model folder (HF layout; default $BERTLAB_MODEL, else the first under ASSETS/models)")
	assets := flags.String("assets", api.DefaultAssets(), "folder of the page and its files, served at / (empty: API only)")
	concurrent := flags.Int("max-concurrent", api.DefaultMaxConcurrent, "model computations running at once; the others wait")
	timeout := flags.Duration("timeout", api.DefaultTimeout, "longest a request may wait and compute before a 503")
	pos, err := parseFlags(flags, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("serve takes no arguments (got %q)", oneLine(pos[0]))
	}
	if *concurrent < 1 || *timeout <= 0 {
		return usageErr("--max-concurrent must be at least 1 and --timeout positive")
	}
	if *model == "" {
		if *model = defaultModel(); *model == "" && *assets != "" {
			*model = firstModel(*assets)
		}
		if *model == "" {
			return usageErr("no model: pass --model DIR (`make run` builds one under assets/models)")
		}
		fmt.Fprintf(stdout, "bertlab serve: no --model: serving %s\n", *model)
	}
	f, err := loadModel(*model)
	if err != nil {
		return err
	}
	if f.Encoder == nil {
		return fmt.Errorf("model folder %s has no tokenizer files", *model)
	}
	static, err := api.AssetsFS(*assets)
	if err != nil {
		return fmt.Errorf("--%w", err)
	}
	logger := log.New(stderr, "bertlab serve: ", log.LstdFlags)
	name := filepath.Base(filepath.Clean(*model))
	e, err := engine.New(name, f.Model, f.Encoder)
	if err != nil {
		return err
	}
	h, err := api.New(e, api.Options{Static: static, MaxConcurrent: *concurrent, Timeout: *timeout, Log: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// An answer may be computed for up to the handler's timeout, then written.
		WriteTimeout:   *timeout + time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       logger,
	}
	what := "API only"
	if static != nil {
		what = "page from " + *assets
	}
	fmt.Fprintf(stdout, "bertlab serve: model %s, %s, listening on http://%s/\n", name, what, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stop()
	fmt.Fprintln(stdout, "bertlab serve: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
