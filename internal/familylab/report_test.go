package familylab

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestPageRecord: the page's record keeps at most PagePoints training points a variant, each the
// mean loss of its window at the window's last step, the evaluations whole and the folders cut
// to their names; a short curve is kept as it is; the written file reads back.
func TestPageRecord(t *testing.T) {
	long := Result{Family: "bert", Folder: "/tmp/x/bert"}
	for i := 1; i <= 1001; i++ {
		long.Train = append(long.Train, Point{Step: i, Tokens: int64(10 * i), Loss: float64(i)})
	}
	long.Evals = []Point{{Step: 500, Accuracy: 0.1}, {Step: 1001, Accuracy: 0.2}}
	short := Result{Family: "roberta", Folder: "roberta", Train: []Point{{Step: 1, Loss: 3}, {Step: 2, Loss: 2}}}
	rec := &Record{Results: []Result{long, short}, Teacher: &Result{Folder: "assets/models/bertlab-mini"}}
	p := PageRecord(rec)
	got := p.Results[0]
	k := 6 // ceil(1001 / 200)
	if len(got.Train) != 167 || got.Folder != "bert" || len(got.Evals) != 2 || p.Teacher.Folder != "bertlab-mini" {
		t.Fatalf("%d points, folder %q, %d evaluations, teacher %q", len(got.Train), got.Folder, len(got.Evals), p.Teacher.Folder)
	}
	for j, pt := range got.Train {
		lo, hi := j*k+1, min((j+1)*k, 1001)
		if want := float64(lo+hi) / 2; pt.Step != hi || pt.Tokens != int64(10*hi) || math.Abs(pt.Loss-want) > 1e-12 {
			t.Fatalf("point %d: step %d tokens %d loss %g; want step %d, loss %g", j, pt.Step, pt.Tokens, pt.Loss, hi, want)
		}
	}
	if len(p.Results[1].Train) != 2 || len(rec.Results[0].Train) != 1001 || rec.Results[0].Folder != "/tmp/x/bert" {
		t.Error("the short curve was changed, or the record itself was")
	}
	path := filepath.Join(t.TempDir(), "record.json")
	if err := WritePageRecord(path, rec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil || len(back.Results) != 2 || len(back.Results[0].Train) != 167 {
		t.Errorf("written record: %v, %d results", err, len(back.Results))
	}
}
