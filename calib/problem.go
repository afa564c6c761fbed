package calib

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/routesim/routesim/model"
)

// Problem is one calibration: the profile coefficients a fit moves, the
// nuisance parameters it moves beside them, and the residuals that compare
// a candidate's re-simulation with the measurements. Every measurement
// source is a reader plus a Problem; Fit is the one MAP fit, Laplace
// posterior and report they share.
type Problem struct {
	// Base is the profile every candidate is made from: a candidate is
	// Base with the Coefficients set.
	Base *model.Profile
	// Coefficients are the fitted profile coefficients (model.Coefficients
	// names), each with where it starts, its lower bound and its prior.
	Coefficients []Param
	// Nuisance are the fitted parameters that are not the profile's (an
	// unpublished prompt length): the residuals need them, the profile
	// does not keep them.
	Nuisance []Param
	// Residuals compares a candidate with the measurements: one entry per
	// compared figure, in a fixed order, each with its weighted residual
	// R (Σ R² is −2 log likelihood up to a constant, unless the source's
	// R already carries its own prior: see Param.Prior).
	Residuals func(Candidate) ([]Residual, error)
	// Priors are the prior of every coefficient, fitted or not (the
	// posterior keeps the unfitted ones at their prior spread); nil: the
	// fitted ones' only.
	Priors []model.Prior
	// Method describes the posterior (model.Posterior.Method).
	Method string
	// ModelError is the log error each figure may carry, kept in the
	// posterior for its predictive bands (default
	// model.DefaultModelErrorLog).
	ModelError float64
}

// Param is one fitted parameter. The fit moves u = log(value); a
// coefficient's value is max(exp(u), Floor).
type Param struct {
	Name  string
	Start float64 // the value the fit starts from (> 0)
	Floor float64 // the lowest value a candidate takes (0: none)
	// Prior adds the residual (u − log Centre)/LogSD to the objective
	// (nil: none; a source whose Residuals carry the prior leaves it nil).
	Prior *model.Prior
}

// Candidate is a point of a problem: the profile with the coefficients
// set, and the nuisance parameters' values in Problem.Nuisance's order.
type Candidate struct {
	Profile  *model.Profile
	Nuisance []float64
}

// Residual is one compared figure of a candidate: which run (Arm) and
// statistic, measured and simulated, and its weighted residual R.
type Residual struct {
	Arm, Stat           string
	Measured, Simulated float64
	R                   float64
}

// logRatio is the residual log(simulated/measured)/σ of one figure.
func logRatio(arm, stat string, simulated, measured, sigma float64) Residual {
	return Residual{Arm: arm, Stat: stat, Measured: measured, Simulated: simulated, R: math.Log(simulated/measured) / sigma}
}

// params are the coefficients then the nuisance parameters.
func (pr *Problem) params() []Param {
	return append(append([]Param(nil), pr.Coefficients...), pr.Nuisance...)
}

// Candidate is the candidate at log values u (Problem.params' order):
// each coefficient at max(exp(u), Floor), the host gap kept within the
// step base.
func (pr *Problem) Candidate(u []float64) Candidate {
	q := clone(pr.Base)
	for i, c := range pr.Coefficients {
		*mustCoef(c.Name).Field(q) = math.Max(math.Exp(u[i]), c.Floor)
	}
	q.HostOverheadNs = math.Min(q.HostOverheadNs, 0.95*q.StepBaseNs)
	var nu []float64
	for i := range pr.Nuisance {
		nu = append(nu, math.Exp(u[len(pr.Coefficients)+i]))
	}
	return Candidate{Profile: q, Nuisance: nu}
}

// start is the fit's starting point: log of every parameter's Start.
func (pr *Problem) start() []float64 {
	var u []float64
	for _, p := range pr.params() {
		u = append(u, math.Log(p.Start))
	}
	return u
}

// MAPOptions tune the MAP fit.
type MAPOptions struct {
	// Iters bounds the Levenberg–Marquardt iterations; Tries the
	// dampings tried per iteration.
	Iters, Tries int
	// Tick, if set, is called as lmMinimize calls it (progress).
	Tick func()
}

