package sim

import (
	"math/rand/v2"
	"testing"
)

// TestKVIndexAgreesWithMap drives the index and a Go map with the same
// random inserts and deletes. Blocks record their hashes as a pool does;
// some keys share a fingerprint (their Fibonacci products agree in the
// top 32 bits), so only the confirmation against the block tells them
// apart, and some share a home slot, making long probe runs, some of
// them past the table's end.
func TestKVIndexAgreesWithMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const inverse = 0xf1de83e19937733d // 0x9e3779b97f4a7c15⁻¹ mod 2⁶⁴
	keys := make([]uint64, 240)
	for i := range keys {
		switch i % 5 {
		case 0: // the same fingerprint, different low bits of the product
			keys[i] = (0xabcdef01<<32 | uint64(i)) * inverse
		case 1: // the same home slot in every table size, different fingerprints
			keys[i] = (0x5<<60 | uint64(i)<<33) * inverse
		case 2: // home in the last slot: probe runs wrap around
			keys[i] = (0xfff<<52 | uint64(i)<<8) * inverse
		default:
			keys[i] = rng.Uint64()
		}
	}
	if fingerprint(keys[0]) != fingerprint(keys[5]) || keys[0] == keys[5] {
		t.Fatal("test keys do not collide as meant")
	}
	ix := newKVIndex(8)
	hash := make([]uint64, 200) // block → the key it holds
	ref := map[uint64]int32{}   // key → block
	var freeBlocks []int32
	for b := range hash {
		freeBlocks = append(freeBlocks, int32(b))
	}
	for step := range 30000 {
		k := keys[rng.IntN(len(keys))]
		if b, ok := ref[k]; ok {
			ix.del(k, b)
			delete(ref, k)
			freeBlocks = append(freeBlocks, b)
		} else if len(freeBlocks) > 0 { // past the initial size: the index must grow
			i := rng.IntN(len(freeBlocks))
			b := freeBlocks[i]
			freeBlocks[i] = freeBlocks[len(freeBlocks)-1]
			freeBlocks = freeBlocks[:len(freeBlocks)-1]
			slot, got := ix.find(k, hash)
			if got >= 0 {
				t.Fatalf("step %d: absent key %x found in block %d", step, k, got)
			}
			hash[b] = k
			ix.insertAt(slot, k, b)
			ref[k] = b
		}
		if ix.n != len(ref) {
			t.Fatalf("step %d: %d entries, map has %d", step, ix.n, len(ref))
		}
		for _, q := range keys[:24] {
			_, got := ix.find(q, hash)
			want, ok := ref[q]
			if !ok {
				want = -1
			}
			if got != want {
				t.Fatalf("step %d: find(%x) = block %d, map says %d", step, q, got, want)
			}
		}
	}
}

// TestKVCacheCheckCatchesCorruptIndex breaks a healthy pool's index in
// each way Check must notice, one at a time.
func TestKVCacheCheckCatchesCorruptIndex(t *testing.T) {
	build := func() *KVCache {
		c := NewKVCache(300)
		table, _ := c.Grow(nil, 200)
		for i, b := range table {
			c.Commit(b, uint64(i+1)*0x9e3779b97f4a7c15)
		}
		c.Release(table[100:])
		if err := c.Check(); err != nil {
			t.Fatalf("healthy pool: %v", err)
		}
		return c
	}
	slotOf := func(c *KVCache, b int32) int {
		i, got := c.index.find(c.hash[b], c.hash)
		if got != b {
			t.Fatalf("block %d not indexed", b)
		}
		return i
	}
	emptyAfter := func(c *KVCache, i int) int {
		mask := len(c.index.slots) - 1
		for j := (i + 1) & mask; ; j = (j + 1) & mask {
			if c.index.slots[j] == 0 {
				return j
			}
		}
	}
	cases := []struct {
		name    string
		corrupt func(c *KVCache)
	}{
		{"entry names a block without content", func(c *KVCache) { c.hashed[7] = false; c.hashed[250] = true }},
		{"fingerprint of another hash", func(c *KVCache) { c.hash[7] ^= 1 << 40 }},
		{"entry past an empty slot", func(c *KVCache) {
			i := slotOf(c, 7)
			j := emptyAfter(c, emptyAfter(c, i))
			c.index.slots[j], c.index.slots[i] = c.index.slots[i], 0
		}},
		{"one block named twice", func(c *KVCache) {
			i := slotOf(c, 7)
			c.index.slots[emptyAfter(c, i)] = c.index.slots[i]
			c.index.n++
		}},
		{"two blocks hold one hash", func(c *KVCache) {
			i := slotOf(c, 8)
			c.index.delSlot(i)
			c.hash[8] = c.hash[7]
			// Block 8's entry goes at the end of block 7's probe run.
			c.index.slots[emptyAfter(c, slotOf(c, 7))] = uint64(fingerprint(c.hash[8]))<<32 | 9
			c.index.n++
		}},
		{"wrong count", func(c *KVCache) { c.index.n++ }},
	}
	for _, tc := range cases {
		c := build()
		tc.corrupt(c)
		if err := c.Check(); err == nil {
			t.Errorf("%s: Check found nothing", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}
