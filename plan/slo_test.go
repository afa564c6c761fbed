package plan

import (
	"math"
	"testing"

	"github.com/routesim/routesim/sim"
)

// rec is a request that arrived at 0: ttft and e2e in ms (ttft < 0 = not
// completed), osl output tokens.
func rec(ttft, e2e float64, osl int) sim.Record {
	r := sim.Record{Arrival: 0, FirstToken: -1, End: -1, OutputTokens: osl, Status: sim.StatusRejectedBusy}
	if ttft >= 0 {
		r.Status = sim.StatusOK
		r.FirstToken = sim.Time(ttft * 1e6)
		r.End = sim.Time(e2e * 1e6)
	}
	return r
}

func TestEvaluateCountsRejectionsAsViolations(t *testing.T) {
	// 20 requests: 19 complete with TTFT 100..1900 ms, one is rejected.
	var recs []sim.Record
	for i := 1; i <= 19; i++ {
		recs = append(recs, rec(float64(100*i), float64(100*i)+990, 100)) // ITL = 990/99 = 10 ms
	}
	recs = append(recs, rec(-1, 0, 100))
	res := &sim.Result{Records: recs, Makespan: 10 * sim.Second}
	for _, c := range []struct {
		name string
		slo  SLO
		met  bool
	}{
		{"p95 over offered is 1900 + 0.05·∞ → ∞", SLO{TTFTP95Ms: 5000}, false},
		{"completeness 95 % meets 0.95", SLO{MinCompleteness: 0.95}, true},
		{"completeness 95 % misses 0.96", SLO{MinCompleteness: 0.96}, false},
		{"goodput alone: 19 of 20 completed, no latency objective", SLO{MinGoodput: 0.95}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := Evaluate(res, c.slo)
			if st.Met != c.met {
				t.Errorf("met = %v, want %v (%+v)", st.Met, c.met, st)
			}
		})
	}
	st := Evaluate(res, SLO{TTFTP95Ms: 1000})
	if st.TTFTP95Ms != nil {
		t.Errorf("TTFT p95 over offered with 1 of 20 rejected = %v, want ∞ (nil)", *st.TTFTP95Ms)
	}
	if st.Goodput != 0.5 || st.Completeness != 0.95 || st.Completed != 19 || st.Offered != 20 {
		t.Errorf("goodput %g (want 10/20), completeness %g, completed %d, offered %d", st.Goodput, st.Completeness, st.Completed, st.Offered)
	}
	if st.ITLP95Ms != nil {
		t.Errorf("ITL p95 over offered with a rejection should be ∞, got %v", *st.ITLP95Ms)
	}
}

func TestEvaluatePercentilesOverOffered(t *testing.T) {
	var recs []sim.Record
	for i := 1; i <= 100; i++ {
		recs = append(recs, rec(float64(i), float64(i)+99*5, 100)) // ITL 5 ms
	}
	st := Evaluate(&sim.Result{Records: recs}, SLO{TTFTP95Ms: 95.05, ITLP95Ms: 5})
	if st.TTFTP95Ms == nil || math.Abs(*st.TTFTP95Ms-95.05) > 1e-9 {
		t.Fatalf("TTFT p95 of 1..100 ms = %v, want 95.05 (type-7 interpolation)", st.TTFTP95Ms)
	}
	if !st.Met || math.Abs(*st.ITLP95Ms-5) > 1e-9 {
		t.Errorf("met %v, ITL p95 %v", st.Met, *st.ITLP95Ms)
	}
	if Evaluate(&sim.Result{Records: recs}, SLO{TTFTP95Ms: 95}).Met {
		t.Error("95.05 ms p95 passed a 95 ms objective")
	}
}

func TestSLOValidateAndMargin(t *testing.T) {
	for _, bad := range []SLO{{}, {TTFTP95Ms: -1}, {MinCompleteness: 1.5}, {E2EP95Ms: math.NaN()}, {ITLP95Ms: math.Inf(1)}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	v := 800.0
	s := SLO{TTFTP95Ms: 1000, MinCompleteness: 0.9}
	if m := s.Margin(Stats{TTFTP95Ms: &v, Completeness: 0.99}); math.Abs(m-0.1) > 1e-12 {
		t.Errorf("margin = %g, want 0.1 (completeness 10 %% over, TTFT 20 %% under)", m)
	}
	if m := s.Margin(Stats{Completeness: 1}); !math.IsInf(m, -1) {
		t.Errorf("margin with an infinite p95 = %g, want −∞", m)
	}
}

// The cost window is what the counted requests span: after a warm-up the
// run's makespan would charge the warm-up's GPU time to fewer requests.
func TestEvaluateDurationIsTheCountedWindow(t *testing.T) {
	var recs []sim.Record
	for i := 0; i < 10; i++ {
		r := rec(100, 400, 10)
		r.Arrival += sim.Time(60+i) * sim.Second
		r.FirstToken += r.Arrival
		r.End += r.Arrival
		recs = append(recs, r)
	}
	st := Evaluate(&sim.Result{Records: recs, Makespan: 100 * sim.Second}, SLO{MinCompleteness: 1})
	if want := 9.4; math.Abs(st.DurationS-want) > 1e-9 {
		t.Errorf("duration %g s, want %g (60 s to 69.4 s, not the 100 s makespan)", st.DurationS, want)
	}
}
