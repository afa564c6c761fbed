package policy

import (
	"fmt"
	"math"
)

// SGLangCacheAware is the SGLang model gateway's cache_aware policy
// (sgl-project/sglang, sgl-router/src/policies/cache_aware.rs at
// 026f853ba7ae; defaults from sgl-router/src/main.rs at 0129b029fc78).
// Load is the router's own count of requests in flight per worker. When
// the load is imbalanced — max − min > BalanceAbsThreshold and max >
// BalanceRelThreshold × min — the request goes to the least-loaded worker
// (the first, as Rust's min_by_key). Otherwise the approximate tree of
// prompts the router sent is searched: if the matched share of the prompt
// exceeds CacheThreshold the request goes to a worker on the deepest
// matched node, else to the worker with the smallest tree. Either way the
// prompt is inserted into the chosen worker's tree. Every
// EvictionInterval the trees are cut back to MaxTreeSize characters per
// worker, least recently used leaves first. Defaults differ between
// releases (sglang-router's first README documents a 0.5 cache
// threshold); routesim takes the Rust gateway's at the commit above.
//
// Differences from upstream, all forced by routesim knowing blocks rather
// than text: the tree's unit is a KV block of the workers' block size
// (upstream: characters), so a match ends at a block boundary; sizes count
// CharsPerToken characters per token; on a node several workers share,
// upstream takes the first tenant of a hash map (a fixed but arbitrary
// preference) and routesim the lowest-numbered worker, as it does for ties
// among the smallest trees.
type SGLangCacheAware struct {
	CacheThreshold      float64
	BalanceAbsThreshold int
	BalanceRelThreshold float64
	EvictionInterval    int64 // ns; 0 = never
	MaxTreeSize         int64 // characters

	tree      *approxTree
	nextEvict int64
	buf       []int
	m         members
}

// Route applies the cache-aware rule.
func (p *SGLangCacheAware) Route(r *Request, v View) Decision {
	ws := v.Workers()
	if p.tree == nil {
		p.tree = newApproxTree(v.BlockSize())
		p.nextEvict = p.EvictionInterval
	}
	if p.m.sync(ws) {
		p.tree.grow(IDBound(ws))
		for _, w := range p.m.gone {
			p.tree.removeTenant(w)
		}
	}
	now := v.Now()
	if p.EvictionInterval > 0 && now >= p.nextEvict {
		p.tree.evict(p.MaxTreeSize)
		p.nextEvict += (now-p.nextEvict)/p.EvictionInterval*p.EvictionInterval + p.EvictionInterval
	}
	lo, hi, least := math.MaxInt, -1, 0
	for _, w := range ws {
		l := v.InFlight(w)
		if l < lo {
			lo, least = l, w
		}
		hi = max(hi, l)
	}
	if hi-lo > p.BalanceAbsThreshold && float32(hi) > float32(lo)*float32(p.BalanceRelThreshold) {
		p.tree.insert(r.Blocks, least, now)
		return Decision{Worker: least, Reason: fmt.Sprintf("imbalanced (loads %d..%d): shortest queue", lo, hi)}
	}
	matched, node := p.tree.match(r.Blocks)
	rate := 0.0
	if r.InputTokens > 0 {
		rate = float64(matched*v.BlockSize()) / float64(r.InputTokens)
	}
	w := -1
	if node >= 0 {
		// prefix_match refreshes the matched tenant's path, hit or miss.
		p.buf = p.tree.tenants(node, p.buf, &p.m)
		w = p.buf[0]
		p.tree.touch(node, w, now)
	}
	var reason string
	if w >= 0 && float32(rate) > float32(p.CacheThreshold) {
		reason = fmt.Sprintf("cache hit: %.0f%% of the prompt matched", 100*rate)
	} else {
		p.buf = p.tree.smallest(p.buf, ws)
		w = p.buf[0]
		reason = fmt.Sprintf("cache miss (%.0f%% matched): smallest tree", 100*rate)
	}
	p.tree.insert(r.Blocks, w, now)
	return Decision{Worker: w, Reason: reason}
}

// Believed implements Believer: the leading blocks w's tree holds.
func (p *SGLangCacheAware) Believed(w int, blocks []uint64) int {
	if p.tree == nil {
		return 0
	}
	return p.tree.held(w, blocks)
}
