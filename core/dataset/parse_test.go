package dataset

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// wantErr checks that err is a *ParseError for line with a message containing msg.
func wantErr(t *testing.T, err error, line int, msg string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *ParseError", err, err)
	}
	if pe.Line != line || !strings.Contains(pe.Msg, msg) {
		t.Fatalf("error %q, want line %d and %q", err, line, msg)
	}
}

var long = strings.Repeat("a", MaxLineBytes+1)

func TestParsePretrain(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Document
		errLine  int
		errMsg   string
	}{
		{name: "empty", in: ""},
		{name: "only blank lines", in: "\n \n\t\n"},
		{name: "one document", in: "One.\nTwo.\n", want: []Document{{[]string{"One.", "Two."}}}},
		{name: "no final newline", in: "One.\nTwo.", want: []Document{{[]string{"One.", "Two."}}}},
		{name: "two documents", in: "A.\nB.\n\nC.\n", want: []Document{{[]string{"A.", "B."}}, {[]string{"C."}}}},
		{name: "blank runs and edges", in: "\n\nA.\n\n\n \nB.\n\n", want: []Document{{[]string{"A."}}, {[]string{"B."}}}},
		{name: "spaces trimmed, tabs kept inside", in: "  a\tb  \n", want: []Document{{[]string{"a\tb"}}}},
		{name: "CRLF", in: "A.\r\nB.\r\n\r\nC.\r\n", want: []Document{{[]string{"A.", "B."}}, {[]string{"C."}}}},
		{name: "BOM at start", in: "\uFEFFA.\n", want: []Document{{[]string{"A."}}}},
		{name: "unicode", in: "Café — £20,000.\n", want: []Document{{[]string{"Café — £20,000."}}}},
		{name: "line of MaxLineBytes", in: long[1:] + "\n", want: []Document{{[]string{long[1:]}}}},
		{name: "line too long", in: "A.\n" + long + "\n", errLine: 2, errMsg: "longer than"},
		{name: "last line too long", in: "A.\n\n" + long, errLine: 3, errMsg: "longer than"},
		{name: "invalid UTF-8", in: "A.\nB\xff.\n", errLine: 2, errMsg: "UTF-8"},
		{name: "NUL", in: "A\x00.\n", errLine: 1, errMsg: "control character U+0000 at byte 2"},
		{name: "lone CR", in: "A.\rB.\n", errLine: 1, errMsg: "U+000D"},
		{name: "BOM inside", in: "A.\n\uFEFFB.\n", errLine: 2, errMsg: "byte-order mark"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePretrain(strings.NewReader(tc.in))
			if tc.errMsg != "" {
				wantErr(t, err, tc.errLine, tc.errMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseClassification(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Example
		errLine  int
		errMsg   string
	}{
		{name: "empty", in: ""},
		{name: "singles", in: "positive\ta fine film .\nnegative\tdull\n",
			want: []Example{{Label: "positive", Text: "a fine film ."}, {Label: "negative", Text: "dull"}}},
		{name: "pairs", in: "entailment\tA man sleeps.\tA person sleeps.\n",
			want: []Example{{Label: "entailment", Text: "A man sleeps.", Pair: "A person sleeps."}}},
		{name: "blank lines skipped, CRLF", in: "\r\na\tx\r\n\r\n  \r\nb\ty\r\n",
			want: []Example{{Label: "a", Text: "x"}, {Label: "b", Text: "y"}}},
		{name: "fields trimmed", in: " a \t  x y  \n", want: []Example{{Label: "a", Text: "x y"}}},
		{name: "no tab", in: "positive a fine film\n", errLine: 1, errMsg: "got 1 tab-separated fields"},
		{name: "four fields", in: "a\tb\n\na\tb\tc\td\n", errLine: 3, errMsg: "got 4"},
		{name: "mixed arity", in: "a\tx\nb\tx\ty\n", errLine: 2, errMsg: "line 1 has 2"},
		{name: "empty label", in: "a\tx\n \tx\n", errLine: 2, errMsg: "empty label"},
		{name: "empty text", in: "a\t\n", errLine: 1, errMsg: "empty text"},
		{name: "empty second text", in: "a\tx\t \n", errLine: 1, errMsg: "empty second text"},
		{name: "too long", in: "a\t" + long, errLine: 1, errMsg: "longer than"},
		{name: "invalid UTF-8", in: "a\tx\nb\t\xc3\x28\n", errLine: 2, errMsg: "UTF-8"},
		{name: "control", in: "a\tx\x1b[0m\n", errLine: 1, errMsg: "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseClassification(strings.NewReader(tc.in))
			if tc.errMsg != "" {
				wantErr(t, err, tc.errLine, tc.errMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseCoNLL(t *testing.T) {
	s := func(pairs ...string) TaggedSentence {
		var ts TaggedSentence
		for i := 0; i < len(pairs); i += 2 {
			ts.Tokens = append(ts.Tokens, pairs[i])
			ts.Tags = append(ts.Tags, pairs[i+1])
		}
		return ts
	}
	for _, tc := range []struct {
		name, in string
		want     []TaggedSentence
		errLine  int
		errMsg   string
	}{
		{name: "empty", in: ""},
		{name: "two sentences", in: "The\tDT\ndog\tNN\n\nIt\tPRP\nran\tVBD\n\n",
			want: []TaggedSentence{s("The", "DT", "dog", "NN"), s("It", "PRP", "ran", "VBD")}},
		{name: "no final blank line", in: "Hi\tUH", want: []TaggedSentence{s("Hi", "UH")}},
		{name: "blank runs, CRLF", in: "\r\n\r\na\tDT\r\n\r\n\r\nb\tNN\r\n", want: []TaggedSentence{s("a", "DT"), s("b", "NN")}},
		{name: "punctuation tokens", in: "#\t#\n$\t$\n\"\t\"\n,\t,\n", want: []TaggedSentence{s("#", "#", "$", "$", "\"", "\"", ",", ",")}},
		{name: "one field", in: "The\tDT\ndog NN\n", errLine: 2, errMsg: "got 1 tab-separated fields"},
		{name: "three fields", in: "The\tDT\tB-NP\n", errLine: 1, errMsg: "got 3"},
		{name: "empty token", in: "\tDT\n", errLine: 1, errMsg: "empty token"},
		{name: "empty tag", in: "a\tDT\n\nThe\t\n", errLine: 3, errMsg: "empty tag"},
		{name: "space in token", in: "New York\tNNP\n", errLine: 1, errMsg: `token "New York" holds`},
		{name: "space in tag", in: "a\tD T\n", errLine: 1, errMsg: "tag"},
		{name: "too long", in: "a\tDT\n" + long + "\tNN\n", errLine: 2, errMsg: "longer than"},
		{name: "invalid UTF-8", in: "\xff\tNN\n", errLine: 1, errMsg: "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCoNLL(strings.NewReader(tc.in))
			if tc.errMsg != "" {
				wantErr(t, err, tc.errLine, tc.errMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A reader that fails is reported with the line it failed on.
func TestParseReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("a\tb\n"), iotest.ErrReader(errors.New("disk on fire")))
	_, err := ParseClassification(r)
	wantErr(t, err, 2, "read: disk on fire")
}

// TestParseText: text pasted into the page reads as a pre-training file does (CRLF or LF,
// spaces trimmed, blank lines between documents), and what a file may not hold is an error
// that names the line.
func TestParseText(t *testing.T) {
	docs, err := ParseText("  One.\r\nTwo.\n\n\n Three. \n")
	if err != nil {
		t.Fatal(err)
	}
	got := Sentences(docs)
	if len(got) != 2 || strings.Join(got[0], "|") != "One.|Two." || strings.Join(got[1], "|") != "Three." {
		t.Errorf("%q", got)
	}
	if docs, err := ParseText("\n \n"); err != nil || len(docs) != 0 {
		t.Errorf("blank text: %v, %v", docs, err)
	}
	_, err = ParseText("one\ntwo\x00\n")
	wantErr(t, err, 2, "control character")
}
