package modelcard

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/train"
)

// maxEarlierEvals bounds an earlier-evaluations file (a run of a million steps evaluated every
// 500 has 2,000).
const maxEarlierEvals = 100_000

// ReadEarlierEvals parses a tab-separated file of a run's evaluations recorded before its
// history begins (the run moved across machines and the logs of the earlier ones are gone):
// a header line whose first column is "step" and whose others name metrics (mlm_accuracy,
// mlm_top5, mlm_loss, cloze_everyday_top5, ...), then one line per evaluation, values as
// fractions; an empty cell is a figure not recorded. Lines starting with # are comments.
// Each evaluation becomes an EventEval (with perplexity exp(mlm_loss) when the loss is given).
func ReadEarlierEvals(r io.Reader, name string) ([]train.Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024)
	var cols []string
	var out []train.Event
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if cols == nil {
			if f[0] != "step" || len(f) < 2 {
				return nil, fmt.Errorf("%s:%d: the header must be step<TAB>metric..., got %q", name, line, text)
			}
			for _, c := range f[1:] {
				if c == "" {
					return nil, fmt.Errorf("%s:%d: an empty metric name in the header", name, line)
				}
			}
			cols = f[1:]
			continue
		}
		if len(f) != len(cols)+1 {
			return nil, fmt.Errorf("%s:%d: %d columns, the header has %d", name, line, len(f), len(cols)+1)
		}
		step, err := strconv.Atoi(f[0])
		if err != nil || step < 1 {
			return nil, fmt.Errorf("%s:%d: step %q is not a positive integer", name, line, f[0])
		}
		if n := len(out); n > 0 && step <= out[n-1].Step {
			return nil, fmt.Errorf("%s:%d: step %d does not come after step %d", name, line, step, out[n-1].Step)
		}
		if len(out) == maxEarlierEvals {
			return nil, fmt.Errorf("%s:%d: more than %d evaluations", name, line, maxEarlierEvals)
		}
		e := train.Event{Kind: train.EventEval, Step: step, Metrics: map[string]float64{}}
		for i, c := range cols {
			if f[i+1] == "" {
				continue
			}
			v, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 100 || (c != "mlm_loss" && v > 1) {
				return nil, fmt.Errorf("%s:%d: %s %q is not a fraction (a loss: a number of nats)", name, line, c, f[i+1])
			}
			e.Metrics[c] = v
		}
		if l, ok := e.Metrics["mlm_loss"]; ok {
			e.Metrics["perplexity"] = math.Exp(l)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if cols == nil {
		return nil, fmt.Errorf("%s: no header line", name)
	}
	return out, nil
}

// prependEarlier puts the evaluations before the stage's first logged step in front of its
// history; it returns how many it kept.
func prependEarlier(s *stage, evals []train.Event) int {
	first := math.MaxInt
	for _, e := range s.State.LogHistory {
		first = min(first, e.Step)
	}
	var keep []train.Event
	for _, e := range evals {
		if e.Step < first {
			keep = append(keep, e)
		}
	}
	s.State.LogHistory = append(keep, s.State.LogHistory...)
	return len(keep)
}
