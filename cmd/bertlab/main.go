// Command bertlab is the native bertlab tool: fill-mask, tokenize, dump tensors, inspect and
// create models. Run "bertlab help" for the list of commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/bertlab/bertlab/internal/cli"
	"github.com/bertlab/bertlab/internal/hub"
)

// command is one subcommand: run gets the arguments after its name.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "bertlab: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	// --model takes a Hub id (org/name[@revision]) as well as a folder.
	rest, err := hub.ModelArgs(context.Background(), args[1:], stderr)
	if err == nil {
		err = c.run(rest, stdin, stdout, stderr)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "bertlab %s: %v\n", args[0], err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "bertlab: BERT in pure Go\n\nusage: bertlab <command> [flags] [args]\n\ncommands:")
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"bertlab <command> -h\" for a command's flags.")
}

// parseFlags, usageErr, oneLine and errUsage are cli's, by their old names here.
var (
	parseFlags = cli.ParseFlags
	usageErr   = cli.UsageErr
	oneLine    = cli.OneLine
	errUsage   = cli.ErrUsage
)

// stringList is a flag that may be given several times.
type stringList = cli.StringList
