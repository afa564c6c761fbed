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
