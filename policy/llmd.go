package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// llm-d's endpoint picker is the Gateway API Inference Extension's
// scheduler (kubernetes-sigs/gateway-api-inference-extension at
// 00913f9205cd, Aug 2025): each scorer gives every worker a value in
// [0, 1] (plugins/multi/prefix/plugin.go Score line 177 and
// matchLongestPrefix line 225; scorer/queue.go Score line 66, 1.0 for
// equal queues at line 85; scorer/kvcache_utilization.go line 67), the
// profile sums them with weights, and the max-score picker takes the
// highest (a uniform draw among equal totals: it shuffles first,
// picker/max_score_picker.go line 93). llm-d's default profile weighs
// queue 2, kv-cache-utilization 2, prefix-cache 3
// (llm-d/llm-d-inference-scheduler 520af47896e5,
// config/charts/epplib/templates/_config.yaml lines 78–84).
const (
	scorerPrefix  = "prefix-cache"         // approximate, from routed prompts (multi/prefix/plugin.go)
	scorerPrecise = "precise-prefix-cache" // from the engines' KV events (llm-d kv-cache-manager)
	scorerQueue   = "queue"                // scraped num_requests_waiting (scorer/queue.go)
	scorerKVUtil  = "kv-cache-utilization" // 1 − scraped KV usage (scorer/kvcache_utilization.go)
)

var scorerNames = []string{scorerPrefix, scorerPrecise, scorerQueue, scorerKVUtil}

// llmdHashBlockTokens is the prefix plugin's hash block: 64 characters,
// "vLLM default token block size is 16" at 4 characters per token.
const llmdHashBlockTokens = 16

// Scorer is one weighted llm-d scorer.
type Scorer struct {
	Name   string
	Weight float64
}

