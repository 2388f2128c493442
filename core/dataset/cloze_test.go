package dataset

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseCloze(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Cloze
		err      string
	}{
		{"with and without words", "# comment\n\nThe [MASK] sat.\tcat|dog\nA [MASK].\n",
			[]Cloze{{"The [MASK] sat.", []string{"cat", "dog"}}, {"A [MASK].", nil}}, ""},
		{"spaces trimmed", "  The [MASK] sat. \t cat | dog \n", []Cloze{{"The [MASK] sat.", []string{"cat", "dog"}}}, ""},
		{"no mask", "The cat sat.\tcat\n", nil, "line 1: 0 [MASK]"},
		{"no text", "x\n", nil, "line 1: 0 [MASK]"},
		{"two masks", "The [MASK] [MASK].\n", nil, "line 1: 2 [MASK]"},
		{"empty word", "A [MASK].\tcat||dog\n", nil, "line 1: an empty acceptable word"},
		{"three fields", "A [MASK].\tcat\tdog\n", nil, "line 1: more than two"},
		{"nothing", "# only a comment\n\n", nil, "no cloze sentence"},
		{"control character", "A [MASK].\x01\n", nil, "line 1: control character"},
	}
	for _, tc := range tests {
		got, err := ParseCloze(strings.NewReader(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// The model card's everyday sentences parse: 40 of them, each with acceptable words.
// TestClozeFiles parses the committed cloze sets (issue 25: 60 everyday sentences, 40 simple
// facts), each sentence with acceptable words.
func TestClozeFiles(t *testing.T) {
	for file, want := range map[string]int{"everyday.tsv": 60, "facts.tsv": 40} {
		f, err := os.Open("../../tinydata/cloze/" + file)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := ParseCloze(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(cs) != want {
			t.Errorf("%s: %d sentences, want %d", file, len(cs), want)
		}
		for _, c := range cs {
			if len(c.Accept) == 0 {
				t.Errorf("%s: %q has no acceptable words", file, c.Text)
			}
		}
	}
}

func FuzzParseCloze(f *testing.F) {
	seed(f, "", "A [MASK].\tx|y\n", "# c\n\nB [MASK]\n", "[MASK][MASK]\n", "a [MASK]\t|\n", "a [MASK]\tx\ty\n", "\uFEFFa [MASK]\r\n")
	f.Fuzz(func(t *testing.T, in []byte) {
		cs, err := ParseCloze(strings.NewReader(string(in)))
		if err != nil {
			checkErr(t, err)
			return
		}
		for _, c := range cs {
			if strings.Count(c.Text, ClozeMask) != 1 {
				t.Fatalf("accepted %q", c.Text)
			}
			for _, w := range c.Accept {
				if w == "" || w != strings.TrimSpace(w) || strings.ContainsAny(w, "|\t") {
					t.Fatalf("acceptable word %q", w)
				}
			}
		}
	})
}
