package train

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// EventKind says what an Event reports.
type EventKind int

const (
	// EventStep follows every optimizer step.
	EventStep EventKind = iota
	// EventEval carries the metrics of an evaluation (in Metrics).
	EventEval
	// EventCheckpoint follows a checkpoint written to disk (in Checkpoint).
	EventCheckpoint
	// EventDone ends a run that reached its last step.
	EventDone
)

func (k EventKind) String() string {
	switch k {
	case EventStep:
		return "step"
	case EventEval:
		return "eval"
	case EventCheckpoint:
		return "checkpoint"
	case EventDone:
		return "done"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// MarshalText writes the kind by name ("step", "eval", ...), as log_history shows it.
func (k EventKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind written by MarshalText.
func (k *EventKind) UnmarshalText(b []byte) error {
	for c := EventStep; c <= EventDone; c++ {
		if c.String() == string(b) {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("unknown event kind %q", b)
}

// Event is the progress of a training run, delivered to a callback so that the terminal's
// progress bar and the page's loss curve show the same numbers. The JSON names are those of
// HF Trainer's log_history where it has them.
type Event struct {
	Kind       EventKind `json:"kind"`
	Step       int       `json:"step"`        // optimizer steps taken
	TotalSteps int       `json:"total_steps"` // steps the run will take
	// Epoch counts passes over the data, fractional (HF's "epoch").
	Epoch float64 `json:"epoch"`
	// Loss is the training loss of the step (MLM + NSP), averaged over its micro-batches.
	Loss    float64 `json:"loss"`
	MLMLoss float64 `json:"mlm_loss"`
	NSPLoss float64 `json:"nsp_loss,omitempty"`
	// DistilSoft and DistilAttention are a distilled step's KL divergences from its teacher's
	// masked-LM distributions and attention rows (bert.DistilLosses); 0 without a teacher.
	DistilSoft      float64 `json:"distil_soft,omitempty"`
	DistilAttention float64 `json:"distil_attention,omitempty"`
	// DistilCosine is DistilBERT's cosine term (mean 1 − cos of the last hidden states).
	DistilCosine float64 `json:"distil_cosine,omitempty"`
	// RTDLoss and RTDAccuracy are an ELECTRA step's discriminator loss (unweighted) and the share
	// of attended tokens it called right; Replaced is the share the generator's samples changed.
	// MLMLoss is then the generator's.
	RTDLoss     float64 `json:"rtd_loss,omitempty"`
	RTDAccuracy float64 `json:"rtd_accuracy,omitempty"`
	Replaced    float64 `json:"replaced,omitempty"`
	// LR is the learning rate the step used.
	LR float64 `json:"learning_rate"`
	// GradNorm is the global gradient norm before clipping.
	GradNorm float64 `json:"grad_norm"`
	// Tokens counts the non-padding tokens trained on since the run began (all sessions).
	Tokens int64 `json:"tokens"`
	// Positions counts the positions computed for them, padding included (fine-tuning only: its
	// batches are padded to their longest sequence); 0 where not counted.
	Positions int64 `json:"positions,omitempty"`
	// TokensPerSec is this session's throughput: its tokens over its elapsed time.
	TokensPerSec float64 `json:"tokens_per_sec"`
	// Elapsed is the wall time of this session.
	Elapsed time.Duration `json:"-"`
	// Metrics are an evaluation's figures (EventEval), e.g. mlm_accuracy, mlm_top5, perplexity.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Checkpoint is the folder written (EventCheckpoint, and EventDone when a model was saved).
	Checkpoint string `json:"checkpoint,omitempty"`
}

// String is a one-line summary for logs.
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d/%d", e.Kind, e.Step, e.TotalSteps)
	switch e.Kind {
	case EventStep:
		fmt.Fprintf(&b, " epoch %.2f loss %.4f", e.Epoch, e.Loss)
		// Pre-training reports its two losses; fine-tuning has only the task loss.
		if e.MLMLoss != 0 || e.NSPLoss != 0 {
			fmt.Fprintf(&b, " (mlm %.4f, nsp %.4f)", e.MLMLoss, e.NSPLoss)
		}
		if e.DistilSoft != 0 || e.DistilAttention != 0 {
			fmt.Fprintf(&b, " (distil: soft %.4f, attention %.4f)", e.DistilSoft, e.DistilAttention)
		}
		fmt.Fprintf(&b, " lr %.3g grad-norm %.3g %.0f tokens/s", e.LR, e.GradNorm, e.TokensPerSec)
	case EventEval:
		keys := make([]string, 0, len(e.Metrics))
		for k := range e.Metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s %.4g", k, e.Metrics[k])
		}
	case EventCheckpoint, EventDone:
		if e.Checkpoint != "" {
			fmt.Fprintf(&b, " %s", e.Checkpoint)
		}
	}
	return b.String()
}
