package tinydatabuild

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"
)

// Seed is mixed into every hash that orders or splits the data: changing it reshuffles all splits.
const Seed = "bertlab-tinydata-1"

// rank is a deterministic pseudo-random position for key within a named set: the first 8 bytes
// of SHA-256(Seed NUL set NUL key), big-endian. Any language can recompute it.
func rank(set, key string) uint64 {
	h := sha256.Sum256([]byte(Seed + "\x00" + set + "\x00" + key))
	return binary.BigEndian.Uint64(h[:8])
}

// shuffled returns the indices 0..n-1 ordered by rank(set, key(i)), ties broken by key.
func shuffled(set string, n int, key func(int) string) []int {
	idx := make([]int, n)
	ranks := make([]uint64, n)
	for i := range idx {
		idx[i] = i
		ranks[i] = rank(set, key(i))
	}
	sort.Slice(idx, func(a, b int) bool {
		ra, rb := ranks[idx[a]], ranks[idx[b]]
		if ra != rb {
			return ra < rb
		}
		return key(idx[a]) < key(idx[b])
	})
	return idx
}

// percentCeil is ceil(n*p/100).
func percentCeil(n, p int) int { return (n*p + 99) / 100 }
