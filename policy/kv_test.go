package policy

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestKVWorkedExample is Dynamo's router-design.md example: raw prefill 10
// blocks, overlaps 2/5/8, decode 10/5/9 → costs 18/10/11 → the second worker.
func TestKVWorkedExample(t *testing.T) {
	v := newFakeView(3)
	v.overlap = []int{2, 5, 8}
	v.active = []int{10, 5, 9}
	r := &Request{InputTokens: 10 * 64}
	d := mustNew("kv", params(1)).Route(r, v)
	if want := []float64{18, 10, 11}; !equalFloats(d.Scores, want) {
		t.Errorf("costs %v, want %v", d.Scores, want)
	}
	if d.Worker != 1 {
		t.Errorf("chose worker %d, want 1 (cost 10)", d.Worker)
	}
}

func TestKVPrefersCachedPrefixUnlessLoadOutweighsIt(t *testing.T) {
	v := newFakeView(2)
	r := &Request{InputTokens: 40 * 64}
	v.overlap = []int{30, 0} // worker 0 holds 30 of the 40 blocks
	v.newBlocks = []int{10, 40}
	if d := mustNew("kv", params(1)).Route(r, v); d.Worker != 0 {
		t.Errorf("idle cluster: chose %d, want the cached worker 0 (scores %v)", d.Worker, d.Scores)
	}
	v.prefill[0] = 100 * 64 // a long prefill queue on the cached worker
	if d := mustNew("kv", params(1)).Route(r, v); d.Worker != 1 {
		t.Errorf("loaded cached worker: chose %d, want 1 (scores %v)", d.Worker, d.Scores)
	}
	v.prefill[0], v.active[0] = 0, 500 // or many in-flight blocks
	if d := mustNew("kv", params(1)).Route(r, v); d.Worker != 1 {
		t.Errorf("decode-heavy cached worker: chose %d, want 1 (scores %v)", d.Worker, d.Scores)
	}
	p := params(1)
	p.OverlapScoreCredit = 0 // no credit for the prefix: pure load balance
	v.active[0] = 0
	if d := mustNew("kv", p).Route(r, v); d.Worker != 0 {
		t.Errorf("credit 0: chose %d, want 0 (fewer new decode blocks)", d.Worker)
	}
}

// chiSquareOK tests counts against expected probabilities at the 0.1 % level.
func chiSquareOK(t *testing.T, counts []float64, probs []float64) {
	t.Helper()
	total := 0.0
	for _, c := range counts {
		total += c
	}
	exp := make([]float64, len(probs))
	for i, p := range probs {
		exp[i] = p * total
	}
	chi := stat.ChiSquare(counts, exp)
	crit := distuv.ChiSquared{K: float64(len(counts) - 1)}.Quantile(0.999)
	if chi > crit {
		t.Errorf("χ² = %.2f > %.2f: counts %v, expected %v", chi, crit, counts, exp)
	}
}

func TestKVTemperatureSamplesSoftmax(t *testing.T) {
	v := newFakeView(3)
	v.active = []int{0, 5, 10}
	r := &Request{InputTokens: 64}
	p := params(3)
	p.RouterTemperature = 0.5
	pol := mustNew("kv", p)
	counts := make([]float64, 3)
	const draws = 10_000
	for i := 0; i < draws; i++ {
		counts[pol.Route(r, v).Worker]++
	}
	// costs 1, 6, 11: range-normalised 0, 0.5, 1 over T = 0.5.
	w := []float64{1, math.Exp(-1), math.Exp(-2)}
	sum := w[0] + w[1] + w[2]
	chiSquareOK(t, counts, []float64{w[0] / sum, w[1] / sum, w[2] / sum})
}

func TestTiesBrokenUniformly(t *testing.T) {
	for _, name := range []string{"kv", "least-loaded"} {
		pol := mustNew(name, params(5))
		v := newFakeView(4)
		counts := make([]float64, 4)
		for i := 0; i < 10_000; i++ {
			counts[pol.Route(&Request{InputTokens: 64}, v).Worker]++
		}
		chiSquareOK(t, counts, []float64{0.25, 0.25, 0.25, 0.25})
	}
	p := params(5)
	p.RouterTemperature = 2 // equal costs under sampling: uniform too
	pol := mustNew("kv", p)
	counts := make([]float64, 4)
	for i := 0; i < 10_000; i++ {
		counts[pol.Route(&Request{InputTokens: 64}, newFakeView(4)).Worker]++
	}
	chiSquareOK(t, counts, []float64{0.25, 0.25, 0.25, 0.25})
}

