package policy

import (
	"math"
	"testing"
)

// reference is a plain transcription of router-notes.md §7 with the
// release's rules (policy/dynamo.go): it returns the special outcome
// (RejectBusy, RejectBackpressure, Park) or the set of workers tied at
// the minimum cost, with the costs. v1.2's busy gate acts in the router
// stage, after the choice; v1.4 skips the overloaded workers when a
// threshold is set.
func reference(name string, p Params, r *Request, v *fakeView) (special Action, best map[int]bool, cost map[int]float64) {
	n := len(v.inFlight)
	theta := p.RouterQueueThreshold
	if theta < 0 {
		theta = 0
		if p.DynamoVersion == "1.2.0" || name == "kv-backpressure" {
			theta = 4
		}
	}
	if name != "kv-admission" && theta > 0 {
		all := true
		for w := 0; w < n; w++ {
			if !(float64(v.prefill[w]) > theta*float64(v.budget[w])) {
				all = false
			}
		}
		if all {
			if !r.Parked && p.MaxQueuedISLTokens > 0 && v.queued >= p.MaxQueuedISLTokens {
				return RejectBackpressure, nil, nil
			}
			return Park, nil, nil
		}
	}
	exclude := p.DynamoVersion == "1.4.0" && name != "kv-backpressure" &&
		(p.ActiveDecodeBlocksThreshold > 0 || p.ActivePrefillTokensThreshold > 0 || p.ActivePrefillTokensThresholdFrac > 0)
	cost = map[int]float64{}
	for w := 0; w < n; w++ {
		if exclude && v.overloaded[w] {
			continue
		}
		P := float64(v.prefill[w]+r.InputTokens)/float64(v.block) - p.OverlapScoreCredit*float64(v.overlap[w])
		if P < 0 {
			P = 0
		}
		cost[w] = p.PrefillLoadScale*P + float64(v.active[w]+v.newBlocks[w])
	}
	if len(cost) == 0 {
		return RejectBusy, nil, nil
	}
	lo := math.Inf(1)
	for _, c := range cost {
		lo = math.Min(lo, c)
	}
	best = map[int]bool{}
	for w, c := range cost {
		if c == lo {
			best[w] = true
		}
	}
	return Dispatch, best, cost
}

func TestKVVariantsAgreeWithReference(t *testing.T) {
	rng := testRand(11)
	for trial := 0; trial < 20_000; trial++ {
		n := 1 + rng.IntN(6)
		v := newFakeView(n)
		v.block = []int{16, 32, 64}[rng.IntN(3)]
		for w := 0; w < n; w++ {
			v.capacity[w] = 50 + rng.IntN(50)
			v.active[w] = rng.IntN(110)
			v.engineUsed[w] = rng.IntN(110)
			v.newBlocks[w] = rng.IntN(20)
			v.overlap[w] = rng.IntN(20)
			v.prefill[w] = rng.IntN(5000)
			v.budget[w] = []int{256, 512}[rng.IntN(2)]
		}
		v.queued = rng.IntN(3000)
		p := DefaultParams()
		p.Rand = testRand(uint64(trial))
		p.OverlapScoreCredit = float64(rng.IntN(3))
		p.PrefillLoadScale = float64(rng.IntN(3))
		p.ActiveDecodeBlocksThreshold = []float64{-1, 0, 0.8, 1}[rng.IntN(4)]
		p.ActivePrefillTokensThreshold = []int{-1, 0, 2500}[rng.IntN(3)]
		p.ActivePrefillTokensThresholdFrac = []float64{-1, 0, 1.5}[rng.IntN(3)]
		p.RouterQueueThreshold = []float64{-1, 1, 4, 16}[rng.IntN(4)]
		p.DynamoVersion = []string{"1.2.0", "1.4.0"}[rng.IntN(2)]
		for w := range v.overloaded {
			v.overloaded[w] = rng.IntN(3) == 0
		}
		p.MaxQueuedISLTokens = []int{0, 1500}[rng.IntN(2)]
		r := &Request{InputTokens: 1 + rng.IntN(4000), Parked: rng.IntN(4) == 0}
		for _, name := range []string{"kv", "kv-admission", "kv-backpressure"} {
			d := mustNew(name, p).Route(r, v)
			special, best, cost := reference(name, p, r, v)
			if special != Dispatch {
				if d.Action != special {
					t.Fatalf("trial %d %s: decision %+v, reference %v", trial, name, d, special)
				}
				continue
			}
			if d.Action != Dispatch || !best[d.Worker] {
				t.Fatalf("trial %d %s: chose %d (scores %v), reference minimum %v of %v", trial, name, d.Worker, d.Scores, best, cost)
			}
			for w, c := range cost {
				if math.Abs(d.Scores[w]-c) > 1e-9 {
					t.Fatalf("trial %d %s: worker %d cost %v, reference %v", trial, name, w, d.Scores[w], c)
				}
			}
		}
	}
}
