package sim_test

import (
	"math"
	"testing"

	"github.com/routesim/routesim/model"
	. "github.com/routesim/routesim/sim"
)

// TestFLOPPowerMatchesItsSamples: with an energy per FLOP and a power
// limit, the summary's mean and peak power are those of the sampled
// windows (the running sums and the kept series agree), prefill-heavy
// windows draw more than the utilisation line alone, and none passes the
// limit; without them, power is the utilisation line exactly as before.
func TestFLOPPowerMatchesItsSamples(t *testing.T) {
	var reqs []treq
	for i := range 40 {
		reqs = append(reqs, treq{at: Time(i) * 50 * Millisecond, isl: 3000, osl: 40})
	}
	run := func(p *model.Profile) *Result {
		cfg := testConfig(2).WithProfile(p)
		cfg.NVML = NVMLConfig{Series: true}
		res, _ := simulate(t, cfg, mkTrace(reqs...))
		return res
	}
	line := testProfile()
	line.PowerIdleW, line.PowerBusyW = 80, 400
	flop := *line
	flop.FLOPsPerToken, flop.FLOPsPerSeq, flop.AttnFLOPsPerPair = 16e9, 1e9, 1e6
	flop.PowerPJPerFLOP, flop.PowerCapW = 50, 700 // prefill windows reach the limit
	for _, tc := range []struct {
		name string
		p    *model.Profile
	}{{"utilisation line", line}, {"FLOP rate and limit", &flop}} {
		res := run(tc.p)
		st := Summarize(res).GPU
		g := res.GPU
		mean, peak, above := 0.0, 0.0, 0
		for w := range g.Util {
			sum := 0.0
			for k, u := range g.Util[w] {
				f := 0.0
				if g.FLOPS[w] != nil {
					f = g.FLOPS[w][k]
				}
				p := tc.p.PowerAt(u, f)
				if p > tc.p.PowerW(u)+1e-9 {
					above++
				}
				if tc.p.PowerCapW > 0 && p > tc.p.PowerCapW+1e-9 {
					t.Errorf("%s: window %d of worker %d draws %.1f W over the %g W limit", tc.name, k, w, p, tc.p.PowerCapW)
				}
				sum += p
				peak = math.Max(peak, p)
			}
			mean += sum / float64(len(g.Util[w])) / float64(len(g.Util))
		}
		if math.Abs(st.PowerMeanW-mean) > 1e-6*mean || math.Abs(st.PowerMaxW-peak) > 1e-6*peak {
			t.Errorf("%s: summary power mean %.4f max %.4f, samples give %.4f and %.4f", tc.name, st.PowerMeanW, st.PowerMaxW, mean, peak)
		}
		if tc.p == line && above > 0 {
			t.Errorf("%s: %d windows above the utilisation line", tc.name, above)
		}
		if tc.p != line && (above == 0 || peak != tc.p.PowerCapW) {
			t.Errorf("%s: %d windows above the utilisation line, peak %.1f W: the FLOPs were not counted or the limit not reached", tc.name, above, peak)
		}
	}
}
