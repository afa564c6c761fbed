package sim

import "math/bits"

// blockIndex maps block content hashes to int32 values (a KV block id, or
// a reference count): open addressing with linear probing and
// backward-shift deletion, kept at most half full (it grows by doubling as
// entries arrive, so a table starts small). It replaces Go maps, whose
// insert/delete churn dominated replay time.
type blockIndex struct {
	keys  []uint64
	vals  []int32 // -1 = empty slot
	shift uint
	n     int
}

func newBlockIndex(capacity int) blockIndex {
	size := 1 << bits.Len(uint(2*max(capacity, 4))) // load factor ≤ 1/2
	ix := blockIndex{keys: make([]uint64, size), vals: make([]int32, size), shift: uint(64 - bits.Len(uint(size-1)))}
	for i := range ix.vals {
		ix.vals[i] = -1
	}
	return ix
}

func (ix *blockIndex) home(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> ix.shift) }

// find returns the slot holding h, or -1.
func (ix *blockIndex) find(h uint64) int {
	mask := len(ix.keys) - 1
	for i := ix.home(h); ; i = (i + 1) & mask {
		if ix.vals[i] < 0 {
			return -1
		}
		if ix.keys[i] == h {
			return i
		}
	}
}

func (ix *blockIndex) get(h uint64) (int32, bool) {
	if i := ix.find(h); i >= 0 {
		return ix.vals[i], true
	}
	return -1, false
}

// put inserts h → v (v ≥ 0); h must be absent.
func (ix *blockIndex) put(h uint64, v int32) {
	if 2*(ix.n+1) > len(ix.keys) {
		ix.grow()
	}
	mask := len(ix.keys) - 1
	i := ix.home(h)
	for ix.vals[i] >= 0 {
		i = (i + 1) & mask
	}
	ix.keys[i], ix.vals[i] = h, v
	ix.n++
}

func (ix *blockIndex) grow() {
	old := *ix
	*ix = newBlockIndex(len(old.keys))
	for i, v := range old.vals {
		if v >= 0 {
			ix.put(old.keys[i], v)
		}
	}
}

// del removes h if present, shifting later entries of its probe run back.
func (ix *blockIndex) del(h uint64) {
	if i := ix.find(h); i >= 0 {
		ix.delSlot(i)
	}
}

func (ix *blockIndex) delSlot(i int) {
	mask := len(ix.keys) - 1
	ix.n--
	for j := (i + 1) & mask; ix.vals[j] >= 0; j = (j + 1) & mask {
		home := ix.home(ix.keys[j])
		// Move j into the hole at i if its home is not in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			ix.keys[i], ix.vals[i] = ix.keys[j], ix.vals[j]
			i = j
		}
	}
	ix.vals[i] = -1
}

// incr adds one to h's value, inserting it at 1.
func (ix *blockIndex) incr(h uint64) {
	if i := ix.find(h); i >= 0 {
		ix.vals[i]++
		return
	}
	ix.put(h, 1)
}

// decr subtracts one from h's value and removes it at 0.
func (ix *blockIndex) decr(h uint64) {
	i := ix.find(h)
	if i < 0 {
		panic("sim: reference count of an untracked block dropped")
	}
	if ix.vals[i]--; ix.vals[i] == 0 {
		ix.delSlot(i)
	}
}

// each calls f for every entry.
func (ix *blockIndex) each(f func(h uint64, v int32)) {
	for i, v := range ix.vals {
		if v >= 0 {
			f(ix.keys[i], v)
		}
	}
}
