package scenario

import (
	"slices"
	"testing"

	"github.com/routesim/routesim/workload"
)

// TestSyntheticStreamPerSeed: a synthetic workload is its seed's own draw
// (as vllm bench serve's --seed), the spec's seed giving the built stream
// and every call with one seed the same stream; a trace is one stream.
func TestSyntheticStreamPerSeed(t *testing.T) {
	s := Defaults()
	s.Workload, s.Seed = "synthetic", 3
	s.Synthetic = workload.Synthetic{Requests: 50, RatePerS: 4}
	b, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	arrivals := func(seed uint64) []int64 {
		wl, _, err := b.ForSeed(seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, j := range wl.Jobs {
			out = append(out, int64(j.Arrival))
		}
		return out
	}
	base, again, other := arrivals(3), arrivals(3), arrivals(4)
	if len(base) != 50 || !slices.Equal(base, again) {
		t.Fatalf("seed 3 gave %d arrivals, then a different stream", len(base))
	}
	if slices.Equal(base, other) {
		t.Error("seeds 3 and 4 drew the same synthetic stream")
	}
	if b.Work == nil || len(b.Work.Jobs) != 50 || int64(b.Work.Jobs[7].Arrival) != base[7] {
		t.Error("the built stream is not the spec seed's")
	}

	s = Defaults() // a trace: every seed replays it
	s.First = 40
	tb, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	w1, _, _ := tb.ForSeed(1, 0)
	w2, _, _ := tb.ForSeed(2, 0)
	if w1 != w2 {
		t.Error("a trace replay built two workloads for two seeds")
	}
}
