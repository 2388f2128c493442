package explain

import (
	"reflect"
	"strings"
	"testing"
)

// ParseHeads reads command-line input: it never panics, and what it accepts writes back
// (Head.String) to a list it reads the same.
func FuzzParseHeads(f *testing.F) {
	for _, s := range []string{"", "0.1", "0.1, 1.3", "11.11,0.0", "1.", ".1", "a.b", "-1.0", "1.2.3", "99999999999999999999.0", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hs, err := ParseHeads(s)
		if err != nil {
			return
		}
		var parts []string
		for _, h := range hs {
			if h.Layer < 0 || h.Head < 0 {
				t.Fatalf("ParseHeads(%q) accepted %v", s, h)
			}
			parts = append(parts, h.String())
		}
		again, err := ParseHeads(strings.Join(parts, ","))
		if err != nil || !reflect.DeepEqual(again, hs) {
			t.Fatalf("ParseHeads(%q) = %v, which reads back as %v, %v", s, hs, again, err)
		}
	})
}

func TestParseHeads(t *testing.T) {
	cases := []struct {
		in   string
		want []Head
		ok   bool
	}{
		{"", nil, true},
		{"0.1", []Head{{0, 1}}, true},
		{" 0.1 , 11.3", []Head{{0, 1}, {11, 3}}, true},
		{"1", nil, false},
		{"1.x", nil, false},
		{"-1.0", nil, false},
		{"0.1,", nil, false},
		{strings.Repeat("0.0,", MaxHeadList) + "0.0", nil, false},
	}
	for _, c := range cases {
		got, err := ParseHeads(c.in)
		if (err == nil) != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseHeads(%.20q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}
