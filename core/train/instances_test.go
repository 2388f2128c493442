package train

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
)

// handCorpus has nDocs documents of nSent sentences; every token names its place: token j of
// sentence s of document d is 1000 + 100·d + 10·s + j, so an instance can be traced back.
func handCorpus(nDocs, nSent int, lengths func(d, s int) int) []TokenDocument {
	docs := make([]TokenDocument, nDocs)
	for d := range docs {
		for s := range nSent {
			var sent []int
			for j := range lengths(d, s) {
				sent = append(sent, 1000+100*d+10*s+j)
			}
			docs[d] = append(docs[d], sent)
		}
	}
	return docs
}

func place(id int) (d, s int) { return (id - 1000) / 100, (id - 1000) % 100 / 10 }

// sentencesOf returns the (doc, sentence) pairs a segment covers, in order, and checks that each
// sentence is whole and contiguous.
func sentencesOf(t *testing.T, seg []int) [][2]int {
	t.Helper()
	var out [][2]int
	for i, id := range seg {
		d, s := place(id)
		if i == 0 || out[len(out)-1] != [2]int{d, s} {
			if (id-1000)%10 != 0 {
				t.Fatalf("segment %v starts sentence %d/%d in its middle", seg, d, s)
			}
			out = append(out, [2]int{d, s})
		}
	}
	return out
}

// split checks the layout [CLS] A [SEP] B [SEP] and the token types and returns A and B.
func split(t *testing.T, in Instance, maxLen int) (a, b []int) {
	t.Helper()
	ids := in.InputIDs
	if len(ids) > maxLen || len(in.TokenTypeIDs) != len(ids) {
		t.Fatalf("instance of %d ids, %d types, max %d", len(ids), len(in.TokenTypeIDs), maxLen)
	}
	if ids[0] != tCLS || ids[len(ids)-1] != tSEP {
		t.Fatalf("instance %v does not run [CLS] ... [SEP]", ids)
	}
	sep := slices.Index(ids, tSEP)
	a, b = ids[1:sep], ids[sep+1:len(ids)-1]
	if len(a) == 0 || len(b) == 0 || slices.Contains(b, tSEP) {
		t.Fatalf("instance %v: A %v, B %v", ids, a, b)
	}
	for i, ty := range in.TokenTypeIDs {
		if want := map[bool]int{true: 0, false: 1}[i <= sep]; ty != want {
			t.Fatalf("token type %d at %d of %v, want %d", ty, i, ids, want)
		}
	}
	return a, b
}

// TestNextSentenceInstances checks the NSP pairs of a hand-made corpus without truncation: an
// IsNext B continues A's document right after A, a NotNext B comes from another document, about
// half are NotNext, and every sentence of a document is used in some A or IsNext B (the
// reference puts back the sentences a random B leaves unused).
func TestNextSentenceInstances(t *testing.T) {
	docs := handCorpus(12, 9, func(d, s int) int { return 2 + (d+s)%4 })
	// Documents of at most 45 tokens: only a short target can make a pair need truncation.
	c := InstanceConfig{MaxSeqLength: 100, ShortSeqProb: 0.3, Task: NextSentence}
	rng := newRNG(1)
	var insts []Instance
	for range 20 { // as many rounds as a dupe factor of 20, for the statistics
		more, err := CreateInstances(docs, c, tCLS, tSEP, rng)
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, more...)
	}
	used := map[[2]int]bool{}
	random := 0
	for _, in := range insts {
		a, b := split(t, in, c.MaxSeqLength)
		if len(in.InputIDs) == c.MaxSeqLength {
			t.Fatalf("instance %v may be truncated: choose another seed", in.InputIDs)
		}
		sa, sb := sentencesOf(t, a), sentencesOf(t, b)
		for i := 1; i < len(sa); i++ {
			if sa[i][0] != sa[0][0] || sa[i][1] != sa[i-1][1]+1 {
				t.Fatalf("A %v is not consecutive sentences of one document", sa)
			}
		}
		for _, s := range sa {
			used[s] = true
		}
		switch in.NextSentenceLabel {
		case 0:
			if sb[0][0] != sa[0][0] || sb[0][1] != sa[len(sa)-1][1]+1 {
				t.Errorf("IsNext B %v does not follow A %v", sb, sa)
			}
			for _, s := range sb {
				used[s] = true
			}
		case 1:
			random++
			if sb[0][0] == sa[0][0] {
				t.Errorf("NotNext B %v from A's document %v", sb, sa)
			}
		default:
			t.Errorf("next-sentence label %d", in.NextSentenceLabel)
		}
	}
	for d := range docs {
		for s := range docs[d] {
			if !used[[2]int{d, s}] {
				t.Errorf("sentence %d of document %d never used", s, d)
			}
		}
	}
	frac := float64(random) / float64(len(insts))
	t.Logf("%d instances, %.2f NotNext", len(insts), frac)
	if frac < 0.4 || frac > 0.65 {
		t.Errorf("%.2f of the pairs are NotNext, want about half", frac)
	}
	again, _ := CreateInstances(docs, c, tCLS, tSEP, newRNG(1))
	if fmt.Sprint(again) != fmt.Sprint(insts[:len(again)]) {
		t.Error("the same seed gave different instances")
	}
}

