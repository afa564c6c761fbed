package policy

import (
	"math"
	"testing"
)

// The worked examples below follow the upstream decision rules line by
// line; each names the function it re-derives.

// blocks64 builds a prompt of the given block hashes at block size 64.
func blocks64(hs ...uint64) *Request {
	return &Request{InputTokens: 64 * len(hs), Blocks: hs}
}

func route(t *testing.T, p Policy, r *Request, v View, want int) Decision {
	t.Helper()
	d := p.Route(r, v)
	if d.Action != Dispatch || d.Worker != want {
		t.Fatalf("routed to %d (%v, %q), want %d", d.Worker, d.Action, d.Reason, want)
	}
	return d
}

// TestSGLangCacheAwareWorkedExample re-derives cache_aware.rs
// select_worker with main.rs's defaults (0.3, 64, 1.5).
func TestSGLangCacheAwareWorkedExample(t *testing.T) {
	v := newFakeView(2)
	p := mustNew("sglang-cache-aware", params(1))
	route(t, p, blocks64(1, 2, 3), v, 0) // cold: both trees empty, the first smallest
	route(t, p, blocks64(1, 2, 3), v, 0) // 100 % > 30 %: the matched tenant
	route(t, p, blocks64(7, 8), v, 1)    // 0 %: smallest tree (worker 1, 0 characters)
	// 1 block of 4 matched = 25 % ≤ 30 %: smallest tree, now worker 1 (2 nodes < 3).
	route(t, p, blocks64(1, 9, 10, 11), v, 1)
	// Imbalance needs both: max − min > 64 AND max > 1.5 × min.
	for _, c := range []struct {
		loads [2]int
		want  int
	}{
		{[2]int{70, 2}, 1},    // 68 > 64, 70 > 3: shortest queue, despite the match on 0
		{[2]int{120, 60}, 0},  // 60 ≤ 64: balanced, follows the cache
		{[2]int{210, 140}, 0}, // 70 > 64 but 210 > 210 is false: balanced
		{[2]int{211, 140}, 1}, // both hold: shortest queue
	} {
		v.inFlight[0], v.inFlight[1] = c.loads[0], c.loads[1]
		route(t, p, blocks64(1, 2, 3), v, c.want)
	}
}

// TestSGLangTreeEviction re-derives tree.rs evict_tenant_by_size: least
// recently used leaves go first, a parent becomes a leaf once its last
// child for that tenant is gone.
func TestSGLangTreeEviction(t *testing.T) {
	v := newFakeView(2)
	prm := params(1)
	prm.MaxTreeSize = 64 * CharsPerToken // one block per worker after eviction
	p := mustNew("sglang-cache-aware", prm).(*SGLangCacheAware)
	v.now = 0
	route(t, p, blocks64(1, 2, 3), v, 0)
	v.now = 1e9
	route(t, p, blocks64(1, 2, 3), v, 0) // refreshes 1, 2, 3 at 1 s
	if got := p.tree.chars[0]; got != 3*64*CharsPerToken {
		t.Fatalf("worker 0 tree %d characters, want 3 blocks", got)
	}
	v.now = 121e9 // past the 120 s interval: the tree is cut to one block
	route(t, p, blocks64(5), v, 1)
	if got := p.tree.chars[0]; got != 64*CharsPerToken {
		t.Fatalf("after eviction worker 0 keeps %d characters, want one block", got)
	}
	if m, _ := p.tree.match([]uint64{1, 2, 3}); m != 1 {
		t.Fatalf("after eviction %d blocks still match, want the root block only", m)
	}
}

// TestLLMDWorkedExample re-derives the prefix plugin's Score and
// matchLongestPrefix, queue.go and kvcache_utilization.go with the
// default weights 3/2/2.
func TestLLMDWorkedExample(t *testing.T) {
	v := newFakeView(3)
	v.block = 16
	p := mustNew("llm-d", params(1)).(*LLMD)
	p.Route(&Request{InputTokens: 8}, v) // no full block: nothing indexed
	p.index.add([]uint64{modelHash, 1, 2}, 0)
	p.index.add([]uint64{modelHash, 1, 2, 3, 4}, 1)
	v.waiting = []int{0, 4, 2}
	v.engineUsed = []int{500, 150, 0}
	// hashes [model 1 2 3 4]: prefix 3/5, 5/5, 0; queue (4−q)/4: 1, 0, .5;
	// kv 1 − used/1000: .5, .85, 1. Totals 4.8, 4.7, 3.
	d := route(t, p, &Request{InputTokens: 64, Blocks: []uint64{1, 2, 3, 4}}, v, 0)
	for w, want := range []float64{4.8, 4.7, 3} {
		if math.Abs(-d.Scores[w]-want) > 1e-9 {
			t.Errorf("worker %d total %g, want %g", w, -d.Scores[w], want)
		}
	}
	// Equal queues score 1 each (the neutral value), not 0.
	v.waiting = []int{3, 3, 3}
	d = p.Route(&Request{InputTokens: 8}, v)
	if got := -d.Scores[2]; math.Abs(got-(2+2)) > 1e-9 {
		t.Errorf("worker 2 with equal queues scores %g, want 4 (queue 1×2 + kv 1×2)", got)
	}
}

