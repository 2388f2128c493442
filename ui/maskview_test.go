package ui

import "testing"

func TestCodePoints(t *testing.T) {
	for _, tc := range []struct{ token, want string }{
		{"cat", ""},
		{"##ing", ""},
		{"[MASK]", ""},
		{"\u0f0b", " (U+0F0B)"},
		{"é", " (U+00E9)"},
		{"##ß", " (U+00DF)"},
		{"a\u4e2db😀", " (U+4E2D U+1F600)"},
	} {
		if got := codePoints(tc.token); got != tc.want {
			t.Errorf("codePoints(%q) = %q, want %q", tc.token, got, tc.want)
		}
	}
}
