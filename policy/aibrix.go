package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// AIBrix's gateway routers (vllm-project/aibrix,
// pkg/plugins/gateway/algorithms/prefix_cache.go at 429c45e90fb4: defaults
// lines 35–36, Route line 91, getTargetPodFromMatchedPods line 157 with its
// bound at line 187, getTargetPodOnLoadImbalance line 198; least_request.go;
// the prefix hash table in pkg/utils/prefixcacheindexer).
// Request counts are the gateway's running requests per pod: routesim's
// requests in flight.

// aibrixBlockTokens is the prefix table's block: 128 characters of the
// default character tokenizer, 32 tokens at CharsPerToken.
const aibrixBlockTokens = 128 / CharsPerToken

// aibrixExpiry is how long a prefix block stays unused before the table
// drops it (prefixCacheEvictionDuration, 60 minutes).
const aibrixExpiry int64 = 60 * 60 * 1e9

// AIBrixPrefixCache is AIBrix's prefix-cache router. If max − min running
// requests exceeds ImbalanceAbsCount, the request goes to a least-loaded
// pod. Otherwise the prompt's blocks are looked up in the router's table
// of routed prompts in order while any pod holds each; every pod holding a
// block gets that block's position as its match percentage. Matched pods
// are tried by decreasing percentage, then increasing running requests
// (equal ones in random order), and the first whose running requests are
// within mean + StdDevFactor × standard deviation (over all pods) wins;
// with no such pod, a least-loaded pod. The prompt's blocks are then
// recorded for the chosen pod, in a table of CapacityTokens' worth of
// blocks at most (LRU; upstream: 200,000 blocks of 32 tokens) whose unused
// entries expire after an hour.
//
// Upstream hashes each 128-character block on its own; routesim's blocks
// are the workers' KV blocks, chained, so a block matches only at its
// position.
type AIBrixPrefixCache struct {
	Rand              *rand.Rand
	ImbalanceAbsCount int
	StdDevFactor      float64
	CapacityTokens    int // the table's size, in tokens' worth of blocks

	capacity int // in blocks of the workers' block size

	blocks  map[uint64]*aibrixBlock
	lru     lruList
	pct     []int     // by worker id
	counts  []float64 // by worker id
	matched []int
	m       members
}

type aibrixBlock struct {
	pods []int32
	last int64
	slot int32
}

// Route applies the prefix-cache rule.
func (p *AIBrixPrefixCache) Route(r *Request, v View) Decision {
	ws := v.Workers()
	if p.blocks == nil {
		p.blocks = map[uint64]*aibrixBlock{}
		p.lru = lruList{slot: map[uint64]int32{}, head: -1, tail: -1}
		p.capacity = max(p.CapacityTokens/v.BlockSize(), 1)
	}
	if p.m.sync(ws) {
		n := IDBound(ws)
		p.pct, p.counts = grown(p.pct, n), grown(p.counts, n)
	}
	now := v.Now()
	p.expire(now)
	lo, hi := math.MaxInt, math.MinInt
	for _, w := range ws {
		c := v.InFlight(w)
		p.counts[w] = float64(c)
		lo, hi = min(lo, c), max(hi, c)
	}
	w, reason := -1, ""
	if hi-lo > p.ImbalanceAbsCount {
		w, reason = p.leastRequest(ws), fmt.Sprintf("imbalanced (running %d..%d): least request", lo, hi)
	} else if p.match(r.Blocks, now) {
		w = p.fromMatched(ws)
		reason = "prefix match"
		if w < 0 {
			w, reason = p.leastRequest(ws), "matched pods over mean + k·σ: least request"
		}
	} else {
		w, reason = p.leastRequest(ws), "no prefix match: least request"
	}
	p.add(r.Blocks, w, now)
	return Decision{Worker: w, Reason: reason}
}

