package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The property tests drive each upstream router and a plain reference
// transcription of its rule side by side over random prompts (families of
// shared prefixes) and random loads, feeding both the router's choice, and
// check every choice is one the reference allows.

// promptGen draws prompts whose blocks share prefixes: family f's first k
// blocks are common, later ones vary.
func promptGen(rng *rand.Rand, bs int) *Request {
	f, n, k, variant := rng.IntN(4), 1+rng.IntN(8), rng.IntN(6), rng.Uint64N(3)
	blocks := make([]uint64, n)
	h := uint64(f + 1)
	for i := range blocks {
		tok := uint64(i)
		if i >= k {
			tok += 1000 * (variant + 1)
		}
		h = mix64(h, tok)
		blocks[i] = h
	}
	return &Request{ID: rng.IntN(1 << 20), InputTokens: n*bs + rng.IntN(bs), Blocks: blocks}
}

// drive runs steps decisions; ref returns the allowed workers for the
// request given the view, then is told the choice.
func drive(t *testing.T, name string, prm Params, bs int, ref func(r *Request, v *fakeView) []int, chosen func(r *Request, v *fakeView, w int)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	const n = 4
	v := newFakeView(n)
	v.block = bs
	pol := mustNew(name, prm)
	for step := 0; step < 3000; step++ {
		v.now += int64(rng.IntN(3e9))
		for w := 0; w < n; w++ {
			v.inFlight[w] = rng.IntN(1 + rng.IntN(30))
			v.waiting[w] = rng.IntN(5)
			v.engineUsed[w] = rng.IntN(v.capacity[w] + 1)
		}
		r := promptGen(rng, bs)
		if rng.IntN(3) == 0 {
			r.Session = string(rune('a' + rng.IntN(6)))
		}
		allowed := ref(r, v)
		d := pol.Route(r, v)
		if !slices.Contains(allowed, d.Worker) {
			t.Fatalf("%s step %d: chose %d (%q), the reference allows %v", name, step, d.Worker, d.Reason, allowed)
		}
		chosen(r, v, d.Worker)
	}
}

func argminSet(n int, f func(w int) float64) []int {
	var out []int
	lo := math.Inf(1)
	for w := 0; w < n; w++ {
		switch x := f(w); {
		case x < lo:
			lo, out = x, []int{w}
		case x == lo:
			out = append(out, w)
		}
	}
	return out
}

func TestSGLangCacheAwareMatchesReference(t *testing.T) {
	prm := params(3)
	prm.EvictionInterval = 0
	prm.BalanceAbsThreshold, prm.BalanceRelThreshold = 12, 1.5
	held := make([]map[uint64]bool, 4)
	for w := range held {
		held[w] = map[uint64]bool{}
	}
	ref := func(r *Request, v *fakeView) []int {
		lo, hi := slices.Min(v.inFlight), slices.Max(v.inFlight)
		if hi-lo > prm.BalanceAbsThreshold && float32(hi) > float32(lo)*float32(prm.BalanceRelThreshold) {
			return []int{slices.Index(v.inFlight, lo)}
		}
		m, tenant := 0, -1
		for i, h := range r.Blocks {
			owner := -1
			for w := range held {
				if held[w][h] {
					owner = w
					break
				}
			}
			if owner < 0 {
				break
			}
			m, tenant = i+1, owner
		}
		if tenant >= 0 && float32(float64(m*v.block)/float64(r.InputTokens)) > float32(prm.CacheThreshold) {
			return []int{tenant}
		}
		return argminSet(4, func(w int) float64 { return float64(len(held[w])) })[:1]
	}
	drive(t, "sglang-cache-aware", prm, 64, ref, func(r *Request, _ *fakeView, w int) {
		for _, h := range r.Blocks {
			held[w][h] = true
		}
	})
}

