package sim

import (
	"math/rand/v2"
	"testing"
)

// TestBlockIndexAgreesWithMap drives the index and a Go map with the same
// random inserts and deletes, including colliding keys.
func TestBlockIndexAgreesWithMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ix := newBlockIndex(64)
	ref := map[uint64]int32{}
	keys := make([]uint64, 200)
	for i := range keys {
		keys[i] = rng.Uint64()
		if i%4 == 0 {
			keys[i] = uint64(i) << 58 // same low bits: long probe runs
		}
	}
	for step := 0; step < 20000; step++ {
		k := keys[rng.IntN(len(keys))]
		if _, ok := ref[k]; ok {
			ix.del(k)
			delete(ref, k)
		} else if len(ref) < 150 { // past the initial size: the index must grow
			v := int32(rng.IntN(1000)) + 1 // values are > 0
			ix.put(k, v)
			ref[k] = v
		}
		if ix.n != len(ref) {
			t.Fatalf("step %d: %d entries, map has %d", step, ix.n, len(ref))
		}
		for _, q := range keys[:20] {
			got, ok := ix.get(q)
			want, wok := ref[q]
			if ok != wok || (ok && got != want) {
				t.Fatalf("step %d: get(%x) = %d,%v; map says %d,%v", step, q, got, ok, want, wok)
			}
		}
	}
}

// The index's test-only operations, built on the ones the router uses.

// put inserts h → v (v > 0) and returns its slot; h must be absent.
func (ix *blockIndex) put(h uint64, v int32) int {
	i, _ := ix.lookup(h)
	return ix.insertAt(i, h, v)
}

// del removes h if present, shifting later entries of its probe run back.
func (ix *blockIndex) del(h uint64) {
	if i, ok := ix.lookup(h); ok {
		ix.delSlot(i)
	}
}

// each calls f for every entry.
func (ix *blockIndex) each(f func(h uint64, v int32)) {
	for _, s := range ix.slots {
		if s.val != 0 {
			f(s.key, s.val)
		}
	}
}
