package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
)

func bandsSpec() Spec {
	s := Defaults()
	s.Trace, s.MaxISL, s.Skip, s.First, s.RateScale, s.MaxModelLen = "arxiv-window", 16384, 60, 300, 0.7365, 16384
	return s
}

// TestBandsDeterministic: the same seed gives the same bands to the
// bit, whatever the parallelism, and a band holds its draws' spread.
func TestBandsDeterministic(t *testing.T) {
	s := bandsSpec()
	b, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	one, _, err := b.Run(3).Bands(8, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	many, _, err := b.Run(3).Bands(8, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := json.Marshal(one)
	j2, _ := json.Marshal(many)
	if string(j1) != string(j2) {
		t.Errorf("jobs 1 and 4 differ:\n%s\n%s", j1, j2)
	}
	other, _, _ := b.Run(4).Bands(8, 2, nil)
	if j3, _ := json.Marshal(other); string(j3) == string(j1) {
		t.Error("seed 4 gave seed 3's bands")
	}
	p50 := one.Bands["ttft_ms.p50"]
	if p50[0] == nil || p50[1] == nil || *p50[0] >= *p50[1] {
		t.Errorf("ttft_ms.p50 band %v", p50)
	}
	if one.Draws != 8 || one.ModelError <= 0 {
		t.Errorf("bands %+v", one)
	}
}

// TestBandsNeedsAPosterior: a linear profile without one is refused.
func TestBandsNeedsAPosterior(t *testing.T) {
	s := bandsSpec()
	s.GPU, s.Model, s.Profile = "A100-SXM4-80GB", "Llama-3.1-8B", "blis" // BLIS's published linear fit
	b, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Run(0).Bands(4, 1, nil); err == nil {
		t.Errorf("profile %s (no posterior) gave bands", b.Profile.Name)
	}
}

// BenchmarkRunOne and BenchmarkRunBands20 compare one replay of 300
// arXiv-window requests on 8 A100s with the same replay plus 20 posterior
// draws (issue 10's target: at most 25× one run).
func BenchmarkRunOne(b *testing.B) {
	s := bandsSpec()
	built, err := s.Build(nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := built.Run(0).Exec(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunBands20(b *testing.B) {
	s := bandsSpec()
	built, err := s.Build(nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := built.Run(0).Bands(20, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuildRefusesFasterThanHardware: a profile that prices a prefill
// chunk above the GPU's peak FLOP/s is refused, naming the limit.
func TestBuildRefusesFasterThanHardware(t *testing.T) {
	s := bandsSpec()
	b, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	fast := *b.Profile
	fast.StepBaseNs, fast.LinearScale, fast.PrefillAttnNsPerPair = 1, 1e-6, 0
	if _, err := s.Build(&fast); err == nil || !strings.Contains(err.Error(), "peak FLOP/s") {
		t.Errorf("a faster-than-hardware profile: %v", err)
	}
}

// TestFailingDrawStopsTheOthers: the first draw to fail is the error, at
// once: with one job, no draw after it starts (each is never told of one),
// and the error names the draw.
func TestFailingDrawStopsTheOthers(t *testing.T) {
	s := bandsSpec()
	b, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := *b.Profile // valid, but a 2,048-token prefill chunk takes 67 minutes
	bad.PrefillNsPerToken, bad.PrefillAttnNsPerPair = model.MaxPerTokenNs, model.MaxPerPairNs
	if err := bad.Validate(); err != nil {
		t.Fatal(err)
	}
	profiles := []*model.Profile{b.Profile, &bad, b.Profile, b.Profile, b.Profile}
	var ran []int
	_, err = b.Run(3).runDraws(profiles, 1, func(i int, _ *sim.Result) { ran = append(ran, i) })
	if err == nil || !strings.Contains(err.Error(), "draw 2 of 5: ") || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("error %v, want draw 2's step past the hour", err)
	}
	if len(ran) != 1 || ran[0] != 0 {
		t.Errorf("draws %v ran to the end, want only draw 0 (the one before the failure)", ran)
	}
}