// ParseScorers reads NAME:WEIGHT,… (a bare NAME weighs 1, as the EPP's
// default weight).
func ParseScorers(s string) ([]Scorer, error) {
	var out []Scorer
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, weight, hasWeight := strings.Cut(part, ":")
		if !slices.Contains(scorerNames, name) {
			return nil, fmt.Errorf("unknown scorer %q (known: %s)", name, strings.Join(scorerNames, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("scorer %q given twice", name)
		}
		seen[name] = true
		w := 1.0
		if hasWeight {
			v, err := strconv.ParseFloat(weight, 64)
			if err != nil || !(v >= 0 && v <= maxScorerWeight) {
				return nil, fmt.Errorf("scorer %q: weight %q must be a number in [0, %g]", name, weight, float64(maxScorerWeight))
			}
			w = v
		}
		out = append(out, Scorer{name, w})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scorer in %q", s)
	}
	return out, nil
}

func checkScorers(s string) error { _, err := ParseScorers(s); return err }

// modelHash stands for the model name the prefix plugin hashes first.
const modelHash uint64 = 0x6c6c6d2d64 // "llm-d"

// LLMD is llm-d's weighted-scorer endpoint picker. The approximate
// prefix-cache scorer hashes the prompt's first MaxPrefixTokens (the
// model's hash, then its blocks), counts for each worker the leading
// hashes its LRU of routed prompts holds (LRUCapacity blocks per worker)
// and scores count/total; the precise scorer reads the router's
// KV-event index and scores overlap/max overlap. The queue and
// kv-cache-utilization scorers read the workers' metrics as of the last
// scrape (--refresh-metrics-interval, 50 ms as the EPP's
// --refresh-metrics-interval, pkg/epp/server/runserver.go line 72; the
// router stage applies it).
//
// The prefix blocks are the workers' KV blocks (upstream: 64-character
// blocks), so lengths are converted by tokens: MaxPrefixTokens = 256 × 16
// and LRUCapacity = 31,250 × 16 tokens' worth of blocks by default.
//
// The Inference Gateway's saturation detector never acts in a replay: when
// every pod is over its thresholds it rejects requests of negative priority
// only (site-src/concepts/priority-and-capacity.md), and replayed requests
// carry the default priority 0.
type LLMD struct {
	Rand            *rand.Rand
	Scorers         []Scorer
	MaxPrefixTokens int
	LRUCapacity     int // tokens per worker

	index   *lruIndex
	scores  []float64
	matched []int
	hashes  []uint64
}

// Route sums the weighted scores and picks the maximum.
func (p *LLMD) Route(r *Request, v View) Decision {
	ws, bs := v.Workers(), v.BlockSize()
	n := IDBound(ws)
	if p.index == nil {
		p.index = newLRUIndex(max(p.LRUCapacity/bs, 1))
	}
	p.index.grow(n)
	p.matched = grown(p.matched, n)
	p.scores = slices.Grow(p.scores[:0], n)[:n]
	clear(p.scores)
	blocks := r.Blocks[:min(len(r.Blocks), p.MaxPrefixTokens/bs)]
	p.hashes = p.hashes[:0]
	if len(blocks) > 0 {
		p.hashes = append(append(p.hashes, modelHash), blocks...)
	}
	for _, s := range p.Scorers {
		switch s.Name {
		case scorerPrefix:
			p.prefixScores(s.Weight, ws)
		case scorerPrecise:
			best := 0
			for _, w := range ws {
				p.matched[w] = v.Overlap(w, blocks)
				best = max(best, p.matched[w])
			}
			for _, w := range ws {
				if best == 0 {
					break
				}
				p.scores[w] += s.Weight * float64(p.matched[w]) / float64(best)
			}
		case scorerQueue:
			lo, hi := math.MaxInt, math.MinInt
			for _, w := range ws {
				q := v.EngineWaiting(w)
				lo, hi = min(lo, q), max(hi, q)
			}
			for _, w := range ws {
				score := 1.0
				if hi > lo {
					score = float64(hi-v.EngineWaiting(w)) / float64(hi-lo)
				}
				p.scores[w] += s.Weight * score
			}
		case scorerKVUtil:
			for _, w := range ws {
				if c := v.KVCapacity(w); c > 0 {
					p.scores[w] += s.Weight * (1 - float64(v.EngineKVUsed(w))/float64(c))
				}
			}
		}
	}
	costs := negated(p.scores) // the max score is the min cost; ties drawn uniformly
	if len(ws) < n {
		live := 0
		for id := range costs { // ids not in ws are excluded
			if live < len(ws) && ws[live] == id {
				live++
			} else {
				costs[id] = math.Inf(1)
			}
		}
	}
	w := argmin(costs, p.Rand)
	if len(p.hashes) > 0 {
		p.index.add(p.hashes, w)
	}
	return Decision{Worker: w, Reason: "max weighted score", Scores: costs}
}

// prefixScores adds weight × (leading hashes held / hashes) per worker:
// hashes are walked from the first while any worker holds one, each
// holder counting it (multi/prefix/plugin.go matchLongestPrefix).
func (p *LLMD) prefixScores(weight float64, ws []int) {
	if len(p.hashes) == 0 {
		return
	}
	clear(p.matched)
	for _, h := range p.hashes {
		holders := p.index.get(h)
		if len(holders) == 0 {
			break
		}
		for _, w := range holders {
			p.matched[w]++
		}
	}
	for _, w := range ws {
		p.scores[w] += weight * float64(p.matched[w]) / float64(len(p.hashes))
	}
}

// negated turns higher-is-better scores into Decision's lower-is-better
// costs, in place.
func negated(s []float64) []float64 {
	for i := range s {
		s[i] = -s[i]
	}
	return s
}

// Believed implements Believer: the leading prompt blocks in w's LRU of
// routed prompts (with the model's hash before them).
func (p *LLMD) Believed(w int, blocks []uint64) int {
	if p.index == nil {
		return 0
	}
	l := &p.index.lrus[w]
	if _, ok := l.slot[modelHash]; !ok {
		return 0
	}
	for i, h := range blocks {
		if _, ok := l.slot[h]; !ok {
			return i
		}
	}
	return len(blocks)
}
