package dataset

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzzing checks that the parsers never panic, that every error names a line, and that what they
// accept is well formed and reads back the same after writing it out again.

func checkErr(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line < 1 || pe.Msg == "" {
		t.Fatalf("error %v (%T) is not a *ParseError with a line", err, err)
	}
}

func checkText(t *testing.T, what, s string) {
	t.Helper()
	if s == "" || s != strings.TrimSpace(s) || strings.ContainsAny(s, "\n\r") || !utf8.ValidString(s) {
		t.Fatalf("%s %q: empty, untrimmed, multi-line or invalid", what, s)
	}
}

func seed(f *testing.F, inputs ...string) {
	for _, in := range inputs {
		f.Add([]byte(in))
	}
}

func FuzzParsePretrain(f *testing.F) {
	seed(f, "", "A.\nB.\n\nC.\n", "\uFEFFa\r\n\r\n\tb \n", "x\x00", "\n\n\n", "é\xff")
	f.Fuzz(func(t *testing.T, in []byte) {
		docs, err := ParsePretrain(strings.NewReader(string(in)))
		if err != nil {
			checkErr(t, err)
			return
		}
		var b strings.Builder
		for i, d := range docs {
			if len(d.Sentences) == 0 {
				t.Fatal("empty document")
			}
			if i > 0 {
				b.WriteString("\n")
			}
			for _, s := range d.Sentences {
				checkText(t, "sentence", s)
				b.WriteString(s + "\n")
			}
		}
		again, err := ParsePretrain(strings.NewReader(b.String()))
		if err != nil || !reflect.DeepEqual(again, docs) {
			t.Fatalf("round trip: %q, %v; want %q", again, err, docs)
		}
	})
}

func FuzzParseClassification(f *testing.F) {
	seed(f, "", "positive\tgood .\nnegative\tbad\n", "a\tb\tc\n", "a\tb\n\nc\td\te\n", " \t\n", "a\t\x7f")
	f.Fuzz(func(t *testing.T, in []byte) {
		ex, err := ParseClassification(strings.NewReader(string(in)))
		if err != nil {
			checkErr(t, err)
			return
		}
		var b strings.Builder
		for _, e := range ex {
			checkText(t, "label", e.Label)
			checkText(t, "text", e.Text)
			if strings.Contains(e.Label+e.Text+e.Pair, "\t") {
				t.Fatalf("tab inside a field: %q", e)
			}
			if (e.Pair == "") != (ex[0].Pair == "") {
				t.Fatal("singles and pairs mixed")
			}
			b.WriteString(e.Label + "\t" + e.Text)
			if e.Pair != "" {
				checkText(t, "pair", e.Pair)
				b.WriteString("\t" + e.Pair)
			}
			b.WriteString("\n")
		}
		again, err := ParseClassification(strings.NewReader(b.String()))
		if err != nil || !reflect.DeepEqual(again, ex) {
			t.Fatalf("round trip: %q, %v; want %q", again, err, ex)
		}
	})
}

func FuzzParseCoNLL(f *testing.F) {
	seed(f, "", "The\tDT\ndog\tNN\n\nIt\tPRP\n", "a\tb\tc\n", "\tNN\n", "x y\tNN\n", "a\tDT\r\n\r\n")
	f.Fuzz(func(t *testing.T, in []byte) {
		sents, err := ParseCoNLL(strings.NewReader(string(in)))
		if err != nil {
			checkErr(t, err)
			return
		}
		var b strings.Builder
		for _, s := range sents {
			if len(s.Tokens) == 0 || len(s.Tokens) != len(s.Tags) {
				t.Fatalf("sentence of %d tokens and %d tags", len(s.Tokens), len(s.Tags))
			}
			for i := range s.Tokens {
				checkText(t, "token", s.Tokens[i])
				checkText(t, "tag", s.Tags[i])
				if strings.ContainsAny(s.Tokens[i]+s.Tags[i], " \t") {
					t.Fatalf("space in %q/%q", s.Tokens[i], s.Tags[i])
				}
				b.WriteString(s.Tokens[i] + "\t" + s.Tags[i] + "\n")
			}
			b.WriteString("\n")
		}
		again, err := ParseCoNLL(strings.NewReader(b.String()))
		if err != nil || !reflect.DeepEqual(again, sents) {
			t.Fatalf("round trip: %q, %v; want %q", again, err, sents)
		}
	})
}
