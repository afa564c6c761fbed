package calib

import (
	"fmt"
	"math"
	"strings"

	"github.com/routesim/routesim/model"
)

// Row compares one statistic of one arm.
type Row struct {
	Arm       string  `json:"arm"`
	Stat      string  `json:"stat"`
	Measured  float64 `json:"measured"`
	Simulated float64 `json:"simulated"`
	ErrPct    float64 `json:"error_pct"`
}

// Coef reports one fitted coefficient.
type Coef struct {
	Name  string  `json:"name"`
	Start float64 `json:"start"`
	Value float64 `json:"value"`
	Floor float64 `json:"physical_floor"`
	// UncertaintyPct is the smallest relative change that raises the loss
	// by 10 % (nil: not even ±50 % does; the fit does not constrain it).
	UncertaintyPct *float64 `json:"uncertainty_pct"`
}

// Report is a fit's account of itself.
type Report struct {
	Rows  []Row    `json:"rows"`
	Coefs []Coef   `json:"coefficients"`
	Loss  float64  `json:"loss"`
	Evals int      `json:"evaluations"`
	Notes []string `json:"notes"`
}

// MaxAbsErrPct is the largest |error| over rows.
func (r *Report) MaxAbsErrPct() float64 {
	m := 0.0
	for _, row := range r.Rows {
		m = math.Max(m, math.Abs(row.ErrPct))
	}
	return m
}

// MeanAbsErrPct is the mean |error| over rows.
func (r *Report) MeanAbsErrPct() float64 {
	if len(r.Rows) == 0 {
		return 0
	}
	s := 0.0
	for _, row := range r.Rows {
		s += math.Abs(row.ErrPct) / float64(len(r.Rows))
	}
	return s
}

// Find returns the row for an arm and statistic.
func (r *Report) Find(arm, stat string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Arm == arm && row.Stat == stat {
			return row, true
		}
	}
	return Row{}, false
}

// report re-simulates the fitted profile (with its σ, averaged over seeds)
// and compares every statistic.
func (f *fitter) report(p, start *model.Profile, x, unc []float64, opt Options) *Report {
	rep := &Report{}
	seeds := 1
	if p.NoiseSigma > 0 {
		seeds = opt.Seeds
	}
	per := make([][]Stats, len(f.arms))
	for s := 0; s < seeds; s++ {
		stats, _, err := f.simulate(p, uint64(s))
		if err != nil {
			rep.Notes = append(rep.Notes, "re-simulation failed: "+err.Error())
			return rep
		}
		for i := range f.arms {
			per[i] = append(per[i], stats[i])
		}
	}
	for i, a := range f.arms {
		simMean, _ := meanStats(per[i])
		for _, k := range statOrder {
			m, ok := a.measured[k]
			s, ok2 := simMean[k]
			if !ok || !ok2 || m == 0 {
				continue
			}
			rep.Rows = append(rep.Rows, Row{Arm: a.name, Stat: k, Measured: m, Simulated: s, ErrPct: 100 * (s - m) / m})
		}
	}
	for i, c := range f.coefs {
		var u *float64
		if !math.IsInf(unc[i], 1) {
			v := 100 * unc[i]
			u = &v
		}
		rep.Coefs = append(rep.Coefs, Coef{Name: c.name, Start: *c.field(start), Value: *c.field(p), Floor: c.floor, UncertaintyPct: u})
	}
	return rep
}

// String renders the report as a table.
func (r *Report) String() string {
	var b strings.Builder
	b.WriteString("statistic                      measured    simulated   error\n")
	arm := ""
	for _, row := range r.Rows {
		if row.Arm != arm {
			arm = row.Arm
			fmt.Fprintf(&b, "[%s]\n", arm)
		}
		fmt.Fprintf(&b, "  %-26s %10.4g  %10.4g  %+6.1f%%\n", row.Stat, row.Measured, row.Simulated, row.ErrPct)
	}
	fmt.Fprintf(&b, "max |error| %.1f%%, mean |error| %.1f%%; loss %.4g after %d evaluations\n\n", r.MaxAbsErrPct(), r.MeanAbsErrPct(), r.Loss, r.Evals)
	b.WriteString("coefficient                         start         fitted   physical floor   ±(loss +10%)\n")
	for _, c := range r.Coefs {
		u := "unconstrained"
		if c.UncertaintyPct != nil {
			u = fmt.Sprintf("%.0f%%", *c.UncertaintyPct)
		}
		fmt.Fprintf(&b, "  %-30s %12.4g  %12.4g  %12.4g   %s\n", c.Name, c.Start, c.Value, c.Floor, u)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	return b.String()
}
