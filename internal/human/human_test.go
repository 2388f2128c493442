package human

import "testing"

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
