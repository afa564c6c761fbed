package sim_test

import (
	"strings"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
)

func newPolicy(t *testing.T, name string, p policy.Params) policy.Policy {
	t.Helper()
	p.Rand = Stream(1, "router")
	pol, err := policy.New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

func kvConfig(n int) Config {
	cfg := testConfig(n)
	cfg.Router.KVAware = true
	return cfg
}

// A stream larger than one worker's KV, a request per millisecond: once
// the router's booked blocks exceed the worker's capacity, its ActiveLoad
// makes the busy monitor push an empty free set and kv-admission (v1.2)
// answers 503, while round-robin queues and serves everything.
func TestBurstKVAdmissionRejectsRoundRobinQueues(t *testing.T) {
	cfg := kvConfig(1)
	cfg.Pools[0].Worker.KVBlocks = 100 // 6,400 tokens
	cfg.Pools[0].Worker.MaxModelLen = 6400
	var reqs []treq
	for i := 0; i < 10; i++ {
		reqs = append(reqs, treq{at: Time(i) * Millisecond, isl: 1024, osl: 50}) // 16 blocks each, all distinct
	}
	tr := mkTrace(reqs...)
	res, _ := simulateWith(t, cfg, tr, newPolicy(t, "kv-admission", policy.DefaultParams()))
	s := Summarize(res)
	if s.Rejected["rejected-busy"] == 0 {
		t.Fatalf("kv-admission rejected nothing: %+v", s.Rejected)
	}
	if s.Completed+s.Rejected["rejected-busy"] != 10 {
		t.Errorf("conservation: completed %d + rejected %v ≠ 10", s.Completed, s.Rejected)
	}
	// Six requests book 96 ≤ 100 blocks; the seventh is admitted (the
	// monitor hears of its booking after the gate let it through) and
	// makes 112 > 100: busy, and the rest of the burst is refused.
	if s.Completed != 7 {
		t.Errorf("completed %d, want 7", s.Completed)
	}
	for _, r := range res.Records {
		if r.Status == StatusRejectedBusy && (r.Reason != "ResourceExhausted: "+policy.MsgAllBusy || r.Status.HTTPCode() != 503) {
			t.Errorf("rejection %q / %d", r.Reason, r.Status.HTTPCode())
		}
	}
	rr, _ := simulateWith(t, cfg, tr, newPolicy(t, "round-robin", policy.DefaultParams()))
	if s := Summarize(rr); s.Completed != 10 {
		t.Errorf("round-robin completed %d of 10", s.Completed)
	}
}

// TestBackpressureParksFCFSThenRejectsAtBound: Dynamo 1.2's router queue
// parks while every worker's router-tracked prefill tokens exceed θ ×
// max_num_batched_tokens and dispatches FCFS, stopping at the first head
// that must still wait (lib/kv-router/src/scheduling/queue.rs
// @c8d8e7602573:L164-232, policy.rs:L37-43); the queued-tokens bound is
// routesim's option (a v1.3 mechanism).
func TestBackpressureParksFCFSThenRejectsAtBound(t *testing.T) {
	cfg := kvConfig(1)
	cfg.Pools[0].Worker.MaxNumBatchedTokens = 256
	p := policy.DefaultParams()
	p.RouterQueueThreshold = 1 // park while the worker has > 256 prefill tokens pending
	var reqs []treq
	for i := 0; i < 6; i++ {
		reqs = append(reqs, treq{at: Time(i) * Microsecond, isl: 1000, osl: 5})
	}
	res, _ := simulateWith(t, cfg, mkTrace(reqs...), newPolicy(t, "kv-backpressure", p))
	s := Summarize(res)
	if s.Completed != 6 || s.Parked != 5 {
		t.Fatalf("completed %d, parked %d; want 6 and 5", s.Completed, s.Parked)
	}
	for i := 1; i < len(res.Records); i++ {
		a, b := res.Records[i-1], res.Records[i]
		if !(a.Dispatched < b.Dispatched) {
			t.Errorf("request %d dispatched at %d, not after request %d at %d: FCFS broken", i, b.Dispatched, i-1, a.Dispatched)
		}
		if b.QueueNs <= 0 {
			t.Errorf("request %d never waited in the router queue", i)
		}
	}
	// Bound: a request that would park with ≥ 2,000 input tokens queued is refused.
	p.MaxQueuedISLTokens = 2000
	res, _ = simulateWith(t, cfg, mkTrace(reqs...), newPolicy(t, "kv-backpressure", p))
	s = Summarize(res)
	if s.Rejected["rejected-backpressure"] != 3 || s.Completed != 3 {
		t.Fatalf("bounded queue: completed %d, rejected %v; want 3 and 3", s.Completed, s.Rejected)
	}
	want := "router backpressure: MaxQueuedIslTokensExceeded (queued_isl_tokens=2000, max_queued_isl_tokens=2000)"
	if r := res.Records[5]; r.Reason != want {
		t.Errorf("reason %q, want %q", r.Reason, want)
	}
}

// sharedPrefixTrace: one request computes a 16-block prefix, later ones
// sharing it arrive after that prefill has finished.
func sharedPrefixTrace() []treq {
	prefix := seqIDs(0, 16)
	reqs := []treq{{at: 0, isl: 16 * 512, osl: 400, ids: prefix}}
	for i := 1; i <= 6; i++ {
		ids := append(append([]int64{}, prefix...), int64(1000+i))
		reqs = append(reqs, treq{at: 500*Millisecond + Time(i)*Millisecond, isl: 16*512 + 100, osl: 2, ids: ids})
	}
	return reqs
}

func TestKVRoutingFollowsCachedPrefix(t *testing.T) {
	cfg := kvConfig(4)
	res, _ := simulateWith(t, cfg, mkTrace(sharedPrefixTrace()...), newPolicy(t, "kv", policy.DefaultParams()))
	home := res.Records[0].Worker
	for _, r := range res.Records[1:] {
		if r.Worker != home {
			t.Errorf("request %d went to worker %d, not to worker %d holding its prefix", r.ID, r.Worker, home)
		}
		if r.CachedTokens < 16*512-64 {
			t.Errorf("request %d: %d cached tokens", r.ID, r.CachedTokens)
		}
	}
}

func TestStaleKVEventsReduceCacheHits(t *testing.T) {
	fresh := kvConfig(4)
	stale := kvConfig(4)
	stale.Router.KVEventLag = 10 * Second // the router never learns in time
	tr := mkTrace(sharedPrefixTrace()...)
	a, _ := simulateWith(t, fresh, tr, newPolicy(t, "kv", policy.DefaultParams()))
	b, _ := simulateWith(t, stale, tr, newPolicy(t, "kv", policy.DefaultParams()))
	ha, hb := Summarize(a).PrefixHitRate, Summarize(b).PrefixHitRate
	if !(hb < ha) {
		t.Errorf("hit rate with stale events %.3f, fresh %.3f: staleness should cost hits", hb, ha)
	}
}

func TestRetriesAfterRejection(t *testing.T) {
	cfg := kvConfig(1)
	cfg.Pools[0].Worker.KVBlocks = 100
	cfg.Pools[0].Worker.MaxModelLen = 6400
	cfg.Router.Retries = 3
	cfg.Router.RetryBackoff = 100 * Millisecond
	var reqs []treq
	for i := 0; i < 10; i++ {
		reqs = append(reqs, treq{at: Time(i) * Millisecond, isl: 1024, osl: 20})
	}
	res, _ := simulateWith(t, cfg, mkTrace(reqs...), newPolicy(t, "kv-admission", policy.DefaultParams()))
	s := Summarize(res)
	if s.Retries == 0 || s.RetriedRejections["rejected-busy"] != s.Retries {
		t.Fatalf("retries %d, retried rejections %v", s.Retries, s.RetriedRejections)
	}
	if s.Completed+s.Rejected["rejected-busy"] != s.Offered {
		t.Errorf("conservation with retries: %d + %v ≠ %d", s.Completed, s.Rejected, s.Offered)
	}
	if s.Completed <= 7 {
		t.Errorf("retries served no extra request: completed %d", s.Completed)
	}
	for _, r := range res.Records {
		if len(r.Attempts) > 3 {
			t.Errorf("request %d tried %d times with --retry 3", r.ID, len(r.Attempts)+1)
		}
		for k := 1; k < len(r.Attempts); k++ {
			if gap, prev := r.Attempts[k].At-r.Attempts[k-1].At, Time(100*Millisecond)<<(k-1); gap < prev {
				t.Errorf("request %d: retry %d after %d ns, backoff should be ≥ %d", r.ID, k, gap, prev)
			}
		}
		if r.Status == StatusOK && len(r.Attempts) > 0 && r.TTFT() < 100*Millisecond {
			t.Errorf("request %d: TTFT %d counts from its last attempt, not its arrival", r.ID, r.TTFT())
		}
	}
}

type decisionLog []policy.Decision

func (d *decisionLog) Decision(_ Time, _, _ int, dec policy.Decision) { *d = append(*d, dec) }

func TestDecisionsAreReported(t *testing.T) {
	cfg := kvConfig(3)
	var log decisionLog
	cfg.Decisions = &log
	simulateWith(t, cfg, mkTrace(sharedPrefixTrace()...), newPolicy(t, "kv", policy.DefaultParams()))
	if len(log) != 7 {
		t.Fatalf("%d decisions for 7 requests", len(log))
	}
	for _, d := range log {
		if len(d.Scores) != 3 || !strings.Contains(d.Reason, "cost") {
			t.Errorf("decision %+v lacks per-worker scores or a reason", d)
		}
	}
}

func TestEverySignalAndPolicyConserves(t *testing.T) {
	for _, name := range policy.Names() {
		for _, engine := range []bool{false, true} {
			cfg := kvConfig(3)
			cfg.Pools[0].Worker.KVBlocks = 80
			cfg.Pools[0].Worker.MaxModelLen = 5000
			cfg.Router.EngineSignal = engine
			cfg.Router.MetricsLag = 5 * Millisecond
			cfg.Router.KVEventLag = Millisecond
			p := policy.DefaultParams()
			p.RouterQueueThreshold = 0.5
			if engine { // the busy monitor then also reads kv_used_blocks
				p.ActiveDecodeBlocksThreshold = 0.5
			}
			reqs := randomTrace(Stream(9, "t"), 120)
			res, _ := simulateWith(t, cfg, mkTrace(*reqs...), newPolicy(t, name, p))
			s := Summarize(res)
			total := s.Completed
			for _, n := range s.Rejected {
				total += n
			}
			if total != s.Offered {
				t.Errorf("%s (engine %v): %d ended of %d", name, engine, total, s.Offered)
			}
		}
	}
}

// TestV14ExcludesOverloadedWorkers: Dynamo 1.4 with a decode threshold set
// skips the workers whose published kv_used_blocks exceed it (round-robin
// over the rest, #9688) and refuses with 529 when none is left; every
// request still ends exactly once.
func TestV14ExcludesOverloadedWorkers(t *testing.T) {
	cfg := testConfig(2)
	cfg.Pools[0].Worker.KVBlocks = 100
	cfg.Pools[0].Worker.MaxModelLen = 6400
	cfg.Router.OverloadCode = 529
	p := policy.DefaultParams()
	p.DynamoVersion, p.ActiveDecodeBlocksThreshold = "1.4.0", 0.3
	e, _ := policy.Lookup("round-robin")
	cfg = routerFor(cfg, e, p)
	if !cfg.Router.EngineSignal {
		t.Fatal("the monitor needs the engines' published usage")
	}
	var reqs []treq
	for i := 0; i < 40; i++ {
		reqs = append(reqs, treq{at: Time(i) * 2 * Millisecond, isl: 1024, osl: 40})
	}
	res, _ := simulateWith(t, cfg, mkTrace(reqs...), newPolicy(t, "round-robin", p))
	s := Summarize(res)
	if s.Rejected["rejected-busy"] == 0 || s.Completed == 0 {
		t.Fatalf("completed %d, rejected %v: want some served and some refused", s.Completed, s.Rejected)
	}
	for _, r := range res.Records {
		if r.Status == StatusRejectedBusy && (r.Reason != "Service temporarily overloaded" || r.HTTPCode != 529) {
			t.Fatalf("refusal %q / %d", r.Reason, r.HTTPCode)
		}
	}
}