// TestSentenceOrderInstances checks ALBERT's pairs: label 0 in order, label 1 the same two
// segments swapped (B before A in the document), or a random B for a one-sentence chunk.
func TestSentenceOrderInstances(t *testing.T) {
	docs := handCorpus(5, 8, func(d, s int) int { return 3 + (d*s)%3 })
	c := InstanceConfig{MaxSeqLength: 30, Task: SentenceOrder}
	insts, err := CreateInstances(docs, c, tCLS, tSEP, newRNG(2))
	if err != nil {
		t.Fatal(err)
	}
	swapped := 0
	for _, in := range insts {
		a, b := split(t, in, c.MaxSeqLength)
		sa, sb := sentencesOf(t, a), sentencesOf(t, b)
		switch {
		case in.NextSentenceLabel == 0:
			if sb[0][0] != sa[0][0] || sb[0][1] != sa[len(sa)-1][1]+1 {
				t.Errorf("in-order B %v does not follow A %v", sb, sa)
			}
		case sb[0][0] == sa[0][0]:
			swapped++
			if sa[0][1] != sb[len(sb)-1][1]+1 {
				t.Errorf("swapped pair: A %v should directly follow B %v", sa, sb)
			}
		case len(sa) != 1:
			t.Errorf("label 1 with B %v from another document than A %v, which is not one sentence", sb, sa)
		}
	}
	if swapped < len(insts)/4 {
		t.Errorf("%d of %d pairs swapped", swapped, len(insts))
	}
}

