package policy

import (
	"math"
	"strings"
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

// TestReleaseDefaults: kv as each release ships it (policy/dynamo.go's
// table, read from the sources its Sources cite), and every default
// overridden by a parameter set explicitly (≥ 0).
func TestReleaseDefaults(t *testing.T) {
	for _, tc := range []struct {
		version      string
		queue        float64 // 0 = no router queue
		decode, frac float64
		abs          int
		gate         GateRule
		code         int
		msg          string
		treeTie      bool
	}{
		{"0.9.0", 0, 0, 0, 0, NoGate, 503, "Service temporarily unavailable: All workers are busy, please retry later", true},
		{"1.2.0", 4, 1, 10, 10_000_000, FleetGate, 503, "ResourceExhausted: All workers are busy, please retry later", false},
		{"1.2", 4, 1, 10, 10_000_000, FleetGate, 503, "ResourceExhausted: All workers are busy, please retry later", false},
		{"", 4, 1, 10, 10_000_000, FleetGate, 503, "ResourceExhausted: All workers are busy, please retry later", false},
		{"1.4.0", 0, 0, 0, 0, ExcludeBusy, 529, "Service temporarily overloaded", false},
	} {
		p := params(1)
		p.DynamoVersion = tc.version
		k := mustNew("kv", p).(*KV)
		q := 0.0
		if k.Queue != nil {
			q = k.Queue.Threshold
		}
		a := k.Admit
		if q != tc.queue || a.DecodeBlocksFrac != tc.decode || a.PrefillTokensFrac != tc.frac || a.PrefillTokens != tc.abs ||
			a.Gate != tc.gate || a.OverloadMessage != tc.msg || k.Release.OverloadCode != tc.code || k.Release.TreeSizeTieBreak != tc.treeTie {
			t.Errorf("Dynamo %q: queue %g, admission %+v, code %d, tree tie %v", tc.version, q, a, k.Release.OverloadCode, k.Release.TreeSizeTieBreak)
		}
		if a.Armed() != (tc.decode > 0 && tc.gate != NoGate) {
			t.Errorf("Dynamo %q: armed %v", tc.version, a.Armed())
		}
		// Every default can be overridden by its flag, off included.
		p.RouterQueueThreshold, p.ActiveDecodeBlocksThreshold, p.ActivePrefillTokensThreshold, p.ActivePrefillTokensThresholdFrac = 2, 0.5, 7, 0
		k = mustNew("kv", p).(*KV)
		if k.Queue == nil || k.Queue.Threshold != 2 || k.Admit.DecodeBlocksFrac != 0.5 || k.Admit.PrefillTokens != 7 || k.Admit.PrefillTokensFrac != 0 {
			t.Errorf("Dynamo %q overridden: queue %+v, admission %+v", tc.version, k.Queue, k.Admit)
		}
	}
	if _, err := ReleaseOf("1.3.0"); err == nil || !strings.Contains(err.Error(), "supported releases: 0.9.0, 1.2.0, 1.4.0") {
		t.Errorf("an unmodelled release: %v", err)
	}
	for _, bad := range []string{"1", "x.y", "1.2.3.4", "-1.2"} {
		if _, err := ReleaseOf(bad); err == nil {
			t.Errorf("version %q accepted", bad)
		}
	}
}

// TestRecipes: kv-admission is kv without the router queue, kv-backpressure
// kv without the busy monitor (queue at the release's threshold, 4 where
// the release ships none).
func TestRecipes(t *testing.T) {
	for _, version := range []string{"0.9.0", "1.2.0", "1.4.0"} {
		p := params(1)
		p.DynamoVersion = version
		adm := mustNew("kv-admission", p).(*KV)
		full := mustNew("kv", p).(*KV)
		if adm.Queue != nil || adm.Admit != full.Admit {
			t.Errorf("%s kv-admission: queue %+v, admission %+v (kv's %+v)", version, adm.Queue, adm.Admit, full.Admit)
		}
		bp := mustNew("kv-backpressure", p).(*KV)
		want := 4.0
		if full.Queue != nil {
			want = full.Queue.Threshold
		}
		if bp.Queue == nil || bp.Queue.Threshold != want || bp.Admit.Armed() {
			t.Errorf("%s kv-backpressure: queue %+v, admission %+v", version, bp.Queue, bp.Admit)
		}
	}
}

// TestKVExcludesOverloadedOnlyWhereTheReleaseDoes: v1.4 (with thresholds
// set) skips the monitor's overloaded workers and refuses with 529's
// message when all are; v1.2 chooses among every worker (its router stage
// refuses, after booking, only when the free set is empty); v0.9 never
// looks.
func TestKVExcludesOverloadedOnlyWhereTheReleaseDoes(t *testing.T) {
	v := newFakeView(2)
	v.overlap = []int{5, 0} // worker 0 is the cheaper one
	v.overloaded = []bool{true, false}
	for _, tc := range []struct {
		version string
		want    int
	}{{"1.4.0", 1}, {"1.2.0", 0}, {"0.9.0", 0}} {
		p := params(1)
		p.DynamoVersion, p.ActiveDecodeBlocksThreshold = tc.version, 1
		pol := mustNew("kv", p)
		if d := pol.Route(&Request{InputTokens: 640}, v); d.Action != Dispatch || d.Worker != tc.want {
			t.Errorf("%s: %+v, want worker %d", tc.version, d, tc.want)
		}
	}
	v.overloaded[1] = true
	p := params(1)
	p.DynamoVersion, p.ActiveDecodeBlocksThreshold = "1.4.0", 1
	if d := mustNew("kv", p).Route(&Request{InputTokens: 640}, v); d.Action != RejectBusy || d.Reason != "Service temporarily overloaded" {
		t.Errorf("1.4, all overloaded: %+v", d)
	}
	// Without thresholds v1.4's monitor is off: nothing is excluded.
	p.ActiveDecodeBlocksThreshold = -1
	if d := mustNew("kv", p).Route(&Request{InputTokens: 640}, v); d.Action != Dispatch {
		t.Errorf("1.4 with its defaults (no thresholds): %+v", d)
	}
}

// TestV09TieBreak: v0.9's scheduler breaks cost ties by the smallest prefix
// index (scheduler.rs, see policy/dynamo.go), not a uniform draw.
func TestV09TieBreak(t *testing.T) {
	v := newFakeView(4)
	v.stored = []int{30, 10, 20, 10}
	p := params(1)
	p.DynamoVersion = "0.9.0"
	pol := mustNew("kv", p)
	for range 20 {
		if d := pol.Route(&Request{InputTokens: 640}, v); d.Worker != 1 {
			t.Fatalf("tie at cost: chose %d, want 1 (fewest stored blocks, then lowest index)", d.Worker)
		}
	}
	v.active[1] = 1
	if d := pol.Route(&Request{InputTokens: 640}, v); d.Worker != 3 {
		t.Errorf("worker 1 costlier: chose %d, want 3", d.Worker)
	}
}

func TestKVBackpressureParksThenRejects(t *testing.T) {
	v := newFakeView(2)
	v.prefill = []int{16*2048 + 1, 100}
	p := params(1)
	p.MaxQueuedISLTokens, p.RouterQueueThreshold = 5000, 16
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
