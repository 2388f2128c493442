package bert

import "github.com/bertlab/bertlab/core/tensor"

// arena hands out the buffers of one training step and keeps them for the next: the n-th
// request of a step gets the n-th buffer of the step before, grown when it is too small. A
// training loop asks for the same buffers in the same order every step, so after its first
// step a step allocates none of its activations: no garbage, no zeroing of fresh memory and
// no page faults for memory the runtime gave back to the system in between.
//
// The buffers hold whatever the step before left there: every caller overwrites all of what
// it asks for, or clears it. The nil arena allocates fresh zeroed buffers, so the same code
// serves passes whose results outlive the step (ForwardTrain's Activations).
type arena struct {
	floats [][]float32
	bytes  [][]uint8
	nf, nb int // the buffers handed out since reset
}

// reset makes every buffer available again; what was handed out before must not be used
// after.
func (a *arena) reset() {
	if a != nil {
		a.nf, a.nb = 0, 0
	}
}

// f32 returns n float32s: stale values from the arena, or zeros from the nil arena.
func (a *arena) f32(n int) []float32 {
	if a == nil {
		return make([]float32, n)
	}
	if a.nf == len(a.floats) {
		a.floats = append(a.floats, nil)
	}
	s := growFloats(a.floats[a.nf], n)
	a.floats[a.nf] = s
	a.nf++
	return s
}

// u8 returns n bytes: stale values from the arena, or zeros from the nil arena.
func (a *arena) u8(n int) []uint8 {
	if a == nil {
		return make([]uint8, n)
	}
	if a.nb == len(a.bytes) {
		a.bytes = append(a.bytes, nil)
	}
	s := a.bytes[a.nb]
	if cap(s) < n {
		s = make([]uint8, n)
	}
	s = s[:n]
	a.bytes[a.nb] = s
	a.nb++
	return s
}

// tensor returns a tensor of the given shape on f32's storage (stale values from the arena).
func (a *arena) tensor(shape ...int) *tensor.Tensor {
	// A copy of shape, so that the callers' variadic arguments stay on their stacks.
	return &tensor.Tensor{Shape: append([]int(nil), shape...), Data: a.f32(tensor.NumElements(shape))}
}
