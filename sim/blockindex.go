package sim

import "math/bits"

// blockIndex maps block content hashes to positive int32 values (the
// router's: a node id plus one in the in-flight tree, a holder or a list
// id in the stored-block index): open addressing with linear probing and
// backward-shift deletion, kept at most three quarters full (it grows by
// doubling as entries arrive, so a table starts small); linear probing
// over 16-byte slots stays within a cache line or two at this load. It
// replaces Go maps, whose insert/delete churn dominated replay time. The
// workers' pools index their blocks in kvIndex, with half-size slots.
//
// A zero value marks an empty slot, so a new table is the allocator's
// zeroed memory, with no pass to initialise it.
type blockIndex struct {
	slots []ixSlot
	shift uint
	n     int
	sink  uint64 // warm's loads land here, so they are not dropped
}

// ixSlot keeps a key beside its value, so a probe touches one cache line.
type ixSlot struct {
	key uint64
	val int32 // 0 = empty slot
	aux int32 // a second value for the user (holders: the single holder)
}

func newBlockIndex(capacity int) blockIndex {
	size := tableSize(capacity)
	return blockIndex{slots: make([]ixSlot, size), shift: uint(64 - bits.Len(uint(size-1)))}
}

// tableSize is the number of slots (a power of two) an open-addressing
// table needs for capacity entries below three quarters full.
func tableSize(capacity int) int { return 1 << bits.Len(uint(max(capacity, 4)*4/3)) }

// movesBack says whether, when slot i has just been emptied, the entry in
// slot j of the same probe run, whose home slot is home, must move into
// slot i (backward-shift deletion): it must unless its home lies in the
// cyclic interval (i, j], where it would stay reachable.
func movesBack(i, j, home int) bool {
	return (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)
}

func (ix *blockIndex) home(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> ix.shift) }

// lookup probes for h once: it returns h's slot and true, or the empty
// slot where h would go and false (for insertAt).
func (ix *blockIndex) lookup(h uint64) (int, bool) {
	mask := len(ix.slots) - 1
	for i := ix.home(h); ; i = (i + 1) & mask {
		s := &ix.slots[i]
		if s.val == 0 {
			return i, false
		}
		if s.key == h {
			return i, true
		}
	}
}

// warm loads the home slot of every hash in hs, so that the misses of a
// loop over them overlap instead of following one another: each probe of
// a table larger than the cache is a trip to memory, and the loads here
// depend on nothing but the hashes.
func (ix *blockIndex) warm(hs []uint64) {
	var x uint64
	for _, h := range hs {
		x += ix.slots[ix.home(h)].key
	}
	ix.sink = x
}

// find returns the slot holding h, or -1.
func (ix *blockIndex) find(h uint64) int {
	if i, ok := ix.lookup(h); ok {
		return i
	}
	return -1
}

func (ix *blockIndex) get(h uint64) (int32, bool) {
	if i, ok := ix.lookup(h); ok {
		return ix.slots[i].val, true
	}
	return 0, false
}

// insertAt stores h → v (v > 0) in the empty slot i that lookup(h)
// returned, and returns h's slot (another one if the table had to grow).
func (ix *blockIndex) insertAt(i int, h uint64, v int32) int {
	if 4*(ix.n+1) > 3*len(ix.slots) {
		ix.grow()
		i, _ = ix.lookup(h)
	}
	ix.slots[i] = ixSlot{key: h, val: v}
	ix.n++
	return i
}

func (ix *blockIndex) grow() {
	old := ix.slots
	*ix = newBlockIndex(len(old))
	mask := len(ix.slots) - 1
	for _, s := range old {
		if s.val != 0 {
			i := ix.home(s.key)
			for ix.slots[i].val != 0 {
				i = (i + 1) & mask
			}
			ix.slots[i] = s
			ix.n++
		}
	}
}

// delSlot empties slot i, shifting later entries of its probe run back.
func (ix *blockIndex) delSlot(i int) {
	mask := len(ix.slots) - 1
	ix.n--
	for j := (i + 1) & mask; ix.slots[j].val != 0; j = (j + 1) & mask {
		if movesBack(i, j, ix.home(ix.slots[j].key)) {
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = ixSlot{}
}
