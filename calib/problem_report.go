package calib

import (
	"math"

	"github.com/routesim/routesim/model"
)

// Report is the solution's account of itself (the fit report every
// source can print): each compared figure measured against simulated at
// the estimate, and each fitted coefficient from its start to its value
// with its prior and posterior spread. d gives the coefficients' physical
// floors.
func (s *Solution) Report(pr *Problem, d model.Deployment) *Report {
	rep := &Report{Evals: s.Evals}
	for _, r := range s.Residuals {
		rep.Rows = append(rep.Rows, Row{Arm: r.Arm, Stat: r.Stat, Measured: r.Measured, Simulated: r.Simulated, ErrPct: PctErr(r.Simulated, r.Measured)})
		rep.Loss += r.R * r.R
	}
	pct := func(sd float64) *float64 { v := 100 * math.Expm1(sd); return &v }
	for i, c := range pr.Coefficients {
		row := Coef{Name: c.Name, Fitted: true, Start: c.Start, Value: *mustCoef(c.Name).Field(s.Profile), Floor: model.Floor(d, s.Profile, c.Name)}
		if c.Prior != nil {
			row.PriorNote = c.Prior.Source
		}
		if i < len(s.SD) && c.Prior != nil { // Report.String shows both spreads or neither
			row.PriorSDPct, row.PosteriorSDPct = pct(s.PriorSD[i]), pct(s.SD[i])
			row.Identified = s.SD[i] <= model.IdentifiedSD
			row.Narrowed = s.SD[i] < model.NarrowedShare*s.PriorSD[i]
		}
		rep.Coefs = append(rep.Coefs, row)
	}
	return rep
}
