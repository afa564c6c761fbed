package sim

import (
	"slices"
	"testing"
)

// TestBandsPlace: Place names the estimate and lists exactly the
// statistics whose estimate lies outside a defined band.
func TestBandsPlace(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	b := &Bands{Bands: map[string][2]*float64{
		"ttft_ms.avg":    {f(10), f(20)}, // estimate 25: above
		"itl_ms.avg":     {f(1), f(3)},   // estimate 2: inside
		"e2e_ms.avg":     {f(5), f(6)},   // estimate 4: below
		"completeness":   {f(0.9), nil},  // an undefined end: left out
		"requests_per_s": {f(1), f(1)},   // estimate 1: on both ends, inside
	}}
	s := &Summary{Completeness: 0.5, RequestsPerS: 1}
	s.TTFTMs.Avg, s.ITLMs.Avg, s.E2EMs.Avg = 25, 2, 4
	b.Place("the run at the MAP estimate", s)
	if want := []string{"ttft_ms.avg", "e2e_ms.avg"}; !slices.Equal(b.Outside, want) {
		t.Errorf("outside %v, want %v", b.Outside, want)
	}
	if b.Estimate != "the run at the MAP estimate" || b.WhyOutside != WhyOutside {
		t.Errorf("estimate %q, why %q", b.Estimate, b.WhyOutside)
	}
}
