package train

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bertlab/bertlab/core/dataset"
)

// FuzzParseSQuAD feeds arbitrary bytes to the SQuAD parser: it must return an error or examples
// whose answers are where they say, and the QA features of those examples must be well formed.
// The seed corpus is testdata/fuzz/FuzzParseSQuAD.
func FuzzParseSQuAD(f *testing.F) {
	f.Add([]byte(`{"version": "1.1", "data": [{"title": "T", "paragraphs": [{"context": "Café: the sky is blue.", "qas": [{"id": "q1", "question": "What color is the sky?", "answers": [{"text": "blue", "answer_start": 17}]}]}]}]}`))
	tok := ftTokenizer(f)
	c := QAConfig{MaxSeqLength: 16, DocStride: 2, MaxQueryLength: 4, MaxAnswerLength: 3, NBest: 3}
	f.Fuzz(func(t *testing.T, data []byte) {
		ex, err := dataset.ParseSQuAD(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		ids := map[string]bool{}
		for _, e := range ex {
			if ids[e.ID] || e.ID == "" || len(e.Answers) == 0 {
				t.Fatalf("example %+v: duplicate or empty id, or no answer", e)
			}
			ids[e.ID] = true
			for _, a := range e.Answers {
				r := []rune(e.Context)
				if !utf8.ValidString(e.Context) || a.Start < 0 || a.Start+utf8.RuneCountInString(a.Text) > len(r) ||
					string(r[a.Start:a.Start+utf8.RuneCountInString(a.Text)]) != a.Text {
					t.Fatalf("answer %+v is not in the context %q", a, e.Context)
				}
			}
		}
		d, err := NewQAData(tok, ex, c)
		if err != nil {
			return // a context without tokens
		}
		for i, ft := range d.feats {
			if len(ft.ids) > c.MaxSeqLength || len(ft.types) != len(ft.ids) {
				t.Fatalf("feature %d: %d ids, %d types", i, len(ft.ids), len(ft.types))
			}
			s, e := ft.labels[0], ft.labels[1]
			if s < 0 || e < s || e >= len(ft.ids) || (s > 0 && s < d.ctxStart[i]) {
				t.Fatalf("feature %d: labels %v outside the window of %d tokens (context from %d)", i, ft.labels, len(ft.ids), d.ctxStart[i])
			}
		}
	})
}