// TestPrefixHashWorkedExample re-derives KubeAI v0.21.0's balance_chwbl.go
// chwblGetAddr (line 14) and chwblLoadOK (line 152): load ≤ (total+1)/n ×
// 1.25.
func TestPrefixHashWorkedExample(t *testing.T) {
	if !loadOK(1, 3, 3, 1.25) || loadOK(2, 3, 3, 1.25) || !loadOK(9, 0, 3, 1.25) || !loadOK(0, 1, 32, 1.25) {
		t.Fatal("chwblLoadOK: 1 ≤ 4/3·1.25 holds, 2 does not; an idle pool always accepts; an idle worker is always within the bound")
	}
	v := newFakeView(3)
	p := mustNew("prefix-hash", params(1)).(*PrefixHash)
	r := blocks64(42, 43)
	first := p.Route(r, v).Worker // idle: the key's own ring point
	v.inFlight[first] = 3
	second := p.Route(r, v).Worker
	if second == first {
		t.Fatalf("worker %d over the bound still chosen", first)
	}
	// The walk takes the next point of another worker clockwise.
	start := ringSearch(p.ring, r.Blocks[0])
	for i := 0; ; i++ {
		if w := int(p.ring[(start+i)%len(p.ring)].w); w != first {
			if w != second {
				t.Fatalf("chose %d, the ring's next worker is %d", second, w)
			}
			break
		}
	}
}

// TestSessionAffinityWorkedExample re-derives SessionRouter.route_request
// and _qps_routing.
func TestSessionAffinityWorkedExample(t *testing.T) {
	v := newFakeView(3)
	p := mustNew("session-affinity", params(1))
	for want := 0; want < 3; want++ { // workers without requests first, in order
		route(t, p, blocks64(1), v, want)
	}
	v.now = 30e9
	route(t, p, blocks64(1), v, 0) // all at 1 in the window: the first lowest
	v.now = 61e9                   // the first three left the 60 s window
	route(t, p, blocks64(1), v, 1)
	s := &Request{Session: "conversation-7", InputTokens: 64, Blocks: []uint64{1}}
	w := p.Route(s, v).Worker
	for k := 0; k < 5; k++ {
		v.inFlight[w] += 10 // load is ignored for a session
		route(t, p, s, v, w)
	}
}

// TestPrefixAwareWorkedExample re-derives HashTrie.longest_prefix_match:
// candidates narrow while some worker sent the prefix so far.
func TestPrefixAwareWorkedExample(t *testing.T) {
	v := newFakeView(3)
	p := mustNew("prefix-aware", params(1)).(*PrefixAware)
	p.Route(blocks64(), v) // initialise
	for _, h := range []uint64{1, 2, 3} {
		s := p.trie[h]
		s.add(0)
		p.trie[h] = s
	}
	for _, h := range []uint64{1, 2} {
		s := p.trie[h]
		s.add(1)
		p.trie[h] = s
	}
	route(t, p, blocks64(1, 2, 3, 4), v, 0) // 1,2: {0,1}; 3: {0}; 4 absent
	seen := map[int]bool{}
	for k := 0; k < 40; k++ {
		seen[p.Route(blocks64(1, 99+uint64(k)), v).Worker] = true // 1: {0,1}, then absent
	}
	if !seen[0] || !seen[1] || seen[2] {
		t.Fatalf("one shared block should draw among workers 0 and 1 only, drew %v", seen)
	}
}

