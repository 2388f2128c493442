package shareddata

import (
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParsers(t *testing.T) {
	docs, err := ParseParagraphs([]byte("April is a month. It has 30 days.\n\n  Mr. Smith went home.\tHe slept.\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Document{
		{Key: "April is a month. It has 30 days.", Sentences: []string{"April is a month.", "It has 30 days."}},
		{Key: "Mr. Smith went home. He slept.", Sentences: []string{"Mr. Smith went home.", "He slept."}},
	}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("ParseParagraphs: %q, want %q", docs, want)
	}

	for _, c := range []struct {
		in   string
		want []Labelled
		err  string
	}{
		{"1\tgood film .\n\n0\t bad  film \n", []Labelled{{"1", "good film ."}, {"0", "bad film"}}, ""},
		{"ele\tA text.\nno tab here\n", nil, "line 2: no tab"},
		{"\tx\n", nil, "line 1: empty label"},
		{"x\t \n", nil, "line 1: empty text"},
		{"x\ty\xff\n", nil, "line 1: not UTF-8"},
	} {
		got, err := ParseLabelled([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseLabelled(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseLabelled(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}

	for _, c := range []struct {
		in   string
		want []Tagged
		err  string
	}{
		{"I ran .\tPRON VERB PUNCT\n", []Tagged{{[]string{"I", "ran", "."}, []string{"PRON", "VERB", "PUNCT"}}}, ""},
		{"I ran\tPRON\n", nil, "line 1: 2 words and 1 tags"},
		{"\n \tX\n", nil, "line 2: no words"},
		{"I\n", nil, "line 1: no tab"},
	} {
		got, err := ParseTagged([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseTagged(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseTagged(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}

	for in, want := range map[string][]string{
		"it was good . it was long !":   {"it was good .", "it was long !"},
		"what ? ! no . . . yes":         {"what ? !", "no . . .", "yes"},
		"no end here":                   {"no end here"},
		"":                              nil,
		"dr . smith , 3 . 5 stars . ok": {"dr .", "smith , 3 .", "5 stars .", "ok"},
	} {
		if got := SplitLowercase(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitLowercase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMissingAndWrongSum: a missing source names its origin; a file with other bytes is refused
// with both sums.
func TestMissingAndWrongSum(t *testing.T) {
	dir := t.TempDir()
	_, err := Read(dir, SimpleWiki)
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "taminemelissa/quiz-generator") {
		t.Errorf("missing file: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, Tatoeba.File))
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	z.Write([]byte("Hello.\n"))
	z.Close()
	f.Close()
	_, err = Read(dir, Tatoeba)
	if err == nil || !strings.Contains(err.Error(), Tatoeba.SHA256) {
		t.Errorf("wrong bytes: %v", err)
	}
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), EWTTest.File) {
		t.Errorf("Check of an almost empty folder: %v", err)
	}
	err = Missing(dir)
	for _, s := range All {
		if named := err != nil && strings.Contains(err.Error(), s.File+": missing: it is"); named != (s != Tatoeba) {
			t.Errorf("Missing: %s named %v: %v", s.File, named, err)
		}
	}
	if _, err := Build(dir, t.TempDir()); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), SimpleWiki.Origin) || !strings.Contains(err.Error(), EWTTest.Origin) {
		t.Errorf("Build without the files: %v", err)
	}
}

// TestSplitIsStable: the held-out split depends on the key alone, and holds about its permille.
func TestSplitIsStable(t *testing.T) {
	var docs []Document
	for i := range 20000 {
		k := strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
		docs = append(docs, Document{Key: k, Sentences: []string{k}})
	}
	train, held := split("wiki", docs, 10)
	if len(train)+len(held) != len(docs) || len(held) < 140 || len(held) > 260 {
		t.Fatalf("%d train, %d held out of %d at 1%%", len(train), len(held), len(docs))
	}
	rev := make([]Document, len(docs))
	for i, d := range docs {
		rev[len(docs)-1-i] = d
	}
	_, held2 := split("wiki", rev, 10)
	inHeld := map[string]bool{}
	for _, d := range held {
		inHeld[d.Key] = true
	}
	for _, d := range held2 {
		if !inHeld[d.Key] {
			t.Fatalf("%q held out in one order only", d.Key)
		}
	}
}

func FuzzParseLabelled(f *testing.F) {
	for _, s := range []string{"", "1\tgood .\n", "a\tb\tc\n", "\t\n", "x\ty\xff", "\r\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ls, err := ParseLabelled(in)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("error %v names no line", err)
			}
			return
		}
		for _, l := range ls {
			if l.Label == "" || l.Text == "" || strings.ContainsAny(l.Text, "\n\r") {
				t.Fatalf("bad example %q", l)
			}
		}
	})
}

func FuzzParseTagged(f *testing.F) {
	for _, s := range []string{"", "I ran .\tPRON VERB PUNCT\n", "a\t\n", "a b\tX\n", "\t\t\n", "é\tX"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ts, err := ParseTagged(in)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("error %v names no line", err)
			}
			return
		}
		for _, s := range ts {
			if len(s.Words) == 0 || len(s.Words) != len(s.Tags) {
				t.Fatalf("bad sentence %q", s)
			}
		}
	})
}

func FuzzParseParagraphs(f *testing.F) {
	for _, s := range []string{"", "A b. C d.\n", "Mr. X.\n\n", "\x00\x7f\n", "é\xff", "\"Q?\" \"A.\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		docs, err := ParseParagraphs(in)
		if err != nil {
			return
		}
		for _, d := range docs {
			if len(d.Sentences) == 0 || strings.Join(d.Sentences, " ") != d.Key {
				t.Fatalf("document %q: sentences %q do not make its text", d.Key, d.Sentences)
			}
		}
		_ = SplitLowercase(string(in))
	})
}

// TestAttribution: the card's section names every source file with its origin and licence, and
// the weights' licence.
func TestAttribution(t *testing.T) {
	st := Stats{Parts: []PartStats{{Part: Parts[0], Train: Count{Documents: 3, Sentences: 5, Words: 40}}}, RTTrain: 7}
	a := st.Attribution()
	for _, s := range All {
		for _, want := range []string{s.File, s.Origin, s.Licence} {
			if !strings.Contains(a, want) {
				t.Errorf("attribution lacks %q", want)
			}
		}
	}
	for _, want := range []string{"CC BY-SA 4.0**", "| wiki | simplewiki-paragraphs.txt.gz |", "rt-polarity: 7 /"} {
		if !strings.Contains(a, want) {
			t.Errorf("attribution lacks %q:\n%s", want, a)
		}
	}
}