func TestBusyMonitor(t *testing.T) {
	v := newFakeView(3)
	v.active = []int{1000, 999, 0} // capacity 1000
	v.engineUsed = []int{0, 1000, 1000}
	router := &BusyMonitor{DecodeBlocksThreshold: 1}
	engine := &BusyMonitor{DecodeBlocksThreshold: 1, EngineSignal: true}
	for w, want := range []bool{true, false, false} {
		if got := router.IsBusy(w, v); got != want {
			t.Errorf("router signal, worker %d: busy %v, want %v", w, got, want)
		}
	}
	for w, want := range []bool{false, true, true} {
		if got := engine.IsBusy(w, v); got != want {
			t.Errorf("engine signal, worker %d: busy %v, want %v", w, got, want)
		}
	}
	v.prefill = []int{0, 3000, 3073}
	frac := &BusyMonitor{PrefillTokensThresholdFrac: 1.5} // 1.5 × 2048 = 3072
	abs := &BusyMonitor{PrefillTokensThreshold: 2999}
	for w, want := range []bool{false, false, true} {
		if got := frac.IsBusy(w, v); got != want {
			t.Errorf("frac threshold, worker %d: %v", w, got)
		}
	}
	if !abs.IsBusy(1, v) || abs.IsBusy(0, v) {
		t.Error("absolute prefill threshold")
	}
	if (&BusyMonitor{}).IsBusy(0, v) {
		t.Error("a monitor with every check off reported busy")
	}
}

func TestKVAdmissionExcludesBusyAndRejectsWhenAllBusy(t *testing.T) {
	v := newFakeView(2)
	v.overlap = []int{5, 0}
	v.active = []int{1000, 0} // the cached worker is full
	pol := mustNew("kv-admission", params(1))
	d := pol.Route(&Request{InputTokens: 640}, v)
	if d.Worker != 1 || !math.IsInf(d.Scores[0], 1) {
		t.Errorf("chose %d with scores %v; the busy worker must be excluded", d.Worker, d.Scores)
	}
	v.active[1] = 1000
	d = pol.Route(&Request{InputTokens: 640}, v)
	if d.Action != RejectBusy || d.Reason != MsgAllBusy {
		t.Errorf("all busy: %+v", d)
	}
}

func TestKVBackpressureParksThenRejects(t *testing.T) {
	v := newFakeView(2)
	v.prefill = []int{16*2048 + 1, 100}
	p := params(1)
	p.MaxQueuedISLTokens = 5000
	pol := mustNew("kv-backpressure", p)
	if d := pol.Route(&Request{InputTokens: 640}, v); d.Worker != 1 {
		t.Errorf("one worker below θ: %+v", d)
	}
	v.prefill[1] = 16*2048 + 1
	if d := pol.Route(&Request{InputTokens: 640}, v); d.Action != Park {
		t.Errorf("all prefill-busy: %+v, want park", d)
	}
	v.queued = 5000
	d := pol.Route(&Request{InputTokens: 640}, v)
	want := "router backpressure: MaxQueuedIslTokensExceeded (queued_isl_tokens=5000, max_queued_isl_tokens=5000)"
	if d.Action != RejectBackpressure || d.Reason != want {
		t.Errorf("queue at its bound: %+v", d)
	}
	if d := pol.Route(&Request{InputTokens: 640, Parked: true}, v); d.Action != Park {
		t.Errorf("an already parked request must stay parked, not be rejected: %+v", d)
	}
}

func TestBaselines(t *testing.T) {
	v := newFakeView(4)
	v.inFlight = []int{3, 1, 2, 5}
	if d := mustNew("least-loaded", params(1)).Route(&Request{}, v); d.Worker != 1 {
		t.Errorf("least-loaded chose %d", d.Worker)
	}
	p2 := mustNew("power-of-two", params(2))
	counts := make([]float64, 4)
	for i := 0; i < 12_000; i++ {
		counts[p2.Route(&Request{}, v).Worker]++
	}
	// Worker w wins the pairs it forms with more loaded workers, of 6 pairs.
	if counts[3] != 0 {
		t.Errorf("the most loaded worker won %v times", counts[3])
	}
	chiSquareOK(t, counts[:3], []float64{1.0 / 6, 3.0 / 6, 2.0 / 6})
	rnd := mustNew("random", params(3))
	counts = make([]float64, 4)
	for i := 0; i < 10_000; i++ {
		counts[rnd.Route(&Request{}, v).Worker]++
	}
	chiSquareOK(t, counts, []float64{0.25, 0.25, 0.25, 0.25})
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}
