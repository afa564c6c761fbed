package sim

import (
	"testing"

	"github.com/routesim/routesim/policy"
)

// v12 is Dynamo 1.2.0's busy monitor (router_args.py@c8d8e7602573:L114-149).
var v12 = policy.Admission{DecodeBlocksFrac: 1, PrefillTokens: 10_000_000, PrefillTokensFrac: 10, Gate: policy.FleetGate, ReconcileNs: 5e9}

func testMonitor(adm policy.Admission, n int) *monitor {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = &worker{cfg: WorkerConfig{KVBlocks: 100, MaxNumBatchedTokens: 2048}}
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return newMonitor(adm, ws, ids, 0, 0, 0)
}

// TestMonitorThresholds: each check is a strict > (worker_monitor.rs
// @c8d8e7602573:L127-128 decode, L265-283 prefill, `(frac*max) as u64`).
func TestMonitorThresholds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d, u, p int
		busy    bool
	}{
		{"booked blocks at the total", 100, 0, 0, false},
		{"booked blocks over", 101, 0, 0, true},
		{"engine blocks at the total", 0, 100, 0, false},
		{"engine blocks over (a threshold under 1 only, in practice)", 0, 101, 0, true},
		{"prefill at 10 × 2048", 0, 0, 20480, false},
		{"prefill over 10 × 2048", 0, 0, 20481, true},
	} {
		m := testMonitor(v12, 1)
		m.d[0], m.u[0], m.p[0] = tc.d, tc.u, tc.p
		if got := m.busyOf(0); got != tc.busy {
			t.Errorf("%s: busy %v, want %v", tc.name, got, tc.busy)
		}
	}
	abs := testMonitor(policy.Admission{PrefillTokens: 5000, Gate: policy.FleetGate}, 1)
	abs.p[0] = 5000
	if abs.busyOf(0) {
		t.Error("absolute prefill threshold: 5000 is not over 5000")
	}
	abs.p[0] = 5001
	if !abs.busyOf(0) {
		t.Error("absolute prefill threshold: 5001 is over 5000")
	}
	frac := testMonitor(policy.Admission{PrefillTokensFrac: 1.5, Gate: policy.FleetGate}, 1)
	frac.mnbt[0] = 2047 // ⌊1.5 × 2047⌋ = 3070
	frac.p[0] = 3071
	if !frac.busyOf(0) {
		t.Error("the fraction's threshold is floored: 3071 > ⌊3070.5⌋")
	}
}

// TestMonitorLatch: the decode check is latched on the router's D and the
// engine's U (L157-194): set when either is over, cleared only when the
// last D and the last U are both at or under.
func TestMonitorLatch(t *testing.T) {
	m := testMonitor(v12, 1)
	steps := []struct {
		msg  monMsg
		busy bool
	}{
		{monMsg{a: 101}, true},               // D over: set
		{monMsg{engine: true, a: 101}, true}, // U over too
		{monMsg{a: 50}, true},                // D back under, U still over: stays set
		{monMsg{engine: true, a: 99}, false}, // both under: cleared
		{monMsg{engine: true, a: 101}, true}, // U alone sets it
	}
	for i, s := range steps {
		m.apply(s.msg, Time(i))
		if m.busy[0] != s.busy {
			t.Fatalf("step %d (%+v): busy %v, want %v", i, s.msg, m.busy[0], s.busy)
		}
	}
}

// TestMonitorPushAndReset: the free set is pushed only when the busy set
// changes (worker_monitor.rs@c8d8e7602573:L659-664) and reset to every
// worker by the client every 5 s (client.rs@c8d8e7602573:L84-85,L278-325):
// an all-busy fleet refuses until the next reset, then admits until the
// busy set changes again.
func TestMonitorPushAndReset(t *testing.T) {
	m := testMonitor(v12, 2)
	m.phase = 1 * Second // resets at 1 s, 6 s, 11 s, …
	busy := func(w int, at Time) { m.apply(monMsg{w: int32(w), a: 200}, at) }
	free := func(w int, at Time) { m.apply(monMsg{w: int32(w), a: 0}, at) }
	type probe struct {
		at      Time
		refuses bool
	}
	check := func(what string, ps ...probe) {
		t.Helper()
		for _, p := range ps {
			if got := m.refuses(p.at); got != p.refuses {
				t.Errorf("%s, at %v: refuses %v, want %v", what, p.at, got, p.refuses)
			}
		}
	}
	check("nothing busy", probe{0, false}, probe{3 * Second, false})
	busy(0, 2*Second)
	check("one of two busy", probe{2 * Second, false})
	busy(1, 3*Second)
	check("both busy, pushed after the 1 s reset", probe{3 * Second, true}, probe{5999 * Millisecond, true})
	check("the 6 s reset: every worker free again", probe{6 * Second, false}, probe{9 * Second, false})
	busy(1, 7*Second) // a message that changes nothing pushes nothing
	check("a message without a change re-pushes nothing", probe{8 * Second, false})
	free(0, 9*Second)
	busy(0, 10*Second)
	check("the busy set changed: all busy pushed again", probe{10 * Second, true}, probe{10999 * Millisecond, true}, probe{11 * Second, false})
	if m.overloaded(0) != true || m.overloaded(1) != true {
		t.Error("overloaded is the pushed busy set")
	}
}

// TestBookBeforeGateAndRelease: v1.2 books the chosen worker before the
// gate and releases the booking on refusal (push_router.rs
// @c8d8e7602573:L658-706): two ActiveLoads, and the router's load after a
// refusal is what it was before.
func TestBookBeforeGateAndRelease(t *testing.T) {
	ws := []*worker{{cfg: WorkerConfig{KVBlocks: 100, MaxNumBatchedTokens: 2048, BlockSize: 64}}}
	c := &cluster{workers: ws, poolOf: []int32{0}}
	rt := &Router{}
	rt.router = *newRouter(ws, RouterConfig{KVAware: true}, c.eng.Now)
	c.pools = []Pool{{Workers: rt.ids, Router: rt}}
	rt.mon = newMonitor(v12, ws, rt.ids, 0, 0, 0)
	rt.mon.busy[0], rt.mon.nBusy, rt.mon.pushed = true, 1, 0
	blocks := []uint64{1, 2, 3}
	before := [2]int{rt.ActiveBlocks(0), rt.prefill[0]}
	booked := rt.book(0, 192, blocks)
	c.activeLoad(0)
	if !c.gateRefuses(rt) {
		t.Fatal("an all-busy pushed free set did not refuse")
	}
	rt.firstToken(0, booked)
	rt.finish(0, blocks)
	c.activeLoad(0)
	q := rt.mon.queues[0]
	if len(q) != 2 || q[0].a != 3 || q[0].b != 192 || q[1].a != 0 || q[1].b != 0 {
		t.Errorf("ActiveLoads %+v, want the booking (3 blocks, 192 tokens) then its release", q)
	}
	if after := [2]int{rt.ActiveBlocks(0), rt.prefill[0]}; after != before {
		t.Errorf("router load %v after the refusal, %v before", after, before)
	}
}
