package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// KV is Dynamo's KV-aware router. Each worker w costs
//
//	scale · max((prefill_w + ISL)/B − credit · overlap_w, 0) + decode_w
//
// where prefill_w is the router-tracked prompt tokens awaiting a first
// token, overlap_w the request's leading blocks the router believes cached
// on w, and decode_w the distinct blocks of w's in-flight requests plus
// the request's blocks not among them. Where the router keeps lower-tier
// indexes (a TierView; Release.Tiers.Lower) the credit is Dynamo's
// overlap_credit_blocks, credit · overlap_w + HostWeight · host_w +
// DiskWeight · disk_w, host_w and disk_w being the blocks matched on in
// w's host and then disk tier (lib/kv-router/src/scheduling/selector.rs
// L107-160 @c8d8e7602573). Temperature 0 picks the cheapest worker
// (uniform tie-break, or Release.TreeSizeTieBreak's); T > 0 samples p_w ∝
// exp(−(c_w − c_min)/((c_max − c_min)·T)). Queue, if set, parks requests
// while every worker is prefill-busy. Admit is the busy monitor the router
// stage runs (KV is an Admitter): under ExcludeBusy the monitor's
// overloaded workers are skipped and a request finding all of them
// overloaded is refused; under FleetGate the router stage refuses after
// the choice.
type KV struct {
	Rand        *rand.Rand
	Credit      float64 // overlap_score_credit
	Scale       float64 // prefill_load_scale
	Temperature float64 // router_temperature
	Queue       *QueueGate
	Admit       Admission
	Release     Release // the release modelled (tie-break, messages, tiers)
	// HostWeight and DiskWeight credit a block matched in a worker's host
	// and disk tier (host_cache_hit_weight, disk_cache_hit_weight), where
	// Release.Tiers.Lower.
	HostWeight, DiskWeight float64

	loads  []WorkerLoad // reused between decisions
	tiers  []TierHits
	scores []float64
}

// TierReading implements TierReader: the release's reading of the tiers
// below the GPU, with p's weights.
func (p *KV) TierReading() TierReading {
	t := p.Release.Tiers
	t.HostWeight, t.DiskWeight = p.HostWeight, p.DiskWeight
	return t
}

// Admission implements Admitter.
func (p *KV) Admission() Admission { return p.Admit }

// Cost is the worker's cost for request r (lower wins).
func (p *KV) Cost(r *Request, v View, w int) float64 {
	l := LoadOf(v, w, r.Blocks)
	var t TierHits
	if hits := tierHits(v, r.Blocks, nil); hits != nil {
		t = hits[w]
	}
	return p.cost(r.InputTokens, &l, t, v.BlockSize())
}

// cost credits the worker's GPU overlap and its lower-tier hits t (zero
// where the router keeps no lower-tier index: the credit is then the
// overlap's alone, to the bit, since the weights are finite).
func (p *KV) cost(isl int, l *WorkerLoad, t TierHits, blockSize int) float64 {
	raw := float64(l.Prefill+isl) / float64(blockSize)
	credit := p.Credit*float64(l.Overlap) + p.HostWeight*float64(t.Host) + p.DiskWeight*float64(t.Disk)
	adjusted := max(raw-credit, 0)
	return p.Scale*adjusted + float64(l.Active+l.New)
}

// Route scores the eligible workers and picks one, parks or rejects.
func (p *KV) Route(r *Request, v View) Decision {
	if p.Queue != nil {
		if d, held := p.Queue.hold(r, v); held {
			return d
		}
	}
	ws := v.Workers()
	p.loads = Loads(v, r.Blocks, p.loads)
	var tiers []TierHits // nil: the router keeps no lower-tier index
	if p.Release.Tiers.Lower {
		p.tiers = tierHits(v, r.Blocks, p.tiers)
		tiers = p.tiers
	}
	p.scores = idScores(p.scores, ws)
	scores := p.scores
	var over OverloadView
	if p.Admit.Gate == ExcludeBusy && p.Admit.Armed() {
		over, _ = v.(OverloadView)
	}
	excluded, bs, isl := 0, v.BlockSize(), r.InputTokens
	// One pass scores every worker and, at temperature 0, keeps argmin's
	// running minimum with its tie draws, in argmin's order.
	m := minPick{best: -1}
	pick, uniform, loads := p.Temperature <= 0, !p.Release.TreeSizeTieBreak, p.loads[:len(scores)]
	if len(ws) == len(scores) {
		// The ids are 0..N−1 (a fixed membership): the same loop over the
		// arrays themselves, without the indirection (the hot path at
		// fleet scale).
		for w := range scores {
			if over != nil && over.Overloaded(w) {
				scores[w] = math.Inf(1)
				excluded++
				continue
			}
			var t TierHits
			if tiers != nil {
				t = tiers[w]
			}
			s := p.cost(isl, &loads[w], t, bs)
			scores[w] = s
			if pick && uniform {
				m.offer(w, s, p.Rand)
			}
		}
	} else {
		for _, w := range ws {
			if over != nil && over.Overloaded(w) {
				scores[w] = math.Inf(1)
				excluded++
				continue
			}
			var t TierHits
			if tiers != nil {
				t = tiers[w]
			}
			s := p.cost(isl, &loads[w], t, bs)
			scores[w] = s
			if pick && uniform {
				m.offer(w, s, p.Rand)
			}
		}
	}
	if excluded == len(ws) {
		return Decision{Action: RejectBusy, Reason: p.Admit.OverloadMessage, Scores: scores}
	}
	w, reason := m.best, "min cost"
	switch {
	case !pick:
		w, reason = softmax(scores, p.Temperature, p.Rand), "softmax over cost"
	case !uniform:
		w, reason = treeTie(scores, v), "min cost (ties: smallest prefix index)"
	}
	if w < 0 {
		return p.overflowed(scores, ws, over)
	}
	return Decision{Worker: w, Reason: reason, Scores: scores}
}

