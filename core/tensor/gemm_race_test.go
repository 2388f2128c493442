//go:build race

package tensor

// gemmRace is true under the race detector, whose sync.Pool drops items at random.
const gemmRace = true