func TestLLMDMatchesReference(t *testing.T) {
	prm := params(3)
	prm.LRUCapacityPerServer = 6 // 6 × 16 tokens = 6 blocks of 16
	prm.MaxPrefixBlocksToMatch = 5
	lru := make([][]uint64, 4)
	hashesOf := func(r *Request) []uint64 {
		b := r.Blocks[:min(len(r.Blocks), 5)]
		if len(b) == 0 {
			return nil
		}
		return append([]uint64{modelHash}, b...)
	}
	ref := func(r *Request, v *fakeView) []int {
		hs := hashesOf(r)
		count := make([]int, 4)
		for _, h := range hs {
			any := false
			for w := range lru {
				if slices.Contains(lru[w], h) {
					count[w]++
					any = true
				}
			}
			if !any {
				break
			}
		}
		lo, hi := slices.Min(v.waiting), slices.Max(v.waiting)
		total := make([]float64, 4)
		for w := range total {
			if len(hs) > 0 {
				total[w] += 3 * float64(count[w]) / float64(len(hs))
			}
			q := 1.0
			if hi > lo {
				q = float64(hi-v.waiting[w]) / float64(hi-lo)
			}
			total[w] += 2*q + 2*(1-float64(v.engineUsed[w])/float64(v.capacity[w]))
		}
		best := slices.Max(total)
		var out []int
		for w, x := range total {
			if x >= best-1e-9 {
				out = append(out, w)
			}
		}
		return out
	}
	drive(t, "llm-d", prm, 16, ref, func(r *Request, _ *fakeView, w int) {
		for _, h := range hashesOf(r) {
			if i := slices.Index(lru[w], h); i >= 0 {
				lru[w] = slices.Delete(lru[w], i, i+1)
			} else if len(lru[w]) == 6 {
				lru[w] = lru[w][1:]
			}
			lru[w] = append(lru[w], h)
		}
	})
}

// ringOrder lists the workers met walking clockwise from key: every
// point's clockwise distance, nearest first.
func ringOrder(n, replicas int, seed, key uint64) []int {
	type pt struct {
		d, h uint64
		w    int
	}
	var pts []pt
	for w := 0; w < n; w++ {
		for k := 0; k < replicas; k++ {
			h := mix64(mix64(seed, uint64(w)+1), uint64(k)+1)
			pts = append(pts, pt{h - key, h, w})
		}
	}
	slices.SortFunc(pts, func(a, b pt) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return a.w - b.w
	})
	out := make([]int, len(pts))
	for i, p := range pts {
		out[i] = p.w
	}
	return out
}

func TestPrefixHashMatchesReference(t *testing.T) {
	prm := params(3)
	prm.Replication = 16
	ref := func(r *Request, v *fakeView) []int {
		key := mix64(0x7072656669780000, uint64(r.ID))
		if len(r.Blocks) > 0 {
			key = r.Blocks[0] // 100 characters = 25 tokens: the first 64-token block
		}
		total := 0
		for _, l := range v.inFlight {
			total += l
		}
		order := ringOrder(4, 16, 0x6b75626561690000, key)
		for _, w := range order {
			if total == 0 || float64(v.inFlight[w]) <= float64(total+1)/4*1.25 {
				return []int{w}
			}
		}
		return order[:1]
	}
	drive(t, "prefix-hash", prm, 64, ref, func(*Request, *fakeView, int) {})
}

func TestSessionAffinityMatchesReference(t *testing.T) {
	prm := params(3)
	var sent [4][]int64
	ref := func(r *Request, v *fakeView) []int {
		if r.Session != "" {
			return ringOrder(4, 160, 0x73657373696f6e00, sessionKey(r.Session))[:1]
		}
		for w := range sent {
			if len(sent[w]) == 0 {
				return []int{w}
			}
		}
		return argminSet(4, func(w int) float64 {
			c := 0
			for _, at := range sent[w] {
				if at > v.now-60e9 {
					c++
				}
			}
			return float64(c)
		})[:1]
	}
	drive(t, "session-affinity", prm, 64, ref, func(_ *Request, v *fakeView, w int) { sent[w] = append(sent[w], v.now) })
}

