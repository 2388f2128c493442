// Package cli holds what bertlab's subcommands share: flag parsing that allows flags after
// positional arguments, usage errors (exit status 2) and small flag types.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ErrUsage marks an error whose message is a usage problem (exit status 2).
var ErrUsage = errors.New("usage")

// ParseFlags parses args with fs, allowing flags after positional arguments
// ("bertlab fill-mask "text" --model DIR"), and returns the positional arguments.
func ParseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	fs.SetOutput(stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// UsageErr formats a usage error.
func UsageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// OneLine shortens s for messages: newlines become spaces, and more than 60 bytes end in "...".
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// StringList is a flag that may be given several times.
type StringList []string

// String joins the values with commas.
func (s *StringList) String() string { return strings.Join(*s, ",") }

// Set appends v.
func (s *StringList) Set(v string) error { *s = append(*s, v); return nil }

// FlagSet reports whether the flag name was given on the command line.
func FlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
