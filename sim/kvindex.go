package sim

import (
	"fmt"
	"math/bits"
)

// kvIndex maps the content hashes of one KV pool's blocks to the blocks:
// open addressing with linear probing and backward-shift deletion, at most
// three quarters full, like blockIndex, but in 8-byte slots. A slot holds
// the hash's fingerprint (the top 32 bits of its Fibonacci product, whose
// top bits are also its home slot) above the block plus one (0 = empty);
// a probe that matches a fingerprint confirms the hash against the pool's
// own record of the block's content. The table is half blockIndex's size,
// which matters because a prefix cache's work is one insert and one delete
// per block, each a probe into a table that at fleet scale is cold in
// cache; a delete knows its block and compares no hash at all.
type kvIndex struct {
	slots []uint64
	shift uint // 32 − log2(len(slots))
	n     int
	sink  uint64 // warm's loads land here, so they are not dropped
}

func newKVIndex(capacity int) kvIndex {
	size := tableSize(capacity)
	return kvIndex{slots: make([]uint64, size), shift: uint(32 - bits.Len(uint(size-1)))}
}

// fingerprint is h's Fibonacci product's top half.
func fingerprint(h uint64) uint32 { return uint32((h * 0x9e3779b97f4a7c15) >> 32) }

func (ix *kvIndex) home(fp uint32) int { return int(fp >> ix.shift) }

// find probes for h, whose block's content hash[b] must equal h: it
// returns h's slot and block, or the empty slot where h would go and -1.
func (ix *kvIndex) find(h uint64, hash []uint64) (int, int32) {
	fp := fingerprint(h)
	mask := len(ix.slots) - 1
	for i := ix.home(fp); ; i = (i + 1) & mask {
		s := ix.slots[i]
		if s == 0 {
			return i, -1
		}
		if uint32(s>>32) == fp {
			if b := int32(uint32(s)) - 1; hash[b] == h {
				return i, b
			}
		}
	}
}

// insertAt stores block b under h in the empty slot i that find(h)
// returned (the table grows first if it must).
func (ix *kvIndex) insertAt(i int, h uint64, b int32) {
	fp := fingerprint(h)
	if 4*(ix.n+1) > 3*len(ix.slots) {
		ix.grow()
		mask := len(ix.slots) - 1
		for i = ix.home(fp); ix.slots[i] != 0; i = (i + 1) & mask {
		}
	}
	ix.slots[i] = uint64(fp)<<32 | uint64(uint32(b+1))
	ix.n++
}

// del removes block b, indexed under h.
func (ix *kvIndex) del(h uint64, b int32) {
	mask := len(ix.slots) - 1
	want := uint32(b + 1)
	for i := ix.home(fingerprint(h)); ix.slots[i] != 0; i = (i + 1) & mask {
		if uint32(ix.slots[i]) == want {
			ix.delSlot(i)
			return
		}
	}
	panic("sim: kvIndex.del of a block not indexed")
}

// delSlot empties slot i, shifting later entries of its probe run back.
func (ix *kvIndex) delSlot(i int) {
	mask := len(ix.slots) - 1
	ix.n--
	for j := (i + 1) & mask; ix.slots[j] != 0; j = (j + 1) & mask {
		if movesBack(i, j, ix.home(uint32(ix.slots[j]>>32))) {
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = 0
}

// warm loads the home slot of every hash in hs (see blockIndex.warm).
func (ix *kvIndex) warm(hs []uint64) {
	var x uint64
	for _, h := range hs {
		x += ix.slots[ix.home(fingerprint(h))]
	}
	ix.sink = x
}

// grow doubles the table; a slot's fingerprint is all it takes to place it.
func (ix *kvIndex) grow() {
	old := ix.slots
	*ix = newKVIndex(len(old))
	mask := len(ix.slots) - 1
	for _, s := range old {
		if s != 0 {
			i := ix.home(uint32(s >> 32))
			for ix.slots[i] != 0 {
				i = (i + 1) & mask
			}
			ix.slots[i] = s
			ix.n++
		}
	}
}

// verify checks the index against the blocks it names, in one pass over
// the table: every entry names a distinct block that holds content, with
// that content's fingerprint, and is reachable from its home slot (no
// empty slot between them); no two entries of a probe run hold the same
// hash; and the count of entries is n. hash and hashed are the pool's
// records of its materialised blocks.
func (ix *kvIndex) verify(hash []uint64, hashed []bool) error {
	mask := len(ix.slots) - 1
	empty := -1
	for i, s := range ix.slots {
		if s == 0 {
			empty = i
			break
		}
	}
	if empty < 0 {
		return fmt.Errorf("kv: index has no empty slot")
	}
	seen := make([]bool, len(hash))
	entries, run := 0, (empty+1)&mask // run: the first slot of the probe run at i
	for k := 1; k <= len(ix.slots); k++ {
		i := (empty + k) & mask
		s := ix.slots[i]
		if s == 0 {
			run = (i + 1) & mask
			continue
		}
		entries++
		fp, b := uint32(s>>32), int32(uint32(s))-1
		switch {
		case b < 0 || int(b) >= len(hash) || !hashed[b]:
			return fmt.Errorf("kv: index slot %d names block %d, which holds no content", i, b)
		case seen[b]:
			return fmt.Errorf("kv: index names block %d twice", b)
		case fp != fingerprint(hash[b]):
			return fmt.Errorf("kv: index slot %d has a fingerprint not of block %d's hash %x", i, b, hash[b])
		case (i-ix.home(fp))&mask > (i-run)&mask:
			return fmt.Errorf("kv: index entry of block %d (%x) is not reachable from its home slot", b, hash[b])
		}
		seen[b] = true
		for j := run; j != i; j = (j + 1) & mask {
			if o := ix.slots[j]; uint32(o>>32) == fp && hash[int32(uint32(o))-1] == hash[b] {
				return fmt.Errorf("kv: blocks %d and %d both hold %x", int32(uint32(o))-1, b, hash[b])
			}
		}
	}
	if entries != ix.n {
		return fmt.Errorf("kv: index holds %d entries, counts %d", entries, ix.n)
	}
	return nil
}
