// Package human writes numbers for people: counts with thousands separators, sizes in binary
// units. The command and the model card print them alike.
package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Commas writes n with thousands separators: 12,345.
func Commas(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && r != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Bytes writes a size in B, KiB, MiB or GiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// byteUnits are the units ParseBytes reads, as transformers' max_shard_size reads them: decimal
// kB, MB, GB and binary KiB, MiB, GiB.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
}

// ParseBytes reads a size such as "16MiB", "5GB", "500 kB" or "1048576" (bytes), as
// transformers' max_shard_size does: kB, MB and GB are powers of 1000, KiB, MiB and GiB of
// 1024, the unit's case does not matter. The size must be a whole number of bytes, above 0 and
// at most 1 TiB.
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || strings.ContainsAny(t, "EXPINF_") {
		return 0, fmt.Errorf("size %q: want a number of bytes, or one with kB, MB, GB, KiB, MiB or GiB (e.g. 16MiB)", s)
	}
	b := n * float64(mult)
	if !(b >= 1 && b <= 1<<40) || b != math.Trunc(b) {
		return 0, fmt.Errorf("size %q: want a whole number of bytes from 1 B to 1 TiB", s)
	}
	return int64(b), nil
}
