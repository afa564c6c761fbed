package sim_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// membershipRun is a run of 3 workers that gain worker 3 at 2 s, lose
// worker 1 at 4 s, gain worker 4 at 6 s and lose workers 3 and 0 at 8 s
// and 9 s, under 240 requests over 12 s that share prefixes.
var membershipChanges = []MemberChange{
	{At: 2 * Second, Pool: 0},
	{At: 4 * Second, Leave: true, Worker: 1},
	{At: 6 * Second, Pool: 0},
	{At: 8 * Second, Leave: true, Worker: 3},
	{At: 9 * Second, Leave: true, Worker: 0},
}

func membershipTrace() []treq {
	rng := rand.New(rand.NewPCG(5, 5))
	reqs := make([]treq, 240)
	for i := range reqs {
		ids := []int64{int64(rng.IntN(4)), int64(100 + rng.IntN(6))} // shared prefixes, then unique
		ids = append(ids, seqIDs(int64(1000+10*i), int64(1+rng.IntN(8)))...)
		reqs[i] = treq{at: Time(i) * 50 * Millisecond, isl: 64 * len(ids), osl: 20 + rng.IntN(200), ids: ids}
	}
	return reqs
}

// TestMembershipEveryPolicy: every registered policy routes through
// workers joining and leaving mid-run with no change to the policy: every
// request ends exactly once, the view lists exactly the live workers at
// every decision and no decision names a worker it does not list, no
// request is dispatched to a worker after it left (a change applies after
// the other events of its instant), and a worker that left finishes what
// it had. (Whether a policy sends anything to a joined worker is its own
// business: llm-d's prefix scorer, whose every hash list starts with the
// model's, keeps favouring the workers that already had requests.)
func TestMembershipEveryPolicy(t *testing.T) {
	leftAt := map[int]Time{1: 4 * Second, 3: 8 * Second, 0: 9 * Second}
	joinedAt := map[int]Time{3: 2 * Second, 4: 6 * Second}
	reqs := membershipTrace()
	for _, name := range policy.Names() {
		t.Run(name, func(t *testing.T) {
			e, _ := policy.Lookup(name)
			prm := policy.DefaultParams()
			prm.Rand = Stream(1, "policy")
			inner, err := policy.New(name, prm)
			if err != nil {
				t.Fatal(err)
			}
			cfg := routerFor(testConfig(3), e, prm)
			cfg.Membership = membershipChanges
			cfg.Pools[0].Policy = listedOnly(t, inner, live)
			res, _ := simulateWith(t, cfg, mkTrace(reqs...), nil)
			if len(res.Records) != len(reqs) || len(res.Workers) != 5 {
				t.Fatalf("%d records of %d requests, %d workers", len(res.Records), len(reqs), len(res.Workers))
			}
			used, drained := map[int]int{}, 0
			for k, r := range res.Records {
				if r.ID != k || r.Status == StatusPending {
					t.Fatalf("record %d: id %d, status %v", k, r.ID, r.Status)
				}
				if r.Worker < 0 {
					continue
				}
				used[r.Worker]++
				if at, ok := leftAt[r.Worker]; ok && r.Dispatched > at {
					t.Errorf("request %d dispatched to worker %d at %d, after it left at %d", r.ID, r.Worker, r.Dispatched, at)
				}
				if at, ok := joinedAt[r.Worker]; ok && r.Dispatched < at {
					t.Errorf("request %d dispatched to worker %d at %d, before it joined at %d", r.ID, r.Worker, r.Dispatched, at)
				}
				if at, ok := leftAt[r.Worker]; ok && r.Dispatched < at && r.End > at && r.Status == StatusOK {
					drained++
				}
			}
			t.Logf("requests per worker: %v", used)
			if drained == 0 {
				t.Errorf("no worker that left had a request in flight to finish (per worker: %v)", used)
			}
		})
	}
}

// live is the workers listed at time now (ns) in the membership run, the
// changes at now applied (at) or not.
func live(now int64, at bool) []int {
	ws := []int{0, 1, 2}
	for _, m := range membershipChanges {
		switch {
		case int64(m.At) > now, int64(m.At) == now && !at:
		case m.Leave:
			ws = slices.DeleteFunc(ws, func(w int) bool { return w == m.Worker })
		default:
			ws = append(ws, 3+slices.Index(membershipChanges, m)/2) // joins are changes 0 and 2: ids 3 and 4
		}
	}
	slices.Sort(ws)
	return ws
}

// listedOnly wraps a policy, failing the test if the view does not list
// the workers want(now, …) (at a change's instant, before or after it) or
// the policy dispatches to one it does not list.
func listedOnly(t *testing.T, p policy.Policy, want func(now int64, at bool) []int) policy.Policy {
	return policy.Func(func(r *policy.Request, v policy.View) policy.Decision {
		if ws := v.Workers(); !slices.Equal(ws, want(v.Now(), false)) && !slices.Equal(ws, want(v.Now(), true)) {
			t.Fatalf("request %d at %d: the view lists %v, want %v", r.ID, v.Now(), ws, want(v.Now(), true))
		}
		d := p.Route(r, v)
		if d.Action == policy.Dispatch && !slices.Contains(v.Workers(), d.Worker) {
			t.Fatalf("request %d: dispatched to worker %d, not among %v", r.ID, d.Worker, v.Workers())
		}
		return d
	})
}

