package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPCGKeep checks PCGKeep against math/rand/v2's PCG itself, decision by decision: every
// length to 70 (each remainder of the 16-element blocks and an odd last element) and long
// masks, several states and thresholds (none dropped, all dropped, BERT's 0.1), on the fast
// path where the CPU has it and on the Go one.
func TestPCGKeep(t *testing.T) {
	lengths := []int{}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 1000, 4099, 1<<16)
	seeds := [][2]uint64{{0, 0}, {1, 2}, {0xffffffffffffffff, 0xffffffffffffffff}, {0x9e3779b97f4a7c15, 42}}
	thrs := []uint32{0, 1, 429496729, 1 << 31, 0xffffffff} // 429496729: p = 0.1
	for _, fast := range []bool{true, false} {
		if fast && !pcgFast {
			continue
		}
		defer func(was bool) { pcgFast = was }(pcgFast)
		pcgFast = fast
		for _, sd := range seeds {
			for _, thr := range thrs {
				for _, n := range lengths {
					rng := rand.NewPCG(sd[0], sd[1])
					want := make([]uint8, n)
					for i := 0; i < n; i += 2 {
						r := rng.Uint64()
						want[i] = b2u(uint32(r) >= thr)
						if i+1 < n {
							want[i+1] = b2u(uint32(r>>32) >= thr)
						}
					}
					got := make([]uint8, n+1)
					got[n] = 7
					PCGKeep(got[:n], sd[0], sd[1], thr)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("fast=%v state %v thr %#x n=%d: keep[%d] = %d, math/rand/v2 %d", fast, sd, thr, n, i, got[i], want[i])
						}
					}
					if got[n] != 7 {
						t.Fatalf("fast=%v n=%d: wrote past keep", fast, n)
					}
				}
			}
		}
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// BenchmarkPCGKeep times PCGKeep on a Mini hidden state's mask (1,024 x 256), on the fast path
// where the CPU has it and in Go, against math/rand/v2's PCG one draw at a time.
func BenchmarkPCGKeep(b *testing.B) {
	keep := make([]uint8, 1024*256)
	thr := uint32(429496729) // 0.1·2³²
	for _, fast := range []bool{true, false} {
		b.Run(fmt.Sprintf("fast=%v", fast && pcgFast), func(b *testing.B) {
			defer func(was bool) { pcgFast = was }(pcgFast)
			pcgFast = fast && pcgFast
			for b.Loop() {
				PCGKeep(keep, 1, 2, thr)
			}
		})
	}
	b.Run("math-rand-v2", func(b *testing.B) {
		for b.Loop() {
			rng := rand.NewPCG(1, 2)
			for i := 0; i < len(keep); i += 2 {
				r := rng.Uint64()
				keep[i], keep[i+1] = b2u(uint32(r) >= thr), b2u(uint32(r>>32) >= thr)
			}
		}
	})
}
