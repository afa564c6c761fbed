package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Posterior is what a calibration knows about a profile's coefficients: a
// multivariate normal over their logarithms (a Laplace approximation around
// the MAP estimate), and which of them the measured runs identify at all.
type Posterior struct {
	// Method says how the distribution was obtained.
	Method string `json:"method"`
	// Params names the coefficients (Coefficients' names), in order.
	Params []string `json:"params"`
	// MeanLog is log of each coefficient at the estimate.
	MeanLog []float64 `json:"mean_log"`
	// CovLog is the covariance of the log coefficients.
	CovLog [][]float64 `json:"cov_log"`
	// PriorSDLog is each coefficient's prior standard deviation (log).
	PriorSDLog []float64 `json:"prior_sd_log"`
	// Identified says whether the runs pin a coefficient: posterior sd at
	// most IdentifiedSD (±5 % at two sds).
	Identified []bool `json:"identified"`
	// Narrowed says whether the runs told anything about it at all:
	// posterior sd below NarrowedShare of the prior's.
	Narrowed []bool `json:"narrowed"`
	// ModelErrorLog is the relative error (log sd) the calibration allowed
	// each statistic at the true coefficients: what the step model cannot
	// express. Predictive bands add it to the coefficients' uncertainty.
	ModelErrorLog float64 `json:"model_error_log"`
}

// DefaultModelErrorLog is the model error a calibration assumes unless
// told otherwise, and the one an uncalibrated prior carries: routesim
// reproduces unsaturated measured statistics to about 10 %.
const DefaultModelErrorLog = 0.1

// IdentifiedSD is the posterior sd (log units) at or below which the runs
// pin a coefficient; NarrowedShare the posterior-to-prior sd ratio below
// which they at least narrowed it.
const (
	IdentifiedSD  = 0.025
	NarrowedShare = 0.7
)

func (q *Posterior) validate() error {
	n := len(q.Params)
	if n == 0 {
		return errors.New("posterior: no params")
	}
	if len(q.MeanLog) != n || len(q.CovLog) != n || len(q.PriorSDLog) != n || len(q.Identified) != n || len(q.Narrowed) != n {
		return fmt.Errorf("posterior: %d params but mean_log %d, cov_log %d, prior_sd_log %d, identified %d, narrowed %d",
			n, len(q.MeanLog), len(q.CovLog), len(q.PriorSDLog), len(q.Identified), len(q.Narrowed))
	}
	for i, name := range q.Params {
		if _, ok := CoefficientByName(name); !ok {
			return fmt.Errorf("posterior: params[%d]: unknown coefficient %q", i, name)
		}
		if len(q.CovLog[i]) != n {
			return fmt.Errorf("posterior: cov_log row %d has %d entries, want %d", i, len(q.CovLog[i]), n)
		}
		for j, v := range q.CovLog[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v-q.CovLog[j][i]) > 1e-9*(1+math.Abs(v)) {
				return fmt.Errorf("posterior: cov_log[%d][%d] = %g: must be finite and symmetric", i, j, v)
			}
		}
		if math.IsNaN(q.MeanLog[i]) || math.IsInf(q.MeanLog[i], 0) {
			return fmt.Errorf("posterior: mean_log[%d] = %g must be finite", i, q.MeanLog[i])
		}
	}
	if !(q.ModelErrorLog >= 0 && q.ModelErrorLog <= 2) {
		return fmt.Errorf("posterior: model_error_log %g must be in [0, 2]", q.ModelErrorLog)
	}
	if _, err := q.chol(); err != nil {
		return err
	}
	return nil
}

func (q *Posterior) chol() (*mat.TriDense, error) {
	n := len(q.Params)
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, q.CovLog[i][j])
		}
	}
	var c mat.Cholesky
	if !c.Factorize(sym) {
		return nil, errors.New("posterior: cov_log is not positive definite")
	}
	var l mat.TriDense
	c.LTo(&l)
	return &l, nil
}

// SD is each coefficient's posterior standard deviation (log scale).
func (q *Posterior) SD() []float64 {
	out := make([]float64, len(q.Params))
	for i := range out {
		out[i] = math.Sqrt(q.CovLog[i][i])
	}
	return out
}

// Draws returns k profiles whose coefficients are drawn from the posterior
// with rng (log-normal, each kept at or above its physical floor for d and
// the host overhead within the step base); everything else is base's.
// Every draw is validated as a profile is (Profile.Validate: the same
// physical bounds), and the first that fails is the error: a posterior
// too wide to be physical is refused before anything is simulated.
func (q *Posterior) Draws(base *Profile, d Deployment, k int, rng *rand.Rand) ([]*Profile, error) {
	l, err := q.chol()
	if err != nil {
		return nil, err
	}
	n := len(q.Params)
	z, out := make([]float64, n), make([]*Profile, 0, k)
	for range k {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		p := *base
		for i, name := range q.Params {
			x := q.MeanLog[i]
			for j := 0; j <= i; j++ {
				x += l.At(i, j) * z[j]
			}
			c, _ := CoefficientByName(name)
			*c.Field(&p) = math.Max(math.Exp(x), Floor(d, base, name))
		}
		p.HostOverheadNs = math.Min(p.HostOverheadNs, 0.95*p.StepBaseNs)
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("posterior draw %d of %d: %w: the posterior is too wide for its draws to be physical (cov_log sd up to %.3g in log units)",
				len(out)+1, k, err, slices.Max(q.SD()))
		}
		out = append(out, &p)
	}
	return out, nil
}

// PriorPosterior is the distribution of an uncalibrated kernel profile:
// its priors' spreads around p's own values, independent, none identified.
func PriorPosterior(p *Profile, priors []Prior) *Posterior {
	q := &Posterior{Method: "prior only: the profile was not calibrated; spreads are the documented priors (model.KernelPrior)", ModelErrorLog: DefaultModelErrorLog}
	for _, pr := range priors {
		c, ok := CoefficientByName(pr.Name)
		if !ok || *c.Field(p) <= 0 {
			continue
		}
		q.Params = append(q.Params, pr.Name)
		q.MeanLog = append(q.MeanLog, math.Log(*c.Field(p)))
		q.PriorSDLog = append(q.PriorSDLog, pr.LogSD)
		q.Identified = append(q.Identified, false)
		q.Narrowed = append(q.Narrowed, false)
	}
	n := len(q.Params)
	for i := range n {
		row := make([]float64, n)
		row[i] = q.PriorSDLog[i] * q.PriorSDLog[i]
		q.CovLog = append(q.CovLog, row)
	}
	return q
}
