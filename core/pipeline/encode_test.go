package pipeline

import (
	"strings"
	"testing"
)

// TestFullLength: the token count without truncation, for texts under and over a limit, single
// and paired: the pieces of each text plus [CLS] and one [SEP] per text; the encoding cut at 32
// tokens is truncated exactly when that count is over 32.
func TestFullLength(t *testing.T) {
	f := loadFixture(t)
	long := strings.Repeat("the cat sat on the mat . ", 20)
	b := "a dog barked ."
	pieces := func(s string) int { return len(f.Tokenizer.Tokenize(s)) }
	for _, tc := range []struct {
		name string
		text string
		pair *string
		want int
	}{
		{"short", "the cat sat .", nil, pieces("the cat sat .") + 2},
		{"long", long, nil, pieces(long) + 2},
		{"pair", "the cat sat .", &b, pieces("the cat sat .") + pieces(b) + 3},
		{"long pair", long, &b, pieces(long) + pieces(b) + 3},
	} {
		got, err := FullLength(f.Tokenizer, tc.text, tc.pair)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: FullLength %d, want %d", tc.name, got, tc.want)
		}
		cut, err := Encode(f.Tokenizer, tc.text, tc.pair, 32)
		if err != nil {
			t.Fatal(err)
		}
		if cut.Truncated != (tc.want > 32) || cut.Len() != min(tc.want, 32) {
			t.Errorf("%s: encoding at 32 has %d tokens, truncated %v; full %d", tc.name, cut.Len(), cut.Truncated, tc.want)
		}
	}
	if n := pieces(long); n < 100 {
		t.Fatalf("the long text should be over the limit: %d pieces", n)
	}
}
