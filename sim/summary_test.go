package sim_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	. "github.com/routesim/routesim/sim"
)

func TestQuantile7MatchesNumpy(t *testing.T) {
	x := []float64{1, 2, 3, 4, 10}
	for _, tc := range []struct{ p, want float64 }{
		// numpy.percentile([1,2,3,4,10], q) for q = 0, 10, 50, 90, 99, 100
		{0, 1}, {0.10, 1.4}, {0.50, 3}, {0.90, 7.6}, {0.99, 9.76}, {1, 10},
	} {
		if got := Quantile7(x, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile7(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	inf := []float64{1, 2, math.Inf(1), math.Inf(1)}
	if got := Quantile7(inf, 0.5); !math.IsInf(got, 1) {
		t.Errorf("median reaching a rejection = %v, want +Inf", got)
	}
	if got := Quantile7(inf, 1.0/3); got != 2 {
		t.Errorf("p33 = %v, want 2", got)
	}
}

func TestDistJSONHasAIPerfKeysAndNullForEmpty(t *testing.T) {
	b, err := json.Marshal(NewDist([]float64{3, 1, 2}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"count", "avg", "min", "max", "std", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %q in %s", k, b)
		}
	}
	if m["p50"] != 2 || m["sum"] != 6 || math.Abs(m["std"]-math.Sqrt(2.0/3)) > 1e-12 {
		t.Errorf("values %s (std must be the population std, as numpy's)", b)
	}
	empty, _ := json.Marshal(NewDist(nil))
	if !strings.Contains(string(empty), `"p50":null`) {
		t.Errorf("empty sample: %s", empty)
	}
}

func TestSummaryCountsAndThroughput(t *testing.T) {
	res := &Result{
		Records: []Record{
			{ID: 0, Arrival: 0, QueueNs: -1, FirstToken: 100 * Millisecond, SecondToken: 150 * Millisecond, End: 200 * Millisecond, OutputTokens: 3, InputTokens: 10, Status: StatusOK, Worker: 0},
			{ID: 1, Arrival: 0, QueueNs: -1, FirstToken: -1, SecondToken: -1, End: 0, OutputTokens: 5, InputTokens: 10, Status: StatusRejectedBusy, Worker: -1, Reason: "busy"},
		},
		Workers:  []WorkerStats{{BusyNs: 100 * Millisecond, Steps: 4, PromptTokens: 10, CachedTokens: 5, KVBlocks: 10, PeakBlocksUsed: 5}},
		Makespan: 200 * Millisecond,
	}
	s := Summarize(res)
	if s.Completed != 1 || s.Rejected["rejected-busy"] != 1 || s.Completeness != 0.5 {
		t.Errorf("counts: %+v", s)
	}
	if s.ITLMs.Avg != 50 || s.TTFTMs.Avg != 100 || s.E2EMs.Avg != 200 || s.TTSTMs.Avg != 50 {
		t.Errorf("latencies: ttft %v itl %v e2e %v ttst %v", s.TTFTMs.Avg, s.ITLMs.Avg, s.E2EMs.Avg, s.TTSTMs.Avg)
	}
	if s.DurationS != 0.2 || s.RequestsPerS != 5 || s.OutputTokensPerS != 15 {
		t.Errorf("throughput: %v s, %v req/s, %v tok/s", s.DurationS, s.RequestsPerS, s.OutputTokensPerS)
	}
	if s.Workers[0].BusyFraction != 0.5 || s.PrefixHitRate != 0.5 || s.Workers[0].PeakKVUse != 0.5 {
		t.Errorf("workers: %+v, hit rate %v", s.Workers, s.PrefixHitRate)
	}
	if p := s.TTFTOfferedMs["p50"]; p != nil {
		t.Errorf("offered p50 with half the requests rejected = %v, want undefined", *p)
	}
}

func TestAfterWarmupDropsEarlyArrivals(t *testing.T) {
	res := &Result{Records: []Record{{ID: 0, Arrival: 0}, {ID: 1, Arrival: 5 * Second}, {ID: 2, Arrival: 10 * Second}}}
	got := res.After(5 * Second)
	if len(got.Records) != 2 || got.Records[0].ID != 1 || len(res.Records) != 3 {
		t.Errorf("after warm-up: %+v (original %d)", got.Records, len(res.Records))
	}
	if res.After(0) != res {
		t.Error("no warm-up must return the result itself")
	}
}