// TestTruncation checks truncate_seq_pair: total at most the budget, tokens removed from the
// longer segment, from its front or back at random.
func TestTruncation(t *testing.T) {
	rng := newRNG(3)
	var front, back int
	for range 200 {
		a := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		b := []int{11, 12, 13}
		truncateSeqPair(&a, &b, 9, rng)
		if len(a)+len(b) != 9 || len(b) != 3 {
			t.Fatalf("truncated to A %v, B %v; want 6 + 3", a, b)
		}
		if a[0] != 1 {
			front++
		}
		if a[len(a)-1] != 10 {
			back++
		}
		x, y := []int{1, 2, 3, 4}, []int{5, 6, 7, 8}
		truncateSeqPair(&x, &y, 5, rng)
		if len(x) != 3 || len(y) != 2 {
			t.Fatalf("equal lengths 4+4 to 5 gave %v %v; want 3 + 2 (B first on a tie, then the longer)", x, y)
		}
	}
	if front < 50 || back < 50 {
		t.Errorf("tokens dropped from the front %d times, from the back %d times (of 200)", front, back)
	}
	// Long sentences: every instance within max_seq_length.
	docs := handCorpus(3, 4, func(d, s int) int { return 9 })
	insts, err := CreateInstances(docs, InstanceConfig{MaxSeqLength: 12, Task: NextSentence}, tCLS, tSEP, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range insts {
		split(t, in, 12)
	}
}

// TestFullSentences checks the no-NSP input: single segments within the length, label ignored,
// token types 0, and the corpus in order when the [CLS], [SEP] and document [SEP]s are removed.
func TestFullSentences(t *testing.T) {
	docs := handCorpus(4, 6, func(d, s int) int { return 1 + (3*d+s)%7 })
	docs[2][3] = append(docs[2][3], make([]int, 30)...) // a sentence longer than a segment
	for j := range docs[2][3] {
		docs[2][3][j] = 1000 + 100*2 + 10*3 + j%10
	}
	c := InstanceConfig{MaxSeqLength: 20, ShortSeqProb: 0.2, Task: NoSentenceTask}
	insts, err := CreateInstances(docs, c, tCLS, tSEP, newRNG(4))
	if err != nil {
		t.Fatal(err)
	}
	var got, want []int
	for _, d := range docs {
		for _, s := range d {
			want = append(want, s...)
		}
	}
	docEnds := 0
	for _, in := range insts {
		ids := in.InputIDs
		if len(ids) > c.MaxSeqLength || ids[0] != tCLS || ids[len(ids)-1] != tSEP || len(ids) < 3 {
			t.Fatalf("instance %v", ids)
		}
		if in.NextSentenceLabel != bert.IgnoreIndex || slices.ContainsFunc(in.TokenTypeIDs, func(x int) bool { return x != 0 }) {
			t.Fatalf("instance %+v: want label IgnoreIndex and token types 0", in)
		}
		for _, id := range ids[1 : len(ids)-1] {
			if id == tSEP {
				docEnds++
				continue
			}
			got = append(got, id)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the instances do not hold the corpus in order:\n got %v\nwant %v", got, want)
	}
	if docEnds == 0 {
		t.Error("no document ended inside a segment")
	}
}

func TestCreateInstancesEdgeCases(t *testing.T) {
	if _, err := CreateInstances(nil, InstanceConfig{MaxSeqLength: 4}, tCLS, tSEP, newRNG(1)); err == nil {
		t.Error("max length 4 accepted for pairs")
	}
	// One document of one sentence: no pair can be made, and nothing panics.
	one := []TokenDocument{{{1000, 1001}}}
	insts, err := CreateInstances(one, DefaultInstances(16), tCLS, tSEP, newRNG(1))
	if err != nil || len(insts) != 0 {
		t.Errorf("got %v, %v; want no instance", insts, err)
	}
	// One document of several sentences: only IsNext pairs.
	insts, _ = CreateInstances(handCorpus(1, 6, func(int, int) int { return 3 }), InstanceConfig{MaxSeqLength: 12, Task: NextSentence}, tCLS, tSEP, newRNG(1))
	for _, in := range insts {
		if in.NextSentenceLabel != 0 {
			t.Errorf("a one-document corpus gave a NotNext pair %v", in.InputIDs)
		}
	}
}

func TestReadDocumentsFile(t *testing.T) {
	tok := testTokenizer(t, []string{"the", "cat", "sat", "dog", "ran"})
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("x", dataset.MaxLineBytes+1)
	tests := []struct {
		name, text string
		want       []TokenDocument
		err        string // a substring of the error, "" for none
	}{
		{name: "two documents", text: "the cat sat\n\n\nthe dog\nran\n",
			want: []TokenDocument{{{5, 6, 7}}, {{5, 8}, {9}}}},
		{name: "empty", text: "\n \n", err: "empty: no text"},
		{name: "too long", text: "the cat\n" + long + "\n", err: "too long:2: longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadDocumentsFile(write(tc.name, tc.text), tok)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.want != nil && !reflect.DeepEqual(got, tc.want):
				t.Errorf("documents %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := ReadDocumentsFile(filepath.Join(dir, "missing.txt"), tok); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("a missing file: %v", err)
	}

	// A .gz file reads as the text inside it; a .gz that is not gzip is an error naming it.
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte("the cat sat\n\n\nthe dog\nran\n"))
	zw.Close()
	got, err := ReadDocumentsFile(write("two.txt.gz", zb.String()), tok)
	if want := []TokenDocument{{{5, 6, 7}}, {{5, 8}, {9}}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("gzip: documents %v, %v; want %v", got, err, want)
	}
	if _, err := ReadDocumentsFile(write("plain.txt.gz", "the cat sat\n"), tok); err == nil || !strings.Contains(err.Error(), "plain.txt.gz") {
		t.Errorf("a .gz that is not gzip: %v", err)
	}
	trunc := zb.Bytes()[:zb.Len()-6]
	if _, err := ReadDocumentsFile(write("cut.txt.gz", string(trunc)), tok); err == nil || !strings.Contains(err.Error(), "cut.txt.gz") {
		t.Errorf("a truncated .gz: %v", err)
	}
}

// Several files are read one after the other, a file given twice counts twice, and an error
// names the file.
func TestReadDocumentsFiles(t *testing.T) {
	tok := testTokenizer(t, []string{"the", "cat", "sat", "dog", "ran"})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte("the cat\n"), 0o644)
	os.WriteFile(b, []byte("dog ran\n\nsat\n"), 0o644)
	got, err := ReadDocumentsFiles([]string{a, b, a}, tok)
	want := []TokenDocument{{{5, 6}}, {{8, 9}}, {{7}}, {{5, 6}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if _, err := ReadDocumentsFiles([]string{a, filepath.Join(dir, "missing.txt")}, tok); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("a missing file: %v", err)
	}
}
