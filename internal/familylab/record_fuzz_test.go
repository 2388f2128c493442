package familylab

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// FuzzParseRecord: any bytes give a record of the settings asked for, whose results are distinct
// variants of them, or an error; never a panic.
func FuzzParseRecord(f *testing.F) {
	c := Quick("v", "t", "h")
	good, err := json.Marshal(Record{Config: c, Results: []Result{{Family: "bert", Steps: 3}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"config":{}}`))
	f.Add([]byte(`{"results":[{"family":"gpt"}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parseRecord(data, c)
		if err != nil {
			return
		}
		was, _ := json.Marshal(rec.Config)
		now, _ := json.Marshal(c)
		if string(was) != string(now) {
			t.Fatalf("record of settings %s accepted for %s", was, now)
		}
		seen := map[string]bool{}
		for _, r := range rec.Results {
			if !slices.Contains(c.Variants, r.Family) || seen[string(r.Family)] {
				t.Fatalf("result of variant %q accepted", r.Family)
			}
			seen[string(r.Family)] = true
		}
	})
}

// TestParseRecord: a record of other settings, of an unknown variant or with a variant twice is
// refused.
func TestParseRecord(t *testing.T) {
	c := Quick("v", "t", "h")
	mk := func(c Config, fams ...string) []byte {
		rec := Record{Config: c}
		for _, f := range fams {
			rec.Results = append(rec.Results, Result{Family: familyName(f)})
		}
		b, _ := json.Marshal(rec)
		return b
	}
	other := c
	other.Seed++
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"good", mk(c, "bert", "albert"), true},
		{"other settings", mk(other, "bert"), false},
		{"unknown variant", mk(c, "gpt"), false},
		{"twice", mk(c, "bert", "bert"), false},
		{"not json", []byte("{"), false},
	} {
		if _, err := parseRecord(tc.data, c); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func familyName(s string) bert.Family { return bert.Family(s) }
