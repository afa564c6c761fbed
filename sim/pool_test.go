package sim_test

import (
	"maps"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
)

// TestPoolsCarryTheirOwnSettings: two pools, each behind its own router —
// a slow GPU with a small KV cache and a fast one with a large cache; a
// decider sends every third request to the slow pool. Each worker runs its
// pool's profile, and each router's view lists its own pool's workers,
// with each worker's own capacity and token budget.
func TestPoolsCarryTheirOwnSettings(t *testing.T) {
	slow, fast := testProfileScaled(4), testProfileScaled(1)
	small := WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 1024, BlockSize: 64, KVBlocks: 300, MaxModelLen: 8000}
	large := WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 4096, BlockSize: 64, KVBlocks: 3000, MaxModelLen: 8000}
	seen := map[int][2]int{}
	recording := func() policy.Policy {
		rr := &policy.RoundRobin{}
		return policy.Func(func(r *policy.Request, v policy.View) policy.Decision {
			for _, w := range v.Workers() {
				seen[w] = [2]int{v.KVCapacity(w), v.MaxNumBatchedTokens(w)}
			}
			return rr.Route(r, v)
		})
	}
	cfg := Config{Pools: []PoolConfig{{N: 1, Worker: small, Profile: slow}, {N: 2, Worker: large, Profile: fast, Policy: recording()}},
		Decider: DeciderFunc(func(r *policy.Request, _ []Pool, dst []int) []int { return append(dst[:0], min(r.ID%3, 1)) })}
	if cfg.NumWorkers() != 3 {
		t.Fatalf("NumWorkers %d", cfg.NumWorkers())
	}
	var reqs []treq
	for i := 0; i < 30; i++ {
		reqs = append(reqs, treq{at: Time(i) * 200 * Millisecond, isl: 700, osl: 40})
	}
	res, _ := simulateWith(t, cfg, mkTrace(reqs...), recording())
	want := map[int][2]int{0: {300, 1024}, 1: {3000, 4096}, 2: {3000, 4096}}
	if !maps.Equal(seen, want) {
		t.Errorf("the views showed workers (capacity, budget) %v, want %v", seen, want)
	}
	e2e := make([]Time, 3)
	n := make([]Time, 3)
	for _, r := range res.Records {
		if pool := min(r.ID%3, 1); pool != 0 && r.Worker == 0 || pool == 0 && r.Worker != 0 {
			t.Errorf("request %d ran on worker %d, outside pool %d", r.ID, r.Worker, pool)
		}
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