// treeTie is v0.9's argmin: among the minimum-cost workers, the one whose
// prefix index holds the fewest blocks, then the lowest index (upstream
// iterates a hash map there; routesim takes a fixed order). −1 if no cost
// is finite.
func treeTie(scores []float64, v View) int {
	tv, _ := v.(TreeView)
	best := -1
	for w, s := range scores {
		if !(s <= maxFinite) {
			continue
		}
		switch {
		case best < 0 || s < scores[best]:
			best = w
		case s == scores[best] && tv != nil && tv.StoredBlocks(w) < tv.StoredBlocks(best):
			best = w
		}
	}
	return best
}

// TreeView is a View that also reports how many blocks the router's
// prefix index holds for each worker (v0.9's tie-break reads it).
type TreeView interface {
	View
	StoredBlocks(w int) int
}

// overflowed decides when every eligible worker's cost overflowed (+Inf
// or NaN: a scale or credit too large for float64, which Params.Validate
// refuses but a KV built by hand may carry): those workers tie at the
// largest finite cost, drawn uniformly; excluded workers stay excluded.
func (p *KV) overflowed(scores []float64, ws []int, over OverloadView) Decision {
	m := minPick{best: -1}
	for _, w := range ws {
		if over == nil || !over.Overloaded(w) {
			scores[w] = maxFinite
			m.offer(w, maxFinite, p.Rand)
		}
	}
	return Decision{Worker: m.best, Reason: "every cost overflowed: uniform among the eligible workers", Scores: scores}
}

// softmax samples an index with probability ∝ exp(−(s − min)/((max − min)·T))
// over finite scores, with one uniform draw walked along the cumulative
// sum; equal scores give a uniform draw. It returns −1 only if no score is
// finite.
func softmax(scores []float64, temp float64, rng *rand.Rand) int {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range scores {
		if s <= maxFinite {
			lo, hi = min(lo, s), max(hi, s)
		}
	}
	weights := make([]float64, len(scores))
	sum := 0.0
	for i, s := range scores {
		switch {
		case !(s <= maxFinite): // excluded, overflowed or NaN
		case hi == lo:
			weights[i] = 1
		case (hi-lo)*temp == 0: // T so small the range underflows: T → 0
			if s == lo {
				weights[i] = 1
			}
		default:
			weights[i] = math.Exp(-(s - lo) / ((hi - lo) * temp))
		}
		sum += weights[i]
	}
	u := rng.Float64() * sum
	last := -1
	for i, wt := range weights {
		if wt == 0 {
			continue
		}
		last = i
		if u < wt {
			return i
		}
		u -= wt
	}
	return last
}

// QueueGate is Dynamo's router queue: a request is parked while every
// worker has more than Threshold × max_num_batched_tokens prefill tokens
// pending. A new request that would park finding MaxQueuedISLTokens (> 0)
// or more already queued is rejected instead.
type QueueGate struct {
	Threshold          float64
	MaxQueuedISLTokens int
}

// AllPrefillBusy reports whether every worker is past the threshold.
func (q *QueueGate) AllPrefillBusy(v View) bool {
	for _, w := range v.Workers() {
		if float64(v.PrefillTokens(w)) <= q.Threshold*float64(v.MaxNumBatchedTokens(w)) {
			return false
		}
	}
	return true
}

func (q *QueueGate) hold(r *Request, v View) (Decision, bool) {
	if !q.AllPrefillBusy(v) {
		return Decision{}, false
	}
	if queued := v.QueuedISLTokens(); !r.Parked && q.MaxQueuedISLTokens > 0 && queued >= q.MaxQueuedISLTokens {
		return Decision{Action: RejectBackpressure, Reason: fmt.Sprintf(
			"router backpressure: MaxQueuedIslTokensExceeded (queued_isl_tokens=%d, max_queued_isl_tokens=%d)", queued, q.MaxQueuedISLTokens)}, true
	}
	return Decision{Action: Park, Reason: "every worker prefill-busy"}, true
}
