package explain

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Parts choose what Explain answers beside the attribution; the ablation is answered when the
// request names heads to switch off.
type Parts struct {
	Lens       bool
	Importance bool
}

// Explain answers the attribution of the request and the parts asked for, in one Report.
func (e *Explainer) Explain(r Request, p Parts) (*Report, error) {
	x, err := e.encode(r)
	if err != nil {
		return nil, err
	}
	rep, err := e.attribute(r, x)
	if err != nil {
		return nil, err
	}
	if !p.Lens && !p.Importance && len(r.Ablate) == 0 {
		return rep, nil
	}
	// The other parts read the masks, with the attribution's target word as the lens's
	// candidate and the importance's label.
	_, k, err := e.maskedLM(r, "the logit lens, ablation and head importance")
	if err != nil {
		return nil, err
	}
	if p.Lens {
		if rep.Lens, err = e.lens(x, k, rep.Target); err != nil {
			return nil, err
		}
	}
	if len(r.Ablate) > 0 {
		if rep.Ablation, err = e.ablation(x, k, r.Ablate); err != nil {
			return nil, err
		}
	}
	if p.Importance {
		if rep.Importance, err = e.importance(x, rep.Target); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// WriteText writes the report for a terminal: one line per token with its score and a bar,
// then each part.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if a := r.Attribution; a != nil {
		method := "gradient x input"
		if a.Method == MethodIG {
			method = fmt.Sprintf("integrated gradients, %d steps, [%s] baseline", a.Steps, strings.ToUpper(a.Baseline.Name))
		}
		label := a.Target.String()
		if r.Target != nil {
			label = r.Target.Label
		}
		fmt.Fprintf(&b, "why %s? (logit %.4f; %s on the embedding output)\n", label, a.Logit, method)
		var mx float64
		for _, s := range a.Scores {
			mx = math.Max(mx, math.Abs(s))
		}
		for i, s := range a.Scores {
			bar := ""
			if mx > 0 {
				n := int(math.Round(20 * math.Abs(s) / mx))
				if s >= 0 {
					bar = strings.Repeat("█", n)
				} else {
					bar = strings.Repeat("░", n)
				}
			}
			fmt.Fprintf(&b, "  %3d %-16s %+10.4f  %s\n", i, tokenAt(r.Tokens, i), s, bar)
		}
		if a.Method == MethodIG {
			fmt.Fprintf(&b, "  sum %.6g; logit change %.6g (%.4f at the input, %.4f at the baseline); completeness gap %.3g (%.4f%%)\n",
				a.Sum, a.Logit-a.BaselineLogit, a.Logit, a.BaselineLogit, a.Gap, 100*a.RelGap)
		} else {
			fmt.Fprintf(&b, "  sum %.6g (█ raises the logit, ░ lowers it)\n", a.Sum)
		}
	}
	if l := r.Lens; l != nil {
		for _, p := range l.Positions {
			fmt.Fprintf(&b, "\nlogit lens at token %d (the MLM head on each layer's hidden state):\n", p.Position)
			for _, ly := range p.Layers {
				name := fmt.Sprintf("layer %d", ly.Layer)
				if ly.Layer == 0 {
					name = "embeddings"
				}
				fmt.Fprintf(&b, "  %-10s", name)
				for _, t := range ly.Top {
					fmt.Fprintf(&b, " %s %.1f%%", t.Token, 100*t.Prob)
				}
				for _, c := range ly.Candidates {
					fmt.Fprintf(&b, "  | target %.3g%%", 100*c)
				}
				b.WriteByte('\n')
			}
		}
	}
	if a := r.Ablation; a != nil {
		var off []string
		for _, h := range a.Off {
			off = append(off, h.String())
		}
		for _, p := range a.Positions {
			fmt.Fprintf(&b, "\nheads off (%s) at token %d:\n  all heads:", strings.Join(off, " "), p.Position)
			for _, s := range p.Before {
				fmt.Fprintf(&b, " %s %.1f%%→%.1f%%", s.Token, 100*s.Before, 100*s.After)
			}
			b.WriteString("\n  heads off:")
			for _, s := range p.After {
				fmt.Fprintf(&b, " %s %.1f%% (was %.1f%%)", s.Token, 100*s.After, 100*s.Before)
			}
			b.WriteByte('\n')
		}
	}
	if im := r.Importance; im != nil {
		fmt.Fprintf(&b, "\nhead importance |d loss / d head mask| (Michel et al. 2019; normalized per layer in brackets):\n")
		for l, row := range im.Raw {
			fmt.Fprintf(&b, "  layer %-3d", l)
			for h, v := range row {
				fmt.Fprintf(&b, " %d:%.4f [%.2f]", h, v, im.Normalized[l][h])
			}
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func tokenAt(tokens []string, i int) string {
	if i < len(tokens) {
		return tokens[i]
	}
	return "?"
}