// TestRayPrefixAffinityWorkedExample re-derives
// _prefix_match_best_replicas with imbalanced_threshold 10 and
// match_rate_threshold 0.1.
func TestRayPrefixAffinityWorkedExample(t *testing.T) {
	v := newFakeView(2)
	p := mustNew("ray-prefix-affinity", params(1))
	w0 := p.Route(blocks64(1, 2, 3, 4), v).Worker // cold: smallest trees {0,1}, equal queues: drawn
	v.inFlight = []int{0, 0}
	v.inFlight[w0] = 3 // balanced (3 ≤ 10): 4 of 5 blocks = 80 % ≥ 10 % → the tenant, busier or not
	route(t, p, &Request{InputTokens: 320, Blocks: []uint64{1, 2, 3, 4, 5}}, v, w0)
	route(t, p, blocks64(9), v, 1-w0) // 0 % matched: the smallest tree
	v.inFlight = []int{0, 0}
	v.inFlight[w0] = 12 // imbalanced: power of two over both workers → the shorter queue
	route(t, p, blocks64(1, 2, 3, 4), v, 1-w0)
}

// TestAIBrixPrefixCacheWorkedExample re-derives prefix_cache.go Route,
// getTargetPodOnLoadImbalance and getTargetPodFromMatchedPods.
func TestAIBrixPrefixCacheWorkedExample(t *testing.T) {
	v := newFakeView(3)
	p := mustNew("aibrix-prefix-cache", params(1)).(*AIBrixPrefixCache)
	v.inFlight = []int{1, 2, 20} // the docs' example: 20 − 1 > 8 → least request
	route(t, p, blocks64(1, 2, 3, 4), v, 0)
	p.add([]uint64{1, 2}, 1, 0)
	// pod 0 holds 1..4 (100 %), pod 1 holds 1,2 (50 %). Running 4, 2, 3:
	// mean 3, σ = √(2/3) ≈ 0.816; pod 0 at 4 > 3.816 is skipped, pod 1 wins.
	v.inFlight = []int{4, 2, 3}
	route(t, p, blocks64(1, 2, 3, 4), v, 1)
	// Now both hold 1..4 (100 %): fewer running requests first. Running
	// 3, 4, 3: mean 3.33, σ 0.47, bound 3.8: pod 0.
	v.inFlight = []int{3, 4, 3}
	route(t, p, blocks64(1, 2, 3, 4), v, 0)
}

// TestLLMDPreciseScorerNormalisesByTheBestWorker: the precise prefix
// scorer reads the router's KV-event index and scores overlap / max
// overlap (llm-d's precise-prefix-cache-scorer).
func TestLLMDPreciseScorerNormalisesByTheBestWorker(t *testing.T) {
	v := newFakeView(3)
	prm := params(1)
	prm.Scorers = "precise-prefix-cache:2"
	e, _ := Lookup("llm-d")
	if !e.NeedsKV(prm) || e.NeedsKV(params(1)) {
		t.Fatal("llm-d needs the KV-event index with the precise scorer only")
	}
	v.overlap = []int{0, 3, 6}
	d := route(t, mustNew("llm-d", prm), blocks64(1, 2, 3, 4, 5, 6), v, 2)
	for w, want := range []float64{0, 1, 2} {
		if got := -d.Scores[w]; math.Abs(got-want) > 1e-12 {
			t.Errorf("worker %d scores %g, want %g", w, got, want)
		}
	}
}

func TestParseScorersRejectsBadSpecs(t *testing.T) {
	for _, bad := range []string{"", "queue:x", "queue:-1", "queue:NaN", "prefix:1", "queue:1,queue:2", ","} {
		if _, err := ParseScorers(bad); err == nil {
			t.Errorf("ParseScorers(%q) accepted", bad)
		}
	}
	sc, err := ParseScorers(" queue , kv-cache-utilization:0.5")
	if err != nil || len(sc) != 2 || sc[0] != (Scorer{"queue", 1}) || sc[1] != (Scorer{"kv-cache-utilization", 0.5}) {
		t.Errorf("ParseScorers = %v, %v", sc, err)
	}
}

// Every router that keeps its own index of routed prompts says what it
// believes each worker holds (policy.Believer).
func TestApproximateRoutersExposeTheirBelief(t *testing.T) {
	for _, name := range []string{"sglang-cache-aware", "llm-d", "prefix-aware", "ray-prefix-affinity", "aibrix-prefix-cache"} {
		p := mustNew(name, params(1))
		b, ok := p.(Believer)
		if !ok {
			t.Errorf("%s does not implement Believer", name)
			continue
		}
		v := newFakeView(2)
		r := blocks64(1, 2, 3)
		w := p.Route(r, v).Worker
		if got := b.Believed(w, r.Blocks); got != 3 {
			t.Errorf("%s: believes worker %d holds %d of the 3 blocks it was just sent", name, w, got)
		}
		if got := b.Believed(1-w, r.Blocks); got != 0 {
			t.Errorf("%s: believes worker %d, never sent anything, holds %d blocks", name, 1-w, got)
		}
	}
}
