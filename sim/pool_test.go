package sim_test

import (
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
)

// TestPoolsCarryTheirOwnSettings: two pools behind one router — a slow
// GPU with a small KV cache and a fast one with a large cache. Each worker
// runs its pool's profile, and the router's view reports each worker's own
// capacity and token budget.
func TestPoolsCarryTheirOwnSettings(t *testing.T) {
	slow, fast := testProfileScaled(4), testProfileScaled(1)
	small := WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 1024, BlockSize: 64, KVBlocks: 300, MaxModelLen: 8000}
	large := WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 4096, BlockSize: 64, KVBlocks: 3000, MaxModelLen: 8000}
	cfg := Config{Pools: []Pool{{N: 1, Worker: small, Profile: slow}, {N: 2, Worker: large, Profile: fast}}}
	if cfg.NumWorkers() != 3 {
		t.Fatalf("NumWorkers %d", cfg.NumWorkers())
	}
	var seen [][2]int
	rr := &policy.RoundRobin{}
	pol := policy.Func(func(r *policy.Request, v policy.View) policy.Decision {
		if len(seen) == 0 {
			for w := 0; w < v.NumWorkers(); w++ {
				seen = append(seen, [2]int{v.KVCapacity(w), v.MaxNumBatchedTokens(w)})
			}
		}
		return rr.Route(r, v)
	})
	var reqs []treq
	for i := 0; i < 30; i++ {
		reqs = append(reqs, treq{at: Time(i) * 200 * Millisecond, isl: 700, osl: 40})
	}
	res, _ := simulateWith(t, cfg, mkTrace(reqs...), pol)
	want := [][2]int{{300, 1024}, {3000, 4096}, {3000, 4096}}
	for w := range want {
		if seen[w] != want[w] {
			t.Errorf("view of worker %d: capacity, budget %v, want %v", w, seen[w], want[w])
		}
	}
	e2e := make([]Time, 3)
	n := make([]Time, 3)
	for _, r := range res.Records {
		e2e[r.Worker] += r.End - r.Arrival
		n[r.Worker]++
	}
	if !(e2e[0]/n[0] > 3*e2e[1]/n[1]) {
		t.Errorf("mean E2E on the slow pool %v, on the fast %v: the pools' profiles were not applied", e2e[0]/n[0], e2e[1]/n[1])
	}
	if res.Workers[0].KVBlocks != 300 || res.Workers[2].KVBlocks != 3000 {
		t.Errorf("worker KV capacities %d, %d", res.Workers[0].KVBlocks, res.Workers[2].KVBlocks)
	}
}

func testProfileScaled(k float64) *model.Profile {
	p := testProfile()
	p.StepBaseNs *= k
	p.DecodeNsPerSeq *= k
	p.PrefillNsPerToken *= k
	return p
}
