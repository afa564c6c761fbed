package validate

import (
	"fmt"
	"math"

	"github.com/routesim/routesim/calib"
)

// Acceptance thresholds (issue 10).
const (
	// SaturatedFactor bounds predicted/measured TTFT p50 and mean on a
	// saturated run.
	SaturatedFactor = 1.5
	// SaturatedInBand is how many of a saturated run's banded statistics
	// the band must hold.
	SaturatedInBand = 2
	// UnsaturatedPct bounds |error| of every checked statistic elsewhere.
	UnsaturatedPct = 15
)

// accept applies the case's acceptance criteria to its rows.
func accept(c Case, rows []calib.PredRow) []Check {
	find := func(arm, stat string) (calib.PredRow, bool) {
		for _, r := range rows {
			if r.Arm == arm && r.Stat == stat {
				return r, true
			}
		}
		return calib.PredRow{}, false
	}
	arms := map[string]bool{}
	var order []string
	for _, r := range rows {
		if !arms[r.Arm] {
			arms[r.Arm] = true
			order = append(order, r.Arm)
		}
	}
	var out []Check
	if c.Regime != "saturated" {
		for _, arm := range order {
			for _, st := range c.Checked {
				r, ok := find(arm, st)
				if !ok {
					continue
				}
				out = append(out, Check{Name: arm + " " + st, Pass: math.Abs(r.ErrPct) <= UnsaturatedPct,
					What: fmt.Sprintf("|error| %.1f %% ≤ %g %%", math.Abs(r.ErrPct), float64(UnsaturatedPct))})
			}
		}
		return out
	}
	sat := map[string]bool{}
	for _, a := range c.SaturatedRuns {
		sat[a] = true
	}
	for _, arm := range order {
		if len(sat) > 0 && !sat[arm] {
			continue
		}
		for _, st := range []string{"ttft_ms_p50", "ttft_ms_avg"} {
			r, ok := find(arm, st)
			if !ok {
				out = append(out, Check{Name: arm + " " + st, What: "not measured"})
				continue
			}
			out = append(out, Check{Name: arm + " " + st, Pass: r.Ratio <= SaturatedFactor && r.Ratio >= 1/SaturatedFactor,
				What: fmt.Sprintf("predicted/measured %.2f within ×%g", r.Ratio, SaturatedFactor)})
		}
		in, n := 0, 0
		for _, st := range c.SaturatedStats {
			if r, ok := find(arm, st); ok {
				n++
				if r.InBand {
					in++
				}
			}
		}
		out = append(out, Check{Name: arm + " band", Pass: in >= SaturatedInBand,
			What: fmt.Sprintf("10–90 %% band holds %d of %d saturated statistics (need %d)", in, n, SaturatedInBand)})
	}
	return out
}