// mapFit is the outcome of the MAP search.
type mapFit struct {
	u    []float64
	best float64       // the objective at u (+Inf: the start failed)
	jtj  *mat.SymDense // JᵀJ of the last Jacobian (nil: none)
	err  error         // the last failed evaluation's error, if any
	n    int           // successful evaluations of Residuals
}

// objective is the MAP residual vector at u: the data's R, then each
// parameter's prior z-score; nil where Residuals fails.
func (pr *Problem) objective(m *mapFit) func(u []float64) []float64 {
	ps := pr.params()
	return func(u []float64) []float64 {
		res, err := pr.Residuals(pr.Candidate(u))
		if err != nil {
			m.err = err
			return nil
		}
		m.n++
		r := make([]float64, 0, len(res)+len(ps))
		for _, x := range res {
			r = append(r, x.R)
		}
		for i, p := range ps {
			if p.Prior != nil {
				r = append(r, (u[i]-math.Log(p.Prior.Centre))/p.Prior.LogSD)
			}
		}
		return r
	}
}

// mapFit minimises the problem's objective from its start by
// Levenberg–Marquardt over the parameters' logarithms (lmMinimize).
func (pr *Problem) mapFit(opt MAPOptions) *mapFit {
	m := &mapFit{}
	m.u, m.best, m.jtj = lmMinimize(pr.start(), pr.objective(m), opt.Iters, opt.Tries, opt.Tick)
	return m
}

// Solution is a fitted problem: the estimate, its residuals and its
// Laplace posterior.
type Solution struct {
	// Candidate is the MAP estimate; its profile carries the posterior.
	Candidate
	// U are the estimate's log values (coefficients, then nuisance).
	U []float64
	// Residuals are the figures at the estimate.
	Residuals []Residual
	// SD are the posterior log-sds of the parameters (coefficients, then
	// nuisance) and PriorSD their priors' (0 without one); SD is nil when
	// the curvature is singular.
	SD, PriorSD []float64
	// Evals counts the successful evaluations of Residuals.
	Evals int
}

// Fit finds the problem's MAP estimate (Levenberg–Marquardt from the
// parameters' starts), re-evaluates the residuals there, and sets the
// estimate's posterior: the Laplace approximation whose precision is the
// Gauss–Newton JᵀJ of the fit's last Jacobian (data and priors), the
// fitted coefficients jointly as it says (the nuisance marginalised), the
// unfitted ones at their prior spread.
func (pr *Problem) Fit(opt MAPOptions) (*Solution, error) {
	m := pr.mapFit(opt)
	if m.err != nil {
		return nil, fmt.Errorf("calib: a simulation failed during the fit: %w", m.err)
	}
	if math.IsInf(m.best, 1) {
		return nil, fmt.Errorf("calib: the starting profile cannot be simulated")
	}
	c := pr.Candidate(m.u)
	res, err := pr.Residuals(c)
	if err != nil {
		return nil, err
	}
	m.n++
	cov := inverse(m.jtj)
	s := &Solution{Candidate: c, U: m.u, Residuals: res, SD: laplaceSD(cov), Evals: m.n}
	var names []string
	for _, p := range pr.Coefficients {
		names = append(names, p.Name)
	}
	for _, p := range pr.params() {
		sd := 0.0
		if p.Prior != nil {
			sd = p.Prior.LogSD
		}
		s.PriorSD = append(s.PriorSD, sd)
	}
	priors := pr.Priors
	if priors == nil {
		for _, p := range pr.Coefficients {
			if p.Prior != nil {
				priors = append(priors, *p.Prior)
			}
		}
	}
	modelErr := pr.ModelError
	if modelErr <= 0 {
		modelErr = model.DefaultModelErrorLog
	}
	method := pr.Method
	if method == "" {
		method = "Laplace approximation at the MAP estimate: Gauss–Newton curvature of the residuals plus log-normal priors; unfitted coefficients at their prior spread"
	}
	c.Profile.Posterior = fittedPosterior(method, c.Profile, names, priors, cov, modelErr)
	return s, nil
}
