package sim

import "math/bits"

// blockIndex maps content hashes to KV blocks: open addressing with linear
// probing and backward-shift deletion, sized once for a pool (it never
// holds more entries than the pool has blocks, so it never grows). It
// replaces a Go map, whose insert/delete churn dominated replay time.
type blockIndex struct {
	keys  []uint64
	vals  []int32 // -1 = empty slot
	shift uint
	n     int
}

func newBlockIndex(capacity int) blockIndex {
	size := 1 << bits.Len(uint(2*capacity)) // load factor ≤ 1/2
	ix := blockIndex{keys: make([]uint64, size), vals: make([]int32, size), shift: uint(64 - bits.Len(uint(size-1)))}
	for i := range ix.vals {
		ix.vals[i] = -1
	}
	return ix
}

func (ix *blockIndex) slot(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> ix.shift) }

func (ix *blockIndex) get(h uint64) (int32, bool) {
	mask := len(ix.keys) - 1
	for i := ix.slot(h); ; i = (i + 1) & mask {
		if ix.vals[i] < 0 {
			return -1, false
		}
		if ix.keys[i] == h {
			return ix.vals[i], true
		}
	}
}

// put inserts h → b; h must be absent.
func (ix *blockIndex) put(h uint64, b int32) {
	mask := len(ix.keys) - 1
	i := ix.slot(h)
	for ix.vals[i] >= 0 {
		i = (i + 1) & mask
	}
	ix.keys[i], ix.vals[i] = h, b
	ix.n++
}

// del removes h if present, shifting later entries of its probe run back.
func (ix *blockIndex) del(h uint64) {
	mask := len(ix.keys) - 1
	i := ix.slot(h)
	for {
		if ix.vals[i] < 0 {
			return
		}
		if ix.keys[i] == h {
			break
		}
		i = (i + 1) & mask
	}
	ix.n--
	for j := (i + 1) & mask; ix.vals[j] >= 0; j = (j + 1) & mask {
		home := ix.slot(ix.keys[j])
		// Move j into the hole at i if its home is not in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			ix.keys[i], ix.vals[i] = ix.keys[j], ix.vals[j]
			i = j
		}
	}
	ix.vals[i] = -1
}

// each calls f for every entry.
func (ix *blockIndex) each(f func(h uint64, b int32)) {
	for i, v := range ix.vals {
		if v >= 0 {
			f(ix.keys[i], v)
		}
	}
}
