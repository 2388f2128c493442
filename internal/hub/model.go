package hub

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/internal/hubid"
)

// LooksLikeID reports whether a --model argument is meant as a Hub id rather than a path:
// "org/name" or "org/name@revision", not starting with '.', '/', '~' or a drive letter, with
// exactly one '/' before any '@'. A path that exists on disk is a path whatever its shape.
func LooksLikeID(arg string) bool {
	if arg == "" || strings.ContainsAny(arg[:1], "./~\\") || strings.ContainsAny(arg, "\\:") {
		return false
	}
	repo, _, _ := strings.Cut(arg, "@")
	return strings.Count(repo, "/") == 1 && !strings.HasSuffix(repo, "/")
}

// ModelDir returns the folder to load for a --model argument: arg itself when it exists on
// disk or does not look like a Hub id, else the Hub snapshot's folder, fetched into the HF
// cache (see Client.Download) under the environment's settings (HF_ENDPOINT, HF_HUB_CACHE,
// HF_HOME, HF_TOKEN, HF_HUB_OFFLINE, HF_HUB_DISABLE_PROGRESS_BARS), with progress on
// progress (nil for none).
func ModelDir(ctx context.Context, arg string, progress io.Writer) (string, error) {
	if _, err := os.Stat(arg); err == nil || !LooksLikeID(arg) {
		return arg, nil
	}
	ref, err := hubid.Parse(arg)
	if err != nil {
		return "", fmt.Errorf("--model %s: no such folder, and not a Hub id: %w", arg, err)
	}
	s, err := New(EnvFrom(os.Getenv), progress).Download(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("--model %s: no such folder; from the Hub: %w", arg, err)
	}
	return s.Dir, nil
}

// ModelArgs returns a command line's arguments with the value of its --model flag (or -model,
// --model=, -model=) replaced by ModelDir's folder, so that every command that reads
// --model DIR takes a Hub id as well. Arguments after "--" are left alone.
func ModelArgs(ctx context.Context, args []string, progress io.Writer) ([]string, error) {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "model" || strings.HasPrefix(a, "---") {
			continue
		}
		if !hasVal {
			if i+1 >= len(out) {
				break
			}
			i++
			val = out[i]
		}
		dir, err := ModelDir(ctx, val, progress)
		if err != nil {
			return nil, err
		}
		if hasVal {
			out[i] = a[:strings.Index(a, "=")+1] + dir
		} else {
			out[i] = dir
		}
	}
	return out, nil
}
