package policy

import (
	"fmt"
	"math/rand/v2"
)

// RayPrefixAffinity is Ray Serve's PrefixCacheAffinityRouter
// (ray-project/ray, python/ray/llm/_internal/serve/request_router/
// prefix_aware/prefix_aware_router.py; defaults imbalanced_threshold 10,
// match_rate_threshold 0.1, do_eviction False). Queue lengths are the
// router's requests in flight per replica. When max − min exceeds
// ImbalancedThreshold it routes as power of two choices. Otherwise it
// matches the prompt against its tree of routed prompts (SGLang's tree,
// ported): at a match rate of MatchRateThreshold or more the candidates
// are the replicas on the deepest matched node, below it the replicas with
// the smallest trees; the candidate with the shortest queue wins (a
// uniform draw among equal queues). The prompt is then recorded for the
// chosen replica. The tree is never evicted (upstream's default).
type RayPrefixAffinity struct {
	Rand                *rand.Rand
	ImbalancedThreshold int
	MatchRateThreshold  float64

	tree *approxTree
	p2   PowerOfTwo
	buf  []int
	m    members
}

// Route applies the prefix-affinity rule.
func (p *RayPrefixAffinity) Route(r *Request, v View) Decision {
	ws := v.Workers()
	if p.tree == nil {
		p.tree = newApproxTree(v.BlockSize())
		p.p2.Rand = p.Rand
	}
	if p.m.sync(ws) {
		p.tree.grow(IDBound(ws))
		for _, w := range p.m.gone {
			p.tree.removeTenant(w)
		}
	}
	lo, hi := v.InFlight(ws[0]), v.InFlight(ws[0])
	for _, w := range ws[1:] {
		lo, hi = min(lo, v.InFlight(w)), max(hi, v.InFlight(w))
	}
	var d Decision
	if hi-lo > p.ImbalancedThreshold {
		d = p.p2.Route(r, v)
		d.Reason = fmt.Sprintf("imbalanced (queues %d..%d): %s", lo, hi, d.Reason)
	} else {
		matched, node := p.tree.match(r.Blocks)
		rate := 0.0
		if r.InputTokens > 0 {
			rate = float64(matched*v.BlockSize()) / float64(r.InputTokens)
		}
		what := "prefix match"
		if rate < p.MatchRateThreshold || node < 0 {
			p.buf = p.tree.smallest(p.buf, ws)
			what = "smallest trees"
		} else {
			p.buf = p.tree.tenants(node, p.buf, &p.m)
		}
		d = Decision{Worker: fewest(p.buf, func(w int) float64 { return float64(v.InFlight(w)) }, p.Rand), Reason: fmt.Sprintf("%s (%.0f%% matched, %d candidates)", what, 100*rate, len(p.buf))}
	}
	p.tree.insert(r.Blocks, d.Worker, v.Now())
	return d
}

// Believed implements Believer: the leading blocks w's tree holds.
func (p *RayPrefixAffinity) Believed(w int, blocks []uint64) int {
	if p.tree == nil {
		return 0
	}
	return p.tree.held(w, blocks)
}
