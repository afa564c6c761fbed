package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/routesim/routesim/policy"
)

// naiveView is the router's block bookkeeping as it was before the
// inverted index: per-worker reference counts and cached sets, probed
// worker by worker.
type naiveView struct {
	refs  []map[uint64]int
	index []map[uint64]bool
}

func (v *naiveView) newBlocks(w int, blocks []uint64) int {
	n := 0
	for _, h := range blocks {
		if v.refs[w][h] == 0 {
			n++
		}
	}
	return n
}

func (v *naiveView) overlap(w int, blocks []uint64) int {
	n := 0
	for _, h := range blocks {
		if !v.index[w][h] {
			break
		}
		n++
	}
	return n
}

// TestRouterIndexAgreesWithNaive drives the router's bookkeeping and the
// naive per-worker one with the same random dispatches, completions and
// KV events, and checks that every worker's NewBlocks, Overlap and
// ActiveBlocks (one by one and from Loads) agree for random requests
// (paths in a tree of shared prefixes, empty), asked in random order and
// repeatedly, across a wrap of the scans' epoch counters.
func TestRouterIndexAgreesWithNaive(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(40)
		workers := make([]*worker, n)
		for w := range workers {
			workers[w] = &worker{id: w, cfg: WorkerConfig{BlockSize: 16, KVBlocks: 100, MaxNumBatchedTokens: 512}}
		}
		r := newRouter(workers, RouterConfig{KVAware: true}, func() Time { return 0 })
		nv := &naiveView{refs: make([]map[uint64]int, n), index: make([]map[uint64]bool, n)}
		for w := range nv.refs {
			nv.refs[w], nv.index[w] = map[uint64]int{}, map[uint64]bool{}
		}
		// Requests are paths in a small tree of prefixes (branching ≤ 4),
		// so they share prefixes often; equal hashes mean equal prefixes,
		// as Job.Blocks promises.
		branching := uint64(1 + rng.IntN(4))
		request := func() []uint64 {
			b := make([]uint64, rng.IntN(12))
			var chain uint64
			for i := range b {
				chain = Mix(chain, rng.Uint64N(branching))
				b[i] = chain
			}
			return b
		}
		type inflight struct {
			w      int
			blocks []uint64
		}
		var live []inflight
		var asked [][]uint64 // requests asked about before: a parked one is asked again later
		for step := 0; step < 3000; step++ {
			if step == 1500 && seed%2 == 1 {
				// The scans' epochs wrap a few decisions from now, onto
				// epochs that the first half's stamps still carry.
				r.scan.epoch, r.overlaps.epoch = math.MaxUint32-3, math.MaxUint32-3
			}
			switch op := rng.IntN(10); {
			case op < 3: // dispatch
				w, b := rng.IntN(n), request()
				r.book(w, len(b)*16, b)
				for _, h := range b {
					nv.refs[w][h]++
				}
				live = append(live, inflight{w, b})
			case op < 5 && len(live) > 0: // finish
				k := rng.IntN(len(live))
				f := live[k]
				live = append(live[:k], live[k+1:]...)
				r.finish(f.w, f.blocks)
				for _, h := range f.blocks {
					if nv.refs[f.w][h]--; nv.refs[f.w][h] == 0 {
						delete(nv.refs[f.w], h)
					}
				}
			case op < 8: // a KV event
				w, h := rng.IntN(n), uint64(0)
				if b := request(); len(b) > 0 {
					h = b[len(b)-1] // any block of the tree, prefix or not
				}
				stored := rng.IntN(2) == 0
				r.applyKV(kvEvent{worker: int32(w), stored: stored, hash: h})
				if stored {
					nv.index[w][h] = true
				} else {
					delete(nv.index[w], h)
				}
			default: // a decision: every worker, in random order, twice
				b := request()
				if len(asked) > 0 && rng.IntN(2) == 0 {
					b = asked[rng.IntN(len(asked))]
				} else {
					asked = append(asked, b)
				}
				loads := r.Loads(b, nil)
				for w, l := range loads {
					want := policy.WorkerLoad{Prefill: r.prefill[w], Active: len(nv.refs[w]), New: nv.newBlocks(w, b),
						Overlap: nv.overlap(w, b), Capacity: 100, MaxBatched: 512}
					if l != want {
						t.Fatalf("seed %d step %d: Loads[%d] = %+v, naive %+v", seed, step, w, l, want)
					}
				}
				for _, w := range append(rng.Perm(n), rng.Perm(n)...) {
					if got, want := r.NewBlocks(w, b), nv.newBlocks(w, b); got != want {
						t.Fatalf("seed %d step %d: NewBlocks(%d) = %d, naive %d", seed, step, w, got, want)
					}
					if got, want := r.Overlap(w, b), nv.overlap(w, b); got != want {
						t.Fatalf("seed %d step %d: Overlap(%d) = %d, naive %d", seed, step, w, got, want)
					}
					if got, want := r.ActiveBlocks(w), len(nv.refs[w]); got != want {
						t.Fatalf("seed %d step %d: ActiveBlocks(%d) = %d, naive %d", seed, step, w, got, want)
					}
				}
			}
		}
	}
}