// match fills p.pct with each live pod's match percentage and lists the
// matched pods; it reports whether any pod matched (a departed pod's
// entries stay in the table until they expire, but match nothing).
func (p *AIBrixPrefixCache) match(blocks []uint64, now int64) bool {
	for w := range p.pct {
		p.pct[w] = -1
	}
	p.matched = p.matched[:0]
	for i, h := range blocks {
		b, ok := p.blocks[h]
		if !ok || len(b.pods) == 0 {
			break
		}
		pct := (i + 1) * 100 / len(blocks)
		for _, w := range b.pods {
			if !p.m.has(int(w)) {
				continue
			}
			if p.pct[w] < 0 {
				p.matched = append(p.matched, int(w))
			}
			p.pct[w] = pct
		}
	}
	return len(p.matched) > 0
}

// fromMatched is getTargetPodFromMatchedPods: -1 if no matched pod is
// within the load bound.
func (p *AIBrixPrefixCache) fromMatched(ws []int) int {
	mean, sd := meanStd(p.counts, ws)
	bound := mean + p.StdDevFactor*sd
	p.Rand.Shuffle(len(p.matched), func(i, j int) { p.matched[i], p.matched[j] = p.matched[j], p.matched[i] })
	slices.SortStableFunc(p.matched, func(a, b int) int {
		if p.pct[a] != p.pct[b] {
			return p.pct[b] - p.pct[a]
		}
		switch {
		case p.counts[a] < p.counts[b]:
			return -1
		case p.counts[a] > p.counts[b]:
			return 1
		}
		return 0
	})
	for _, w := range p.matched {
		if p.counts[w] <= bound {
			return w
		}
	}
	return -1
}

// leastRequest picks uniformly among the pods with the fewest running
// requests (selectTargetPodWithLeastRequestCount).
func (p *AIBrixPrefixCache) leastRequest(ws []int) int {
	return fewest(ws, func(w int) float64 { return p.counts[w] }, p.Rand)
}

// fewest returns the candidate with the smallest value, uniform among
// ties (one draw per tie, as argmin), -1 for no candidate.
func fewest(cands []int, value func(w int) float64, rng *rand.Rand) int {
	best, ties := -1, 0
	for _, w := range cands {
		switch {
		case best < 0 || value(w) < value(best):
			best, ties = w, 1
		case value(w) == value(best):
			ties++
			if rng.IntN(ties) == 0 {
				best = w
			}
		}
	}
	return best
}

// add records the prompt's blocks for pod w (AddPrefix).
func (p *AIBrixPrefixCache) add(blocks []uint64, w int, now int64) {
	for _, h := range blocks {
		b, ok := p.blocks[h]
		if !ok {
			if p.lru.n >= p.capacity {
				p.dropBlock(p.lru.tail)
			}
			b = &aibrixBlock{slot: p.lru.alloc(h)}
			p.blocks[h] = b
		} else {
			p.lru.unlink(b.slot)
		}
		p.lru.pushFront(b.slot)
		b.last = now
		if !slices.Contains(b.pods, int32(w)) {
			b.pods = append(b.pods, int32(w))
		}
	}
}

// expire drops the blocks unused for aibrixExpiry.
func (p *AIBrixPrefixCache) expire(now int64) {
	for p.lru.tail >= 0 && p.blocks[p.lru.keys[p.lru.tail]].last < now-aibrixExpiry {
		p.dropBlock(p.lru.tail)
	}
}

func (p *AIBrixPrefixCache) dropBlock(s int32) {
	h := p.lru.keys[s]
	p.lru.unlink(s)
	p.lru.release(s)
	delete(p.blocks, h)
}

// meanStd returns the mean and population standard deviation of x over
// the ids in ws.
func meanStd(x []float64, ws []int) (float64, float64) {
	mean := 0.0
	for _, w := range ws {
		mean += x[w]
	}
	mean /= float64(len(ws))
	ss := 0.0
	for _, w := range ws {
		ss += (x[w] - mean) * (x[w] - mean)
	}
	return mean, math.Sqrt(ss / float64(len(ws)))
}

// Believed implements Believer: the leading blocks the table holds for w.
func (p *AIBrixPrefixCache) Believed(w int, blocks []uint64) int {
	for i, h := range blocks {
		if b, ok := p.blocks[h]; !ok || !slices.Contains(b.pods, int32(w)) {
			return i
		}
	}
	return len(blocks)
}
