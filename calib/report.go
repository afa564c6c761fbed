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

// Coef reports one coefficient: where the fit started, where it ended,
// its physical floor, its prior and posterior spread, and whether the runs
// identify it.
type Coef struct {
	Name   string  `json:"name"`
	Fitted bool    `json:"fitted"`
	Start  float64 `json:"start"`
	Value  float64 `json:"value"`
	Floor  float64 `json:"physical_floor"`
	// PriorSDPct and PosteriorSDPct are one standard deviation as a
	// percentage (e^sd − 1 of the log-normal); nil without a posterior.
	PriorSDPct     *float64 `json:"prior_sd_pct"`
	PosteriorSDPct *float64 `json:"posterior_sd_pct"`
	// Identified: the runs pin it (posterior sd ≤ 2.5 %); Narrowed: they
	// at least narrowed its prior (posterior sd < 70 % of the prior's).
	Identified bool   `json:"identified"`
	Narrowed   bool   `json:"narrowed"`
	PriorNote  string `json:"prior_source,omitempty"`
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

// Worst is the row with the largest |error| (the zero Row if none).
func (r *Report) Worst() Row {
	var w Row
	for _, row := range r.Rows {
		if math.Abs(row.ErrPct) > math.Abs(w.ErrPct) {
			w = row
		}
	}
	return w
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
func (f *fitter) report(p, start *model.Profile, x []float64, post *model.Posterior, opt Options) *Report {
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
	fitted := map[string]bool{}
	for _, c := range f.coefs {
		fitted[c.name] = true
		row := Coef{Name: c.name, Fitted: true, Start: *c.field(start), Value: *c.field(p), Floor: c.floor}
		if pr, ok := f.priors[c.name]; ok {
			row.PriorNote = pr.Source
		}
		rep.Coefs = append(rep.Coefs, row)
	}
	if post == nil {
		return rep
	}
	pct := func(sd float64) *float64 { v := 100 * (math.Exp(sd) - 1); return &v }
	sds := post.SD()
	for i, name := range post.Params {
		k := -1
		for j := range rep.Coefs {
			if rep.Coefs[j].Name == name {
				k = j
			}
		}
		if k < 0 {
			c := mustCoef(name)
			rep.Coefs = append(rep.Coefs, Coef{Name: name, Start: *c.Field(start), Value: *c.Field(p), Floor: model.Floor(f.arms[0].built.Deploy, p, name), PriorNote: f.priors[name].Source})
			k = len(rep.Coefs) - 1
		}
		rep.Coefs[k].PriorSDPct, rep.Coefs[k].PosteriorSDPct = pct(post.PriorSDLog[i]), pct(sds[i])
		rep.Coefs[k].Identified, rep.Coefs[k].Narrowed = post.Identified[i], post.Narrowed[i]
	}
	var not, partly []string
	for _, c := range rep.Coefs {
		switch {
		case !c.Fitted || c.PosteriorSDPct == nil || c.Identified:
		case c.Narrowed:
			partly = append(partly, fmt.Sprintf("%s (±%.0f%%)", c.Name, *c.PosteriorSDPct))
		default:
			not = append(not, c.Name)
		}
	}
	if len(partly) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("narrowed but not pinned by these runs (posterior sd > %.1f %%): %s", 100*(math.Exp(model.IdentifiedSD)-1), strings.Join(partly, ", ")))
	}
	if len(not) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("not identified by these runs (posterior sd ≥ %.0f %% of the prior's): %s; predictions that depend on them carry the prior's uncertainty",
			100*model.NarrowedShare, strings.Join(not, ", ")))
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
	b.WriteString("coefficient                         start         fitted   physical floor   prior sd  posterior sd  identified\n")
	for _, c := range r.Coefs {
		prior, postSD, id := "-", "-", "-"
		if c.PriorSDPct != nil {
			prior, postSD = fmt.Sprintf("%.0f%%", *c.PriorSDPct), fmt.Sprintf("%.1f%%", *c.PosteriorSDPct)
			switch {
			case !c.Fitted:
				id = "prior only"
			case c.Identified:
				id = "yes"
			case c.Narrowed:
				id = "partly"
			default:
				id = "no"
			}
		}
		fmt.Fprintf(&b, "  %-30s %12.4g  %12.4g  %12.4g   %8s  %12s  %s\n", c.Name, c.Start, c.Value, c.Floor, prior, postSD, id)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	return b.String()
}
