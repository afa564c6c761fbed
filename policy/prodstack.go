package policy

import (
	"fmt"
	"math/rand/v2"
)

// vLLM production-stack's router (vllm-project/production-stack,
// src/vllm_router/routers/routing_logic.py at 008a23bd4837: _qps_routing
// line 63, SessionRouter line 199, PrefixAwareRouter line 417; trie in
// src/vllm_router/prefix/hashtrie.py at 35e4ad377d6e: chunk_size 128 at
// line 37, insert line 59, longest_prefix_match line 77).

// SessionAffinity is production-stack's session router: a request with a
// session goes to the worker its session hashes to on a consistent-hash
// ring (uhashring's 160 points per node); one without goes to the
// worker with the lowest QPS over the last Window, a worker never sent a
// request first (_qps_routing). routesim's session is the trace's
// session_id or the closed-loop user; ring positions use routesim's hash,
// not uhashring's md5.
type SessionAffinity struct {
	Window int64 // ns

	ring  []ringPoint
	m     members   // the workers the ring holds
	sent  [][]int64 // per worker id, dispatch times inside the window, oldest first
	heads []int
	ever  []bool
}

// sessionRingPoints is uhashring's default: 40 vnodes × 4 ketama replicas.
const sessionRingPoints = 160

// Route hashes the session or falls back to the lowest QPS.
func (p *SessionAffinity) Route(r *Request, v View) Decision {
	ws := v.Workers()
	if p.m.sync(ws) { // the ring over the live workers (a worker's points depend on its id alone)
		p.ring = buildRing(ws, sessionRingPoints, 0x73657373696f6e00) // "session"
		n := IDBound(ws)
		p.sent, p.heads, p.ever = grown(p.sent, n), grown(p.heads, n), grown(p.ever, n)
	}
	now := v.Now()
	var w int
	var reason string
	if r.Session != "" {
		w = int(p.ring[ringSearch(p.ring, sessionKey(r.Session))].w)
		reason = "session hash ring"
	} else {
		w, reason = p.lowestQPS(ws, now)
	}
	p.sent[w] = append(p.sent[w], now)
	p.ever[w] = true
	return Decision{Worker: w, Reason: reason}
}

// lowestQPS is _qps_routing: the first worker never sent a request, else
// the first with the fewest dispatches in the window.
func (p *SessionAffinity) lowestQPS(ws []int, now int64) (int, string) {
	best, bestCount := -1, 0
	for _, w := range ws {
		if !p.ever[w] {
			return w, "no session: a worker without requests"
		}
		s := p.sent[w]
		h := p.heads[w]
		for h < len(s) && s[h] <= now-p.Window {
			h++
		}
		if h > 1024 && h > len(s)/2 {
			s = append(s[:0], s[h:]...)
			h = 0
			p.sent[w] = s
		}
		p.heads[w] = h
		if c := len(s) - h; best < 0 || c < bestCount {
			best, bestCount = w, c
		}
	}
	return best, fmt.Sprintf("no session: lowest QPS (%.3g/s)", float64(bestCount)/(float64(p.Window)/1e9))
}

// PrefixAware is production-stack's prefix-aware router: a trie of the
// prompts it routed (chunk hashes → the workers sent each prefix), never
// evicted. A request walks its chunks while some worker sent the prefix so
// far, narrowing the candidates to those workers, then goes to one of them
// at random (all workers when nothing matched); its prompt is then
// recorded for the chosen worker. routesim's chunks are the workers' KV
// blocks (upstream: 128 characters).
type PrefixAware struct {
	Rand *rand.Rand

	trie map[uint64]workerSet
	cand []int
	next []int
}

// Route follows the longest recorded prefix.
func (p *PrefixAware) Route(r *Request, v View) Decision {
	if p.trie == nil {
		p.trie = map[uint64]workerSet{}
	}
	// Candidates start from the live workers, so a departed worker's trie
	// entries never match.
	p.cand = append(p.cand[:0], v.Workers()...)
	matched := 0
	for _, h := range r.Blocks {
		set, ok := p.trie[h]
		if !ok {
			break
		}
		p.next = p.next[:0]
		for _, w := range p.cand {
			if set.has(w) {
				p.next = append(p.next, w)
			}
		}
		if len(p.next) == 0 {
			break
		}
		p.cand, p.next = p.next, p.cand
		matched++
	}
	w := p.cand[p.Rand.IntN(len(p.cand))]
	for _, h := range r.Blocks {
		set := p.trie[h]
		set.add(w)
		p.trie[h] = set
	}
	return Decision{Worker: w, Reason: fmt.Sprintf("longest prefix: %d blocks, %d candidates", matched, len(p.cand))}
}

// workerSet is a small set of workers (a trie node's endpoints).
type workerSet []int32

func (s workerSet) has(w int) bool {
	for _, x := range s {
		if x == int32(w) {
			return true
		}
	}
	return false
}

func (s *workerSet) add(w int) {
	if !s.has(w) {
		*s = append(*s, int32(w))
	}
}

// sessionKey places a session on the ring: FNV-1a of its name, mixed so
// that names differing in one character land far apart.
func sessionKey(s string) uint64 { return mix64(stringHash(s), 0x73657373696f6e00) }

// Believed implements Believer: the leading blocks the trie records for w.
func (p *PrefixAware) Believed(w int, blocks []uint64) int {
	for i, h := range blocks {
		if !p.trie[h].has(w) {
			return i
		}
	}
	return len(blocks)
}
