package sim

import (
	"math/rand/v2"
	"testing"
)

// checkFlightTree verifies the tree's bookkeeping: every live node is on
// its first block's chain, its holders' counts add up to its total (> 0),
// and each worker's distinct count is the length of the nodes it holds.
func checkFlightTree(t *testing.T, ft *flightTree) {
	t.Helper()
	freed := map[int32]bool{}
	for _, id := range ft.free {
		freed[id] = true
	}
	distinct := make([]int, len(ft.distinct))
	live := 0
	for id := range ft.nodes {
		if freed[int32(id)] {
			continue
		}
		live++
		n := &ft.nodes[id]
		sum := int32(0)
		for _, hd := range n.holders {
			if hd.count <= 0 {
				t.Fatalf("node %d: holder %d with count %d", id, hd.w, hd.count)
			}
			sum += hd.count
			distinct[hd.w] += len(n.blocks)
		}
		if sum != n.total || n.total <= 0 || len(n.blocks) == 0 {
			t.Fatalf("node %d: %d blocks, holders sum to %d, total %d", id, len(n.blocks), sum, n.total)
		}
		if n.parent >= 0 && freed[n.parent] {
			t.Fatalf("node %d: parent %d is free", id, n.parent)
		}
		if got := ft.child(n.parent, n.blocks[0]); got != int32(id) {
			t.Fatalf("node %d not found under its parent (found %d)", id, got)
		}
	}
	for w := range distinct {
		if distinct[w] != ft.distinct[w] {
			t.Fatalf("worker %d: distinct %d, nodes say %d", w, ft.distinct[w], distinct[w])
		}
	}
	chained := 0
	ft.heads.each(func(_ uint64, v int32) {
		for id := v - 1; id >= 0; id = ft.nodes[id].same {
			chained++
		}
	})
	if chained != live {
		t.Fatalf("%d nodes on chains, %d live", chained, live)
	}
}

// TestFlightTreeAnyBlocks books and finishes random requests whose blocks
// break the chaining promise (a small alphabet: repeated hashes within a
// request, one hash at several depths) as well as keeping it: the tree
// stays consistent after every operation, a request's walk finds the
// nodes its booking counted, and finishing everything empties it.
func TestFlightTreeAnyBlocks(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		flightTreeCase(t, seed)
	}
}

// FuzzFlightTree is TestFlightTreeAnyBlocks on fuzzed seeds:
//
//	go test ./sim -run '^$' -fuzz FuzzFlightTree -fuzztime 60s
func FuzzFlightTree(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(2))
	f.Fuzz(func(t *testing.T, seed uint64) { flightTreeCase(t, seed) })
}

// flightTreeCase is one random sequence of bookings and finishes; even
// seeds draw chained blocks, odd ones blocks from a small alphabet.
func flightTreeCase(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	n := 1 + rng.IntN(6)
	ft := newFlightTree(n)
	alphabet := uint64(1 + rng.IntN(5))
	chained := seed%2 == 0
	request := func() []uint64 {
		b := make([]uint64, rng.IntN(10))
		var chain uint64
		for i := range b {
			if chained {
				chain = Mix(chain, rng.Uint64N(alphabet))
				b[i] = chain
			} else {
				b[i] = rng.Uint64N(alphabet)
			}
		}
		return b
	}
	type inflight struct {
		w      int
		blocks []uint64
	}
	var live []inflight
	for step := 0; step < 400; step++ {
		if rng.IntN(5) < 3 {
			f := inflight{rng.IntN(n), request()}
			ft.book(f.w, f.blocks)
			live = append(live, f)
		} else if len(live) > 0 {
			k := rng.IntN(len(live))
			ft.finish(live[k].w, live[k].blocks)
			live = append(live[:k], live[k+1:]...)
		}
		checkFlightTree(t, ft)
	}
	for _, f := range live {
		ft.finish(f.w, f.blocks)
	}
	checkFlightTree(t, ft)
	if ft.heads.n != 0 || len(ft.free) != len(ft.nodes) {
		t.Fatalf("seed %d: emptied tree keeps %d chains, %d of %d nodes free", seed, ft.heads.n, len(ft.free), len(ft.nodes))
	}
	for w, d := range ft.distinct {
		if d != 0 {
			t.Fatalf("seed %d: worker %d keeps %d distinct blocks", seed, w, d)
		}
	}
}

// TestFlightTreeFinishUnbooked: finishing what was never booked panics
// (a bookkeeping bug), as the per-block counts did.
func TestFlightTreeFinishUnbooked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		booked []uint64
		w      int
		finish []uint64
	}{
		{"empty tree", nil, 0, []uint64{1}},
		{"other worker", []uint64{1, 2}, 1, []uint64{1, 2}},
		{"past the path", []uint64{1, 2}, 0, []uint64{1, 2, 3}},
		{"inside a node", []uint64{1, 2, 3}, 0, []uint64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := newFlightTree(2)
			ft.book(0, tc.booked)
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			ft.finish(tc.w, tc.finish)
		})
	}
}
