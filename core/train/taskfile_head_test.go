package train

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestTaskFileHead keeps the first n examples of a file, or all of them for 0 or too many.
func TestTaskFileHead(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{0, 400}, {10, 10}, {1000, 400}} {
		f, err := ReadTaskFile(bert.SequenceClassification, "../../tinydata/sentiment/test.tsv")
		if err != nil {
			t.Fatal(err)
		}
		f.Head(tc.n)
		if len(f.cls) != tc.want {
			t.Errorf("Head(%d): %d examples, want %d", tc.n, len(f.cls), tc.want)
		}
	}
}