func TestPrefixAwareMatchesReference(t *testing.T) {
	held := make([]map[uint64]bool, 4)
	for w := range held {
		held[w] = map[uint64]bool{}
	}
	ref := func(r *Request, _ *fakeView) []int {
		cand := []int{0, 1, 2, 3}
		for _, h := range r.Blocks {
			var next []int
			for _, w := range cand {
				if held[w][h] {
					next = append(next, w)
				}
			}
			if len(next) == 0 {
				break
			}
			cand = next
		}
		return cand
	}
	drive(t, "prefix-aware", params(3), 64, ref, func(r *Request, _ *fakeView, w int) {
		for _, h := range r.Blocks {
			held[w][h] = true
		}
	})
}

func TestRayPrefixAffinityMatchesReference(t *testing.T) {
	prm := params(3)
	held := make([]map[uint64]bool, 4)
	for w := range held {
		held[w] = map[uint64]bool{}
	}
	ref := func(r *Request, v *fakeView) []int {
		if slices.Max(v.inFlight)-slices.Min(v.inFlight) > prm.ImbalancedThreshold {
			return []int{0, 1, 2, 3} // power of two: any pair's shorter queue
		}
		m, deepest := 0, uint64(0)
		for i, h := range r.Blocks {
			found := false
			for w := range held {
				found = found || held[w][h]
			}
			if !found {
				break
			}
			m, deepest = i+1, h
		}
		var cand []int
		if m == 0 || float64(m*v.block)/float64(r.InputTokens) < prm.MatchRateThreshold {
			cand = argminSet(4, func(w int) float64 { return float64(len(held[w])) })
		} else {
			for w := range held {
				if held[w][deepest] {
					cand = append(cand, w)
				}
			}
		}
		lo := math.MaxInt
		for _, w := range cand {
			lo = min(lo, v.inFlight[w])
		}
		var out []int
		for _, w := range cand {
			if v.inFlight[w] == lo {
				out = append(out, w)
			}
		}
		return out
	}
	drive(t, "ray-prefix-affinity", prm, 64, ref, func(r *Request, _ *fakeView, w int) {
		for _, h := range r.Blocks {
			held[w][h] = true
		}
	})
}

func TestAIBrixPrefixCacheMatchesReference(t *testing.T) {
	prm := params(3)
	prm.PrefixCacheImbalanceAbsCount = 15
	held := map[uint64][]int{}
	ref := func(r *Request, v *fakeView) []int {
		counts := v.inFlight
		least := argminSet(4, func(w int) float64 { return float64(counts[w]) })
		if slices.Max(counts)-slices.Min(counts) > prm.PrefixCacheImbalanceAbsCount {
			return least
		}
		pct := map[int]int{}
		for i, h := range r.Blocks {
			if len(held[h]) == 0 {
				break
			}
			for _, w := range held[h] {
				pct[w] = (i + 1) * 100 / len(r.Blocks)
			}
		}
		mean := float64(counts[0]+counts[1]+counts[2]+counts[3]) / 4
		ss := 0.0
		for _, c := range counts {
			ss += (float64(c) - mean) * (float64(c) - mean)
		}
		bound := mean + math.Sqrt(ss/4)
		bestPct, bestCount := -1, math.MaxInt
		for w, p := range pct {
			if float64(counts[w]) <= bound && (p > bestPct || p == bestPct && counts[w] < bestCount) {
				bestPct, bestCount = p, counts[w]
			}
		}
		if bestPct < 0 {
			return least
		}
		var out []int
		for w, p := range pct {
			if p == bestPct && counts[w] == bestCount {
				out = append(out, w)
			}
		}
		return out
	}
	drive(t, "aibrix-prefix-cache", prm, 64, ref, func(r *Request, _ *fakeView, w int) {
		for _, h := range r.Blocks {
			if !slices.Contains(held[h], w) {
				held[h] = append(held[h], w)
			}
		}
	})
}
