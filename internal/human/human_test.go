package human

import (
	"fmt"
	"testing"
)

func TestCommas(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {4385920, "4,385,920"}, {-1234, "-1,234"}, {-123, "-123"}} {
		if got := Commas(c.n); got != c.want {
			t.Errorf("Commas(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{512, "512 B"}, {1536, "1.5 KiB"}, {9 << 20, "9.0 MiB"}, {3 << 30, "3.00 GiB"}} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int64 // 0: an error
	}{
		{"16MiB", 16 << 20}, {"16mib", 16 << 20}, {"5GB", 5e9}, {"500 kB", 500e3}, {"1048576", 1 << 20},
		{"1.5KiB", 1536}, {"2B", 2}, {"1TB", 0}, {"0", 0}, {"-1MB", 0}, {"0.5", 0}, {"MB", 0}, {"", 0},
		{"ten MB", 0}, {"1e3", 0}, {"NaN", 0}, {"Inf", 0}, {"0x10", 0}, {"1_000", 0},
	} {
		got, err := ParseBytes(c.s)
		if c.want == 0 {
			if err == nil {
				t.Errorf("ParseBytes(%q) = %d, want an error", c.s, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v, want %d", c.s, got, err, c.want)
		}
	}
}

// FuzzParseBytes: any string gives a size in range or an error, never a panic, and a size it
// gives reads back the same when written in bytes.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"16MiB", "5GB", "500 kB", "1", "1.5KiB", "x", "9e99GB", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err != nil {
			return
		}
		if n < 1 || n > 1<<40 {
			t.Fatalf("ParseBytes(%q) = %d, out of range", s, n)
		}
		if m, err := ParseBytes(fmt.Sprint(n)); err != nil || m != n {
			t.Fatalf("ParseBytes(%d) = %d, %v", n, m, err)
		}
	})
}