// TestMembershipLateChangeChangesNothing: changes scheduled after the
// last request ended leave every record and the makespan as the static
// run's.
func TestMembershipLateChangeChangesNothing(t *testing.T) {
	reqs := membershipTrace()[:60]
	for _, name := range []string{"round-robin", "kv", "prefix-hash", "sglang-cache-aware"} {
		e, _ := policy.Lookup(name)
		run := func(changes []MemberChange) *Result {
			prm := policy.DefaultParams()
			prm.Rand = Stream(1, "policy")
			pol, _ := policy.New(name, prm)
			cfg := routerFor(testConfig(3), e, prm)
			cfg.Membership = changes
			res, _ := simulateWith(t, cfg, mkTrace(reqs...), pol)
			return res
		}
		static, late := run(nil), run([]MemberChange{{At: 3600 * Second, Pool: 0}, {At: 3601 * Second, Leave: true, Worker: 0}})
		if !reflect.DeepEqual(static.Records, late.Records) || static.Makespan != late.Makespan {
			t.Errorf("%s: a membership change after the run changed its records or its makespan (%d, %d)", name, static.Makespan, late.Makespan)
		}
	}
}

// TestMembershipValidation: a change must name a pool or a live worker,
// and no pool may lose its last worker.
func TestMembershipValidation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []MemberChange
		want    string
	}{
		{"no pool", []MemberChange{{At: 1, Pool: 2}}, "no pool 2"},
		{"unknown worker", []MemberChange{{At: 1, Leave: true, Worker: 7}}, "worker 7 is not in the cluster"},
		{"twice", []MemberChange{{At: 1, Leave: true, Worker: 1}, {At: 2, Leave: true, Worker: 1}}, "worker 1 is not in the cluster"},
		{"before it joined", []MemberChange{{At: 5, Pool: 0}, {At: 1, Leave: true, Worker: 2}}, "worker 2 is not in the cluster"},
		{"last worker", []MemberChange{{At: 1, Leave: true, Worker: 0}, {At: 2, Leave: true, Worker: 1}}, "pool 0's last"},
		{"negative time", []MemberChange{{At: -1, Pool: 0}}, "time -1"},
	} {
		cfg := testConfig(2)
		cfg.Membership = tc.changes
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	cfg := testConfig(2)
	cfg.Membership = []MemberChange{{At: 1, Pool: 0}, {At: 2, Leave: true, Worker: 2}, {At: 3, Leave: true, Worker: 0}}
	if err := cfg.Validate(); err != nil {
		t.Errorf("a valid membership: %v", err)
	}
}

// TestPathsAreData: a request's path comes from the Decider; the engine
// runs one hop through an aggregated pool and stops, naming the path and
// its roles, on a path it cannot run (a disaggregated one, until the KV
// transfer between pools is modelled) or one naming no pool.
func TestPathsAreData(t *testing.T) {
	base := testConfig(1)
	prefill, decode := base.Pools[0], base.Pools[0]
	prefill.Role, prefill.Policy = RolePrefill, &policy.RoundRobin{}
	decode.Role, decode.Policy = RoleDecode, &policy.RoundRobin{}
	for _, tc := range []struct {
		name    string
		decider Decider
		want    string
	}{
		{"disaggregated", Disaggregated{Prefill: 1, Decode: 2}, "path [1 2] ([prefill decode])"},
		{"no pool", DeciderFunc(func(_ *policy.Request, _ []Pool, dst []int) []int { return append(dst[:0], 5) }), "names no pool 5"},
		{"empty", DeciderFunc(func(_ *policy.Request, _ []Pool, dst []int) []int { return dst[:0] }), "empty path"},
	} {
		cfg := base
		cfg.Pools = []PoolConfig{base.Pools[0], prefill, decode}
		cfg.Decider = tc.decider
		wl, err := workload.Prepare(mkTrace(treq{at: 0, isl: 100, osl: 5}), 64)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(cfg, wl, &policy.RoundRobin{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if got := (Disaggregated{Prefill: 1, Decode: 2}).Path(&policy.Request{}, nil, nil); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("disaggregated path %v", got)
	}
	cfg := base
	cfg.Pools = []PoolConfig{base.Pools[0], prefill}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "no Decider") {
		t.Errorf("two pools without a decider: %v", err)
	}
	cfg.Pools[1].Policy = nil
	cfg.Decider = Disaggregated{}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "pool 1: no policy") {
		t.Errorf("a second pool without a policy: %v", err)
	}
}
