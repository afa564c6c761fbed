package policy

import "math/rand/v2"

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
	return Decision{Worker: p.Rand.IntN(v.NumWorkers()), Reason: "uniform random"}
}

// LeastLoaded picks the worker with the fewest requests in flight, ties
// broken uniformly at random.
type LeastLoaded struct{ Rand *rand.Rand }

// Route picks the least-loaded worker.
func (p *LeastLoaded) Route(_ *Request, v View) Decision {
	scores := make([]float64, v.NumWorkers())
	for w := range scores {
		scores[w] = float64(v.InFlight(w))
	}
	return Decision{Worker: argmin(scores, p.Rand), Reason: "fewest in flight", Scores: scores}
}

// PowerOfTwo samples two distinct workers uniformly and picks the one with
// fewer requests in flight (a tie goes to either with equal chance).
type PowerOfTwo struct{ Rand *rand.Rand }

// Route compares two random workers.
func (p *PowerOfTwo) Route(_ *Request, v View) Decision {
	n := v.NumWorkers()
	if n == 1 {
		return Decision{Worker: 0, Reason: "only worker"}
	}
	a := p.Rand.IntN(n)
	b := p.Rand.IntN(n - 1)
	if b >= a {
		b++
	}
	la, lb := v.InFlight(a), v.InFlight(b)
	w := a
	if lb < la || (lb == la && p.Rand.IntN(2) == 1) {
		w = b
	}
	return Decision{Worker: w, Reason: "fewer in flight of two sampled"}
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
