package bert

import (
	"fmt"
	"math"
)

// IgnoreIndex marks a label that does not count in a loss, as PyTorch's CrossEntropyLoss.
const IgnoreIndex = -100

// CrossEntropy is the mean over rows of logits [N, C] of -log softmax(row)[label], skipping
// labels equal to IgnoreIndex, as torch.nn.CrossEntropyLoss (reduction "mean"). It returns the
// loss and the number of rows counted; with none counted the loss is NaN, as in PyTorch.
func CrossEntropy(logits []float32, c int, labels []int) (float64, int, error) {
	if len(logits) != len(labels)*c {
		return 0, 0, fmt.Errorf("cross entropy: %d logits for %d labels of %d classes", len(logits), len(labels), c)
	}
	var sum float64
	n := 0
	for i, y := range labels {
		if y == IgnoreIndex {
			continue
		}
		if y < 0 || y >= c {
			return 0, 0, fmt.Errorf("cross entropy: label %d at row %d outside [0, %d)", y, i, c)
		}
		sum += -LogSoftmaxAt(logits[i*c:(i+1)*c], y)
		n++
	}
	if n == 0 {
		return math.NaN(), 0, nil
	}
	return sum / float64(n), n, nil
}

// LogSoftmaxAt returns log softmax(row)[j], computed stably in float64.
func LogSoftmaxAt(row []float32, j int) float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - mx)
	}
	return float64(row[j]) - mx - math.Log(s)
}

// Losses are BertForPreTraining's losses: Total = MLM + NSP.
type Losses struct {
	Total, MLM, NSP float64
}

// PreTrainingLoss computes HF BertForPreTraining's loss from an Output with full MLM logits
// [B, S, V] and NSP logits [B, 2]; mlmLabels is [B, S] with IgnoreIndex for unpredicted positions,
// nspLabels [B] (0 = IsNext, 1 = NotNext).
func PreTrainingLoss(out *Output, mlmLabels, nspLabels []int) (Losses, error) {
	if out.MLMLogits == nil || out.NSPLogits == nil || len(out.MLMLogits.Shape) != 3 {
		return Losses{}, fmt.Errorf("pre-training loss: needs full MLM logits [B, S, V] and NSP logits")
	}
	V := out.MLMLogits.Shape[2]
	mlm, _, err := CrossEntropy(out.MLMLogits.Data, V, mlmLabels)
	if err != nil {
		return Losses{}, fmt.Errorf("masked LM loss: %w", err)
	}
	nsp, _, err := CrossEntropy(out.NSPLogits.Data, 2, nspLabels)
	if err != nil {
		return Losses{}, fmt.Errorf("next sentence loss: %w", err)
	}
	return Losses{Total: mlm + nsp, MLM: mlm, NSP: nsp}, nil
}
