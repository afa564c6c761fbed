package policy

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Random picks a worker uniformly at random, like Dynamo's --router-mode
// random; with Admit's rule ExcludeBusy, among the workers the busy
// monitor does not report overloaded (as RoundRobin).
type Random struct {
	Rand  *rand.Rand
	Admit Admission
	free  []int
}

// Admission implements Admitter.
func (p *Random) Admission() Admission { return p.Admit }

// Route draws a worker.
func (p *Random) Route(_ *Request, v View) Decision {
	if free, ok := freeWorkers(p.Admit, v, &p.free); ok {
		if len(free) == 0 {
			return Decision{Action: RejectBusy, Reason: p.Admit.OverloadMessage}
		}
		return Decision{Worker: free[p.Rand.IntN(len(free))], Reason: "uniform among the workers not overloaded"}
	}
	ws := v.Workers()
	return Decision{Worker: ws[p.Rand.IntN(len(ws))], Reason: "uniform random"}
}

// LeastLoaded picks the worker with the fewest requests in flight, ties
// broken uniformly at random.
type LeastLoaded struct{ Rand *rand.Rand }

// Route picks the least-loaded worker.
func (p *LeastLoaded) Route(_ *Request, v View) Decision {
	ws := v.Workers()
	scores := idScores(nil, ws)
	for _, w := range ws {
		scores[w] = float64(v.InFlight(w))
	}
	return Decision{Worker: argmin(scores, p.Rand), Reason: "fewest in flight", Scores: scores}
}

// PowerOfTwo samples two distinct workers uniformly and picks the one with
// fewer requests in flight (a tie goes to either with equal chance).
type PowerOfTwo struct{ Rand *rand.Rand }

// Route compares two random workers.
func (p *PowerOfTwo) Route(_ *Request, v View) Decision {
	ws := v.Workers()
	n := len(ws)
	if n == 1 {
		return Decision{Worker: ws[0], Reason: "only worker"}
	}
	i := p.Rand.IntN(n)
	k := p.Rand.IntN(n - 1)
	if k >= i {
		k++
	}
	a, b := ws[i], ws[k]
	la, lb := v.InFlight(a), v.InFlight(b)
	w := a
	if lb < la || (lb == la && p.Rand.IntN(2) == 1) {
		w = b
	}
	return Decision{Worker: w, Reason: "fewer in flight of two sampled"}
}

// idScores returns buf resized to hold a score per worker id of ws
// (IDBound), the ids not in ws at +Inf (excluded); the caller sets the
// scores of ws.
func idScores(buf []float64, ws []int) []float64 {
	n := IDBound(ws)
	s := slices.Grow(buf[:0], n)[:n]
	if len(ws) < n {
		for i := range s {
			s[i] = math.Inf(1)
		}
	}
	return s
}

// argmin returns the index of the smallest score, choosing uniformly among
// ties (reservoir sampling); +Inf and NaN scores are never chosen. It
// returns -1 if no score is finite.
func argmin(scores []float64, rng *rand.Rand) int {
	m := minPick{best: -1}
	for i, s := range scores {
		m.offer(i, s, rng)
	}
	return m.best
}

// minPick is argmin's running state, for loops that compute the scores
// as they go: offer the scores in index order and best is argmin's answer,
// with the same tie draws.
type minPick struct {
	best, ties int
	lo         float64 // the score of best
}

// offer considers score s of index i.
func (m *minPick) offer(i int, s float64, rng *rand.Rand) {
	switch {
	case !(s <= maxFinite): // +Inf (excluded) or NaN: never the minimum
	case m.best < 0 || s < m.lo:
		m.best, m.ties, m.lo = i, 1, s
	case s == m.lo:
		if m.ties++; rng.IntN(m.ties) == 0 {
			m.best, m.lo = i, s
		}
	}
}

const maxFinite = 1.7976931348623157e308
