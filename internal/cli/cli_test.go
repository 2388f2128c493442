package cli

import (
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		pos     []string
		model   string
		list    []string
		wantErr error
	}{
		{args: []string{"text", "--model", "m"}, pos: []string{"text"}, model: "m"},
		{args: []string{"--model", "m", "a", "b"}, pos: []string{"a", "b"}, model: "m"},
		{args: []string{"a", "--", "--model", "x"}, pos: []string{"a", "--model", "x"}},
		{args: []string{"--data", "1", "x", "--data", "2"}, pos: []string{"x"}, list: []string{"1", "2"}},
		{args: []string{"--nope"}, wantErr: ErrUsage},
		{args: []string{"-h"}, wantErr: flag.ErrHelp},
	}
	for _, tc := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		model := fs.String("model", "", "")
		var list StringList
		fs.Var(&list, "data", "")
		pos, err := ParseFlags(fs, tc.args, io.Discard)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%q: error %v, want %v", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(pos, tc.pos) || *model != tc.model || !slices.Equal(list, tc.list) {
			t.Errorf("%q: pos %q model %q list %q err %v; want %q %q %q", tc.args, pos, *model, list, err, tc.pos, tc.model, tc.list)
		}
		if got := FlagSet(fs, "model"); got != (tc.model != "") {
			t.Errorf("%q: FlagSet(model) = %v", tc.args, got)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\nb", "a b"},
		{"0123456789012345678901234567890123456789012345678901234567890123", "012345678901234567890123456789012345678901234567890123456..."},
	} {
		if got := OneLine(tc.in); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if err := UsageErr("bad %d", 3); !errors.Is(err, ErrUsage) || err.Error() != "usage: bad 3" {
		t.Errorf("UsageErr = %v", err)
	}
}
