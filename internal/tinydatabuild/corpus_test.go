package tinydatabuild

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/dataset"
)

func TestDetokenizeBrown(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"", ""},
		{"The jury said so .", "The jury said so."},
		{"`` Only a handful '' , the jury said , `` considering the interest '' .", `"Only a handful", the jury said, "considering the interest".`},
		{"He left ( at last ) ; then : nothing ! Why ?", "He left (at last); then: nothing! Why?"},
		{"It was -- he said -- late .", "It was -- he said -- late."},
		{"the ` word ' here", "the 'word' here"},
		{"see [ 1 ] and AT & T", "see [1] and AT & T"},
		{"( `` quoted '' )", `("quoted")`},
	} {
		var words []string
		if tc.in != "" {
			words = strings.Split(tc.in, " ")
		}
		if got := DetokenizeBrown(words); got != tc.want {
			t.Errorf("DetokenizeBrown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBrownSample(t *testing.T) {
	in := "\n\n\tThe/at Fulton/np-tl County/nn-tl said/vbd ``/`` no/at evidence/nn ''/'' ./.\n\n\n" +
		"\tIt/pps had/hvd 1/2/cd cup/nn ./.\n\n"
	got, err := BrownSample("ca01", strings.NewReader(in))
	want := []string{`The Fulton County said "no evidence".`, "It had 1/2 cup."}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("BrownSample = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"The/at jury nn\n", "/x\n", "ok/at \xff/nn\n"} {
		if _, err := BrownSample("cx99", strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "cx99 line 1") {
			t.Errorf("BrownSample(%q): error %v, want one naming cx99 line 1", bad, err)
		}
	}
}

func TestHTMLSections(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     [][]string
	}{
		{"empty", "", nil},
		{"sphinx", `<html><head><title>T</title><style>p{}</style></head><body>
<nav><p>Menu item.</p></nav>
<h1>os — Miscellaneous<a class="headerlink">¶</a></h1>
<p>This module provides a <em>portable</em> way
   of using <code class="xref">operating system</code> dependent functionality.</p>
<div class="highlight"><pre><p>not prose</p> x = 1</pre></div>
<p class="admonition-title">Note</p>
<p>Fish &amp; chips &lt;3 &#8212; done.</p>
<h2>Files</h2><p>Second section.</p><!-- <p>a comment</p> -->
</body></html>`, [][]string{
			{"This module provides a portable way of using operating system dependent functionality.", "Fish & chips <3 — done."},
			{"Second section."},
		}},
		{"docbook para with nested list", `<div class="para">
		APT is a tool. It reads: <div class="itemizedlist"><ul><li><p>an item.</p></li></ul></div> more
	</div><div class="para">Next para.</div><div class="sidebar"><p class="title"><strong>TIP</strong></p><div class="para">Inside a sidebar.</div></div>`,
			// The list stops the paragraph; its item, a <p> inside the DocBook para, is left out too.
			[][]string{{"APT is a tool. It reads:", "Next para.", "Inside a sidebar."}}},
		{"paragraph cut by a block", `<p>Before the table<table><tr><td><p>cell</p></td></tr></table> after</p><p>Then.</p>`,
			[][]string{{"Before the table", "Then."}}},
		{"unclosed p", `<p>One.<p>Two.`, [][]string{{"One.", "Two."}}},
		{"br and attributes", `<P CLASS="x">a<br/>b</P><p	class='title'>skip</p>`, [][]string{{"a b"}}},
		{"malformed", `<p>text <b`, [][]string{{"text"}}},
		{"unterminated comment", `<p>kept</p><!-- <p>lost`, [][]string{{"kept"}}},
	} {
		if got := HTMLSections(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: HTMLSections = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestProseParagraph(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"This module provides a portable way of using operating system dependent functionality.", true},
		{"Is it? Yes, it is (mostly).", true},
		{`He said "go home."`, true},
		{"Too short.", false},
		{"For example, run the following:", false},
		{"An unfinished paragraph without an end", false},
		{"Call os.path.join() with the parts of the path to join.", true},                 // 1 of 11 code-like
		{"Call os.path.join() on the parts and then os.walk() on the result.", false},     // 2 of 12
		{"The value of sys.maxsize is the largest index of a list here, as it is.", true}, // 1 of 15
		{"Use x = foo_bar(a, b) then return {a: b} to the caller now.", false},
		{"This is, e.g., the U.S. way of doing it, i.e. the usual one.", true},
		{"Это текст на русском языке, а не английском.", false},
		{"Café au lait is a drink made with coffee and hot milk.", true},
	} {
		if got := ProseParagraph(tc.in); got != tc.want {
			t.Errorf("ProseParagraph(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSOTUAddress(t *testing.T) {
	in := "Thank you. (Applause.) Madam Speaker—(applause)—no President has said it. (Laughter.) We  will. Mr. Speaker, thank you."
	want := []string{"Thank you.", "Madam Speaker no President has said it.", "We will.", "Mr. Speaker, thank you."}
	if got := SOTUAddress(in); !reflect.DeepEqual(got, want) {
		t.Errorf("SOTUAddress = %q, want %q", got, want)
	}
}

func TestCleanDocuments(t *testing.T) {
	in := []Document{
		{Key: "a", Sentences: []string{"4 1\x02 per cent", "\x01\u200b", "tab\there\u00a0and\ufeffbom\u0085."}},
		{Key: "b", Sentences: []string{" \x7f "}},
	}
	want := []Document{{Key: "a", Sentences: []string{"4 1 per cent", "tab here and bom ."}}}
	if got := cleanDocuments(in); !reflect.DeepEqual(got, want) {
		t.Errorf("cleanDocuments = %q, want %q", got, want)
	}
}

func TestSplitPermille(t *testing.T) {
	var docs []Document
	for i := 0; i < 1234; i++ {
		docs = append(docs, Document{Key: fmt.Sprintf("d/%04d", i)})
	}
	train, held := splitPermille("test", docs, 10)
	if len(held) != 13 || len(train)+len(held) != len(docs) {
		t.Fatalf("split %d + %d of %d, want 13 held out", len(train), len(held), len(docs))
	}
	seen := map[string]bool{}
	for _, d := range append(append([]Document{}, train...), held...) {
		if seen[d.Key] {
			t.Fatalf("%s in both splits", d.Key)
		}
		seen[d.Key] = true
	}
	train2, held2 := splitPermille("test", docs, 10)
	if !reflect.DeepEqual(held, held2) || !reflect.DeepEqual(train, train2) {
		t.Error("the split is not deterministic")
	}
	if _, other := splitPermille("other", docs, 10); reflect.DeepEqual(held, other) {
		t.Error("another set name gave the same held-out documents")
	}
}

// The committed corpus (tinydata/corpus/) against SOURCES.md's corpus manifest, and the promises
// SOURCES.md makes about it.
func TestCommittedCorpus(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("60 MB of text: checked natively (the wasm test run would spend minutes here)")
	}
	const tinydata = "../../tinydata"
	src, err := os.ReadFile(filepath.Join(tinydata, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile(`^\| (corpus/[a-z.-]+) \| (\d+) \| (\d+) \| (\d+) documents, (\d+) sentences \| ([0-9a-f]{64}) \|$`)
	rows := map[string][]string{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		switch l := sc.Text(); {
		case l == "<!-- corpus manifest begin -->":
			in = true
		case l == "<!-- corpus manifest end -->":
			in = false
		case in && strings.HasPrefix(l, "| corpus/"):
			m := rowRE.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("SOURCES.md: corpus row %q does not parse", l)
			}
			rows[m[1]] = m[2:]
		}
	}
	if len(rows) != 3 {
		t.Fatalf("SOURCES.md lists %d corpus files, want 3", len(rows))
	}
	texts := map[string][]byte{}
	for _, name := range []string{CorpusProse, CorpusDocs, CorpusHeldout} {
		row, ok := rows[name]
		if !ok {
			t.Fatalf("SOURCES.md does not list %s", name)
		}
		data, err := os.ReadFile(filepath.Join(tinydata, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		text := data
		if strings.HasSuffix(name, ".gz") {
			if text, err = gunzipBytes(data); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// The build's compression is deterministic: compressing the text again gives the
			// committed bytes.
			if again, err := gzipBytes(text); err != nil || !bytes.Equal(again, data) {
				t.Errorf("%s: compressing its text again gives other bytes (%v)", name, err)
			}
		}
		if _, err := dataset.ParsePretrain(bytes.NewReader(text)); err != nil {
			t.Errorf("%s: the trainer's reader rejects it: %v", name, err)
		}
		docs := splitDocs(string(text))
		nSent := 0
		for _, d := range docs {
			nSent += len(d)
		}
		got := []string{strconv.Itoa(len(data)), strconv.Itoa(bytes.Count(text, []byte("\n"))),
			strconv.Itoa(len(docs)), strconv.Itoa(nSent), hex.EncodeToString(sum[:])}
		if !reflect.DeepEqual(got, row) {
			t.Errorf("%s: file has bytes, lines, documents, sentences, sha256 %q; SOURCES.md says %q", name, got, row)
		}
		texts[name] = text
	}

	// No stray files in corpus/.
	entries, err := os.ReadDir(filepath.Join(tinydata, CorpusDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := rows[CorpusDir+"/"+e.Name()]; !ok {
			t.Errorf("%s/%s is not in SOURCES.md", CorpusDir, e.Name())
		}
	}

	// No held-out document, old or new, is in the training text.
	train := map[string]bool{}
	for _, d := range splitDocs(string(texts[CorpusProse]) + "\n\n" + string(texts[CorpusDocs])) {
		train[strings.Join(d, "\n")] = true
	}
	old, err := os.ReadFile(filepath.Join(tinydata, "pretrain/heldout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{CorpusHeldout: string(texts[CorpusHeldout]), "pretrain/heldout.txt": string(old)} {
		for _, d := range splitDocs(text) {
			if train[strings.Join(d, "\n")] {
				t.Errorf("a document of %s is in the training text: %q", name, d[0])
			}
		}
	}
}

// TestComparisonPointUnchanged pins pretrain/heldout.txt: it is the held-out text that every
// pre-training run is compared on (issue 12), so a rebuild must not change it.
func TestComparisonPointUnchanged(t *testing.T) {
	data, err := os.ReadFile("../../tinydata/pretrain/heldout.txt")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != "f530e189a2c1ff8261542d67f62136c2ee2d06de18bd726247f1706d5147e653" {
		t.Errorf("pretrain/heldout.txt changed (sha256 %s): it is the comparison point across runs", got)
	}
}

// TestCorpusNotEmbedded: package tinydata's go:embed patterns leave corpus/ out, so no binary
// carries the large text.
func TestCorpusNotEmbedded(t *testing.T) {
	files, err := filepath.Glob("../../tinydata/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in tinydata: %v", err)
	}
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, "//go:embed ") {
				continue
			}
			found++
			for _, p := range strings.Fields(strings.TrimPrefix(l, "//go:embed ")) {
				if ok, _ := filepath.Match(p, CorpusDir); ok || p == "." || p == "*" || strings.HasPrefix(p, CorpusDir) {
					t.Errorf("%s: //go:embed pattern %q takes in %s/", filepath.Base(f), p, CorpusDir)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no //go:embed line found in tinydata: the test reads the wrong folder")
	}
}

// splitDocs splits pre-training text into documents of sentences.
func splitDocs(text string) [][]string {
	var docs [][]string
	for _, d := range strings.Split(strings.TrimSuffix(text, "\n"), "\n\n") {
		if d != "" {
			docs = append(docs, strings.Split(d, "\n"))
		}
	}
	return docs
}

// FuzzHTMLSections: whatever the page, HTMLSections returns paragraphs of single-spaced,
// trimmed, non-empty text, and never panics.
func FuzzHTMLSections(f *testing.F) {
	f.Add(`<h1>T</h1><p>Some <b>bold</b> text.</p><div class="para">x<div>y</div></div>`)
	f.Fuzz(func(t *testing.T, page string) {
		for _, sec := range HTMLSections(page) {
			if len(sec) == 0 {
				t.Fatal("an empty section")
			}
			for _, p := range sec {
				if p == "" || strings.Join(strings.Fields(p), " ") != p {
					t.Fatalf("paragraph %q is not trimmed single-spaced text", p)
				}
			}
		}
	})
}

// FuzzBrownSample: whatever the input, BrownSample returns sentences or an error, never panics,
// and a sentence has no tag left (the input's tokens are cut at their last "/").
func FuzzBrownSample(f *testing.F) {
	f.Add("\tThe/at jury/nn said/vbd ./.\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		sents, err := BrownSample("fuzz", strings.NewReader(in))
		if err != nil {
			return
		}
		for _, s := range sents {
			if s == "" {
				t.Fatal("an empty sentence")
			}
		}
	})
}

// FuzzSOTUAddress: whatever the text, SOTUAddress returns trimmed, single-spaced, non-empty
// sentences without an audience note left, and never panics.
func FuzzSOTUAddress(f *testing.F) {
	f.Add("Thank you. (Applause.) Madam Speaker—(applause)—no President has said it.")
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range SOTUAddress(text) {
			if s == "" || strings.Join(strings.Fields(s), " ") != s {
				t.Fatalf("sentence %q is not trimmed single-spaced text", s)
			}
			if audienceRE.MatchString(s) {
				t.Fatalf("sentence %q keeps an audience note", s)
			}
		}
	})
}
