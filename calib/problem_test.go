package calib

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

// TestProblemFitIsTheConjugateAnswer: with residuals linear in the log
// parameters (log-normal data around a coefficient and a nuisance
// parameter, log-normal priors), the MAP estimate and the Laplace
// posterior are exact — precision-weighted means and sds — so the one fit
// must reproduce them, for a coefficient, a nuisance parameter, and a
// coefficient held at its floor.
func TestProblemFitIsTheConjugateAnswer(t *testing.T) {
	const sigma = 0.1
	cases := []struct {
		name        string
		data        []float64 // measured step_base_ns
		nuisance    []float64 // measured nuisance values (none: no nuisance)
		prior       model.Prior
		floor       float64
		wantAtFloor bool
	}{
		{name: "one coefficient", data: []float64{9000, 11000, 10500}, prior: model.Prior{Name: "step_base_ns", Centre: 8000, LogSD: 0.5}},
		{name: "with a nuisance", data: []float64{9000, 11000}, nuisance: []float64{300, 500, 450},
			prior: model.Prior{Name: "step_base_ns", Centre: 12000, LogSD: 0.3}},
		{name: "held at its floor", data: []float64{2000, 2100}, prior: model.Prior{Name: "step_base_ns", Centre: 5000, LogSD: 0.2},
			floor: 4000, wantAtFloor: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := &model.Profile{StepBaseNs: c.prior.Centre}
			prior := c.prior
			pr := &Problem{Base: base, Coefficients: []Param{{Name: "step_base_ns", Start: prior.Centre, Floor: c.floor, Prior: &prior}}}
			nuPrior := model.Prior{Name: "isl_mean", Centre: 400, LogSD: 1}
			if c.nuisance != nil {
				pr.Nuisance = []Param{{Name: "isl_mean", Start: 400, Prior: &nuPrior}}
			}
			pr.Residuals = func(x Candidate) ([]Residual, error) {
				var out []Residual
				for _, m := range c.data {
					out = append(out, logRatio("run", "step_base_ns", x.Profile.StepBaseNs, m, sigma))
				}
				for _, m := range c.nuisance {
					out = append(out, logRatio("run", "isl_mean", x.Nuisance[0], m, sigma))
				}
				return out, nil
			}
			sol, err := pr.Fit(MAPOptions{Iters: 50, Tries: 8})
			if err != nil {
				t.Fatal(err)
			}
			mean, sd := conjugate(c.data, sigma, prior)
			got := sol.Profile.StepBaseNs
			if c.wantAtFloor {
				if got != c.floor {
					t.Fatalf("step_base_ns %g, want its floor %g", got, c.floor)
				}
			} else if math.Abs(math.Log(got)-mean) > 1e-4 || math.Abs(sol.SD[0]-sd) > 1e-3 {
				t.Fatalf("step_base_ns %g ± %g (log), want %g ± %g", math.Log(got), sol.SD[0], mean, sd)
			}
			if c.nuisance != nil {
				nm, nsd := conjugate(c.nuisance, sigma, nuPrior)
				if math.Abs(math.Log(sol.Nuisance[0])-nm) > 1e-4 || math.Abs(sol.SD[1]-nsd) > 1e-3 {
					t.Fatalf("nuisance %g ± %g (log), want %g ± %g", math.Log(sol.Nuisance[0]), sol.SD[1], nm, nsd)
				}
			}
			post := sol.Profile.Posterior
			if post == nil || len(post.Params) != 1 || post.Params[0] != "step_base_ns" {
				t.Fatalf("posterior %+v: want step_base_ns alone (the nuisance marginalised)", post)
			}
			rep := sol.Report(pr, model.Deployment{})
			if len(rep.Rows) != len(c.data)+len(c.nuisance) || len(rep.Coefs) != 1 || rep.Coefs[0].PosteriorSDPct == nil {
				t.Fatalf("report %+v", rep)
			}
			if !strings.Contains(rep.String(), "step_base_ns") {
				t.Fatalf("report text lacks the coefficient:\n%s", rep)
			}
		})
	}
}

// conjugate is the exact posterior of a log value from log-normal data
// (sd sigma each) and a log-normal prior.
func conjugate(data []float64, sigma float64, prior model.Prior) (mean, sd float64) {
	prec := 1 / (prior.LogSD * prior.LogSD)
	sum := math.Log(prior.Centre) * prec
	for _, m := range data {
		prec += 1 / (sigma * sigma)
		sum += math.Log(m) / (sigma * sigma)
	}
	return sum / prec, 1 / math.Sqrt(prec)
}

// TestProblemFitReportsAFailedSimulation: a candidate whose residuals
// fail stops the fit with the simulation's error, never a result.
func TestProblemFitReportsAFailedSimulation(t *testing.T) {
	boom := errors.New("request 3 ended rejected")
	prior := model.Prior{Name: "step_base_ns", Centre: 8000, LogSD: 0.5}
	pr := &Problem{Base: &model.Profile{StepBaseNs: 8000}, Coefficients: []Param{{Name: "step_base_ns", Start: 8000, Prior: &prior}},
		Residuals: func(x Candidate) ([]Residual, error) {
			if x.Profile.StepBaseNs > 8500 {
				return nil, boom
			}
			return []Residual{logRatio("run", "step_base_ns", x.Profile.StepBaseNs, 9000, 0.1)}, nil
		}}
	if _, err := pr.Fit(MAPOptions{Iters: 20, Tries: 6}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the simulation's", err)
	}
}
