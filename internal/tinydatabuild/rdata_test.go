package tinydatabuild

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"reflect"
	"testing"
)

// The fixtures in testdata/ were written by R 4.2.2 (Debian's r-base-core, unpacked):
//
//	x <- c("plain", NA, "caf\u00e9 \u00a320", "", "tab\there")
//	lat <- "caf\xe9"; Encoding(lat) <- "latin1"; x <- c(x, lat)
//	v <- list(lines = x, ints = c(1L, NA, -3L), seq = 1:5, real = c(1.5, -2),
//	          flag = c(TRUE, FALSE, NA), raw = as.raw(c(1, 255)))
//	attr(v, "note") <- "attribute"
//	saveRDS(v, "sample-v2.rds", version = 2, compress = FALSE)
//	saveRDS(v, "sample-v3.rds", version = 3, compress = TRUE)
//	e <- new.env(); assign("alpha", c("first line", "second line"), envir = e)
//	assign("beta", c(x, "last"), envir = e)
//	tools:::makeLazyLoadDB(e, "Rdata", compress = TRUE)
//	e2 <- new.env(); assign("gamma", c("bzip2", "stored"), envir = e2)
//	tools:::makeLazyLoadDB(e2, "Rdata-bz2", compress = 2)

var wantLines = []RString{{S: "plain"}, {NA: true}, {S: "café £20"}, {S: ""}, {S: "tab\there"}, {S: "café"}}

func strs(v *RValue) []RString {
	if v == nil {
		return nil
	}
	return v.Strings
}

func TestReadRDS(t *testing.T) {
	const naInt = -1 << 31
	for _, name := range []string{"testdata/sample-v2.rds", "testdata/sample-v3.rds"} {
		t.Run(name, func(t *testing.T) {
			v, err := readRDS(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Names(); !reflect.DeepEqual(got, []string{"lines", "ints", "seq", "real", "flag", "raw"}) {
				t.Fatalf("names %q", got)
			}
			if got := strs(v.Field("lines")); !reflect.DeepEqual(got, wantLines) {
				t.Errorf("lines %+v", got)
			}
			if got := v.Field("ints").Ints; !reflect.DeepEqual(got, []int32{1, naInt, -3}) {
				t.Errorf("ints %v", got)
			}
			// 1:5 is an ALTREP compact sequence in version 3, a plain vector in version 2.
			if got := v.Field("seq").Ints; !reflect.DeepEqual(got, []int32{1, 2, 3, 4, 5}) {
				t.Errorf("seq %v", got)
			}
			if got := v.Field("real").Reals; !reflect.DeepEqual(got, []float64{1.5, -2}) {
				t.Errorf("real %v", got)
			}
			if got := v.Field("flag").Ints; !reflect.DeepEqual(got, []int32{1, 0, naInt}) {
				t.Errorf("flag %v", got)
			}
			if got := v.Field("raw").Raw; !bytes.Equal(got, []byte{1, 255}) {
				t.Errorf("raw %v", got)
			}
			if got := strs(v.Attr("note")); !reflect.DeepEqual(got, []RString{{S: "attribute"}}) {
				t.Errorf("note %+v", got)
			}
		})
	}
}

func TestReadLazyLoadDB(t *testing.T) {
	vars, err := ReadLazyLoadDB("testdata/Rdata.rdx", "testdata/Rdata.rdb")
	if err != nil {
		t.Fatal(err)
	}
	if got := strs(vars["alpha"]); !reflect.DeepEqual(got, []RString{{S: "first line"}, {S: "second line"}}) {
		t.Errorf("alpha %+v", got)
	}
	if got := strs(vars["beta"]); !reflect.DeepEqual(got, append(append([]RString{}, wantLines...), RString{S: "last"})) {
		t.Errorf("beta %+v", got)
	}
	vars, err = ReadLazyLoadDB("testdata/Rdata-bz2.rdx", "testdata/Rdata-bz2.rdb")
	if err != nil {
		t.Fatal(err)
	}
	if got := strs(vars["gamma"]); !reflect.DeepEqual(got, []RString{{S: "bzip2"}, {S: "stored"}}) {
		t.Errorf("gamma %+v", got)
	}
}

func TestUnserializeErrors(t *testing.T) {
	raw := gunzip(t, "testdata/sample-v3.rds")
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"ascii format", []byte("A\n")},
		{"version 4", []byte("X\n\x00\x00\x00\x04\x00\x04\x02\x01\x00\x03\x05\x00")},
		{"truncated", raw[:len(raw)/2]},
		{"huge vector", append(append([]byte{}, raw[:23]...), 0, 0, 0, 16, 0x7f, 0xff, 0xff, 0xff)},
		{"bad reference", append(append([]byte{}, raw[:23]...), 0, 0, 0x05, 0xff)},
		{"environment", append(append([]byte{}, raw[:23]...), 0, 0, 0, 4)},
	} {
		if _, err := Unserialize(tc.in); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func gunzip(t testing.TB, name string) []byte {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzUnserialize: whatever the bytes, the decoder returns a value or an error, never panics.
func FuzzUnserialize(f *testing.F) {
	f.Add(gunzip(f, "testdata/sample-v3.rds"))
	v2, err := os.ReadFile("testdata/sample-v2.rds")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v2)
	f.Fuzz(func(t *testing.T, in []byte) {
		Unserialize(in)
	})
}
