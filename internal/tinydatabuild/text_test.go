package tinydatabuild

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitSentences(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"One sentence", []string{"One sentence"}},
		{"It rained. We stayed in.", []string{"It rained.", "We stayed in."}},
		{"Mr. Knightley and Mrs. Weston met Dr. Perry in St. James's.", []string{"Mr. Knightley and Mrs. Weston met Dr. Perry in St. James's."}},
		{`"Oh! yes," said she. "Quite."`, []string{`"Oh! yes," said she.`, `"Quite."`}},
		{`"Is it? I think so." He left.`, []string{`"Is it?`, `I think so."`, `He left.`}},
		{"Signed J. Smith. Then more.", []string{"Signed J. Smith.", "Then more."}},
		{"as Miss Lucy--Mrs. Ferrars said. It--Mr. E. Knightley--was.", []string{"as Miss Lucy--Mrs. Ferrars said.", "It--Mr. E. Knightley--was."}},
		{`"No. I am sure." See No. 97, Vol. II.`, []string{`"No.`, `I am sure."`, "See No. 97, Vol. II."}},
		{"with H.M.S. Antwerp at the bottom.", []string{"with H.M.S. Antwerp at the bottom."}},
		{"It was 5 p.m. Then dinner.", []string{"It was 5 p.m. Then dinner."}},
		{"She left (at last.) Good.", []string{"She left (at last.)", "Good."}},
		{"a reply. but lowercase goes on", []string{"a reply. but lowercase goes on"}},
		{"Wait!--no. Yes!", []string{"Wait!--no.", "Yes!"}},
		{"Élan. Été follows.", []string{"Élan.", "Été follows."}},
		{"  spaced   out.  Words  ", []string{"spaced out.", "Words"}},
	} {
		if got := SplitSentences(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitSentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAustenChapters(t *testing.T) {
	lines := strings.Split(`EMMA

By Jane Austen

VOLUME I

CHAPTER I


Emma Woodhouse, handsome, clever, and rich, with a comfortable
home. Mr. Woodhouse was _very_ fond of her.

She was the youngest.

VOLUME II

CHAPTER II

"Poor Miss Taylor!" said he.
   My first doth affliction denote,
     Which my second is destin'd to feel

THE END

A note that is not Austen's.`, "\n")
	got, err := AustenChapters("emma", lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []Document{
		{"austen/emma/001", []string{
			"Emma Woodhouse, handsome, clever, and rich, with a comfortable home.",
			"Mr. Woodhouse was very fond of her.",
			"She was the youngest.",
		}},
		{"austen/emma/002", []string{
			`"Poor Miss Taylor!" said he.`,
			"My first doth affliction denote, Which my second is destin'd to feel",
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if _, err := AustenChapters("none", []string{"no chapters here"}); err == nil {
		t.Error("a text without chapters: no error")
	}
	if _, err := AustenChapters("empty", []string{"Chapter 1", "", "Chapter 2", "text"}); err == nil {
		t.Error("an empty chapter: no error")
	}
}

const wordnetSample = `  1 This software and database is being provided to you, the LICENSEE, by  
00001740 00 a 01 able 0 005 = 05200169 n 0000 = 05616246 n 0000 + 05616246 n 0101 + 05200169 n 0101 ! 00002098 a 0101 | (usually followed by ` + "`to'" + `) having the necessary means or skill or know-how or authority to do something; "able to swim"; "she was able to program her computer"; "we were at last able to buy a car"; "able to get a grant for the project"  
00002098 00 a 01 unable 0 002 = 05200169 n 0000 ! 00001740 a 0101 | (usually followed by ` + "`to'" + `) not having the necessary means or skill or know-how; "unable to get to town without a car"; "unable to obtain funds"  
00003356 00 s 04 implicit(a) 0 tacit 0 ... 0 x 0 000 | being without doubt or reserve; "implicit trust"  
00004000 00 n 02 ice_cream 0 icecream 0 000 | frozen dessert  
00005000 00 v 01 say 0 000 | express; "the words say it all" - Shakespeare; "say it; all of it"; "unterminated  
`

func TestWordNetSynsets(t *testing.T) {
	docs, st, err := WordNetSynsets("adj", strings.NewReader(wordnetSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Document{
		{"wordnet/adj/00001740", []string{
			"able: (usually followed by `to') having the necessary means or skill or know-how or authority to do something",
			"able to swim", "she was able to program her computer", "we were at last able to buy a car", "able to get a grant for the project"}},
		{"wordnet/adj/00002098", []string{
			"unable: (usually followed by `to') not having the necessary means or skill or know-how",
			"unable to get to town without a car", "unable to obtain funds"}},
		{"wordnet/adj/00003356", []string{"implicit: being without doubt or reserve", "implicit trust"}},
		{"wordnet/adj/00005000", []string{"say: express", "the words say it all", "say it; all of it", "unterminated"}},
	}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("got  %q\nwant %q", docs, want)
	}
	if st != (WordNetStats{Synsets: 5, WithExamples: 4, Examples: 10}) {
		t.Errorf("stats %+v", st)
	}
	for _, bad := range []string{
		"00001740 00 a 01 able 0 000 no gloss\n",
		"00001740 00 a zz able 0 000 | x; \"y\"\n",
		"00001740 00 | x; \"y\"\n",
		"00001740 00 a 01 \xff 0 000 | x; \"y\"\n",
	} {
		if _, _, err := WordNetSynsets("adj", strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestPangLeeSentences(t *testing.T) {
	in := "\uFEFF\"1\",\"a fine , \"\"funny\"\" film . \n\"\n" +
		"\"-1\",\"dull\tand  long\"\n" +
		"\"1\",\"a fine , \"\"funny\"\" film .\"\n" + // duplicate, same label
		"\"1\",\"both ways\"\n" +
		"\"-1\",\"both ways\"\n"
	got, st, err := PangLeeSentences(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []LabelledText{{"positive", `a fine , "funny" film .`}, {"negative", "dull and long"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if st != (SentimentStats{Rows: 5, Duplicates: 2, Conflicting: 1}) {
		t.Errorf("stats %+v", st)
	}
	for _, bad := range []string{"\"0\",\"x\"\n", "\"1\",\" \"\n", "\"1\"\n", "\"1\",\"x\n"} {
		if _, _, err := PangLeeSentences(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestOANCSentences(t *testing.T) {
	in := "Has/VBZ the/DT Internet/NN abandoned/VBD it/PRP ?/.\n" +
		"Ms/NNP ./.\n" +
		"1/2/CD of/IN them/PRP\n" +
		"odd/VBG|NN tag/NN here/RB\n" +
		"no_tag the/DT end/NN\n" +
		"Has/VBZ the/DT Internet/NN abandoned/VBD it/PRP ?/.\n" +
		strings.Repeat("a/DT ", MaxPOSTokens+1) + "\n"
	got, st, err := OANCSentences(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []TaggedSentence{
		{[]string{"Has", "the", "Internet", "abandoned", "it", "?"}, []string{"VBZ", "DT", "NN", "VBD", "PRP", "."}},
		{[]string{"1/2", "of", "them"}, []string{"CD", "IN", "PRP"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if st != (POSStats{Lines: 7, BadTag: 2, TooShort: 1, TooLong: 1, Duplicates: 1, Kept: 2}) {
		t.Errorf("stats %+v", st)
	}
}

// The rank is part of the published recipe (SOURCES.md): it must not change by accident.
func TestRank(t *testing.T) {
	// SHA-256("bertlab-tinydata-1" NUL "set" NUL "key")[:8], computed independently (Python hashlib).
	if got, want := rank("set", "key"), uint64(161636326209807504); got != want {
		t.Errorf("rank = %d, want %d", got, want)
	}
	keys := []string{"c", "a", "b"} // ranks in set "s": a 1768448118896472025, b 6726185204214276626, c 12497429745299051864
	if got := shuffled("s", 3, func(i int) string { return keys[i] }); !reflect.DeepEqual(got, []int{1, 2, 0}) {
		t.Errorf("shuffled = %v", got)
	}
	if percentCeil(269, 2) != 6 || percentCeil(100, 2) != 2 || percentCeil(0, 2) != 0 {
		t.Error("percentCeil")
	}
}

func TestReadDEP5(t *testing.T) {
	d, err := readDEP5("testdata/copyright")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.field("upstream-name"); got != "Example" {
		t.Errorf("upstream-name %q", got)
	}
	c, l, err := d.files("*")
	if err != nil {
		t.Fatal(err)
	}
	if c != "2020 Someone" || l != "MIT\nPermission is granted.\n\nNo warranty." {
		t.Errorf("copyright %q licence %q", c, l)
	}
	if _, _, err := d.files("nothing/*"); err == nil {
		t.Error("missing paragraph: no error")
	}
	if got := quote("a\n\nb\n"); got != "> a\n>\n> b" {
		t.Errorf("quote %q", got)
	}
}