// TestForgetScansOnRecycledBuffer: the router caches a scan by the address
// of the blocks asked about; once a request's recycled buffer holds
// another request's blocks, forgetScans makes the next question rescan.
func TestForgetScansOnRecycledBuffer(t *testing.T) {
	workers := []*worker{{id: 0, cfg: WorkerConfig{BlockSize: 16, KVBlocks: 100, MaxNumBatchedTokens: 512}}}
	r := newRouter(workers, RouterConfig{KVAware: true}, func() Time { return 0 })
	r.book(0, 32, []uint64{1, 2})
	r.applyKV(kvEvent{worker: 0, stored: true, hash: 1})
	buf := []uint64{1, 2}
	if r.NewBlocks(0, buf) != 0 || r.Overlap(0, buf) != 1 {
		t.Fatalf("NewBlocks %d, Overlap %d for held blocks", r.NewBlocks(0, buf), r.Overlap(0, buf))
	}
	buf[0], buf[1] = 7, 8 // the buffer now holds another request's blocks
	r.forgetScans()
	if r.NewBlocks(0, buf) != 2 || r.Overlap(0, buf) != 0 {
		t.Errorf("after recycling: NewBlocks %d, Overlap %d, want 2 and 0", r.NewBlocks(0, buf), r.Overlap(0, buf))
	}
}

// TestScanEpochWrap: when a scan's epoch counter wraps, the stamps an
// earlier scan left must not pass for the new scan's. Worker 0 is touched
// by a scan at epoch 1; the counter is then set to wrap back to 1 at the
// next scan, which does not touch worker 0 (its request finished, its
// block was evicted).
func TestScanEpochWrap(t *testing.T) {
	workers := []*worker{{id: 0, cfg: WorkerConfig{BlockSize: 16, KVBlocks: 100, MaxNumBatchedTokens: 512}}, {id: 1}}
	workers[1].cfg = workers[0].cfg
	r := newRouter(workers, RouterConfig{KVAware: true}, func() Time { return 0 })
	b := []uint64{Mix(0, 1), Mix(Mix(0, 1), 2)}
	r.applyKV(kvEvent{worker: 0, stored: true, hash: b[0]})
	r.book(0, 32, b)
	if l := r.Loads(b, nil)[0]; l.New != 0 || l.Overlap != 1 || r.scan.epoch != 1 || r.overlaps.epoch != 1 {
		t.Fatalf("before the wrap: %+v at epochs %d, %d", l, r.scan.epoch, r.overlaps.epoch)
	}
	r.scan.epoch, r.overlaps.epoch = math.MaxUint32, math.MaxUint32
	r.finish(0, b)
	r.applyKV(kvEvent{worker: 0, hash: b[0]})
	if l := r.Loads(b, nil)[0]; l.New != 2 || l.Overlap != 0 || r.scan.epoch != 1 || r.overlaps.epoch != 1 {
		t.Fatalf("after the wrap: %+v at epochs %d, %d; want New 2, Overlap 0 at epoch 1", l, r.scan.epoch, r.overlaps.epoch)
	}
}
