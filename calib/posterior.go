package calib

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/routesim/routesim/model"
)

// LinearPriorSD is the prior spread (log units) of every coefficient of a
// linear profile: such profiles carry no per-term physics, so the prior
// only keeps a fit near its starting point (a factor e^0.5 ≈ 1.65 is one sd).
const LinearPriorSD = 0.5

// priorsFor returns the log-normal prior of every step, frontend and stack
// coefficient, centred on base's values: a kernel profile's spreads come
// from model.KernelPrior, a serving stack's own terms' from its sources
// (model.StackPrior), a linear profile's are LinearPriorSD. weight
// scales the prior's precision (≤ 0: no prior).
func priorsFor(d model.Deployment, base *model.Profile, weight float64) (map[string]model.Prior, error) {
	if weight <= 0 {
		return nil, nil
	}
	sds := map[string]model.Prior{}
	if base.IsKernel() {
		_, list, err := model.KernelPrior(d, model.DefaultCatalogue(), false)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			sds[p.Name] = p
		}
	}
	out := map[string]model.Prior{}
	for name, c := range coefs(d, base) {
		v := *c.field(base)
		if v <= 0 {
			continue // a zero coefficient has no log-normal prior
		}
		pr := model.Prior{Name: name, Centre: v, LogSD: LinearPriorSD, Source: "starting profile ± factor e^0.5"}
		if k, ok := sds[name]; ok {
			pr.LogSD, pr.Source = k.LogSD, k.Source
		} else if k, ok := model.StackPrior(name); ok {
			pr.LogSD, pr.Source = k.LogSD, k.Source
		}
		pr.LogSD /= math.Sqrt(weight)
		out[name] = pr
	}
	return out, nil
}

// priorLoss is −log prior of p's fitted coefficients (up to a constant).
func (f *fitter) priorLoss(p *model.Profile) float64 {
	return sumSquares(f.priorResiduals(p))
}

// priorResiduals are each fitted coefficient's prior z-score / √2 (0 for
// one without a prior), so that their sum of squares is −log prior.
func (f *fitter) priorResiduals(p *model.Profile) []float64 {
	out := make([]float64, 0, len(f.coefs))
	for _, c := range f.coefs {
		pr, ok := f.priors[c.name]
		v := *c.field(p)
		if !ok || v <= 0 {
			out = append(out, 0)
			continue
		}
		out = append(out, math.Log(v/pr.Centre)/pr.LogSD/math.Sqrt2)
	}
	return out
}

// laplace approximates the posterior of the log coefficients around the
// estimate p (Laplace's method with the Gauss–Newton Hessian): the data
// term's curvature is 2·scale·JᵀJ, J the Jacobian of the weighted log
// residuals with respect to each fitted log coefficient by central
// differences (step h, with the noise and seeds the fit ended with), plus
// the priors' precision. Gauss–Newton needs only first derivatives, which
// a simulation's piecewise-smooth loss gives far more reliably than second
// ones, and is positive semi-definite by construction. Every coefficient
// with a prior is in the result; those not fitted keep their prior.
func (f *fitter) laplace(p *model.Profile) *model.Posterior {
	if len(f.priors) == 0 {
		return nil
	}
	var names []string
	for _, name := range model.CoefficientNames() {
		if _, ok := f.priors[name]; ok && *mustCoef(name).Field(p) > 0 {
			names = append(names, name)
		}
	}
	fitted := map[string]bool{}
	for _, c := range f.coefs {
		fitted[c.name] = true
	}
	const h = 0.05
	at := func(i int, dx float64) []float64 {
		q := *p
		*mustCoef(names[i]).Field(&q) *= math.Exp(dx)
		f.tick()
		r, err := f.residuals(&q, false)
		if err != nil {
			return nil
		}
		return r
	}
	n := len(names)
	r0, err := f.residuals(p, false)
	if err != nil {
		return nil
	}
	cols := jacobian(r0, n, h, func(i int) bool { return fitted[names[i]] }, at)
	prec, _ := gram(cols, nil)
	prec.ScaleSym(2*f.scale(), prec)
	sd := make([]float64, n)
	for i, name := range names {
		sd[i] = f.priors[name].LogSD
		prec.SetSym(i, i, prec.At(i, i)+1/(sd[i]*sd[i]))
	}
	cov := inverse(prec)
	if cov == nil {
		return nil
	}
	return newPosterior(fmt.Sprintf("Laplace approximation at the MAP estimate: Gauss–Newton data curvature (central differences, h = %g in log units) plus log-normal priors", h),
		p, names, cov.At, sd, fitted, f.modelErr)
}

// inverse is the inverse of a symmetric positive-definite matrix (a
// precision or JᵀJ), or nil if it is not positive definite.
func inverse(m *mat.SymDense) *mat.SymDense {
	var chol mat.Cholesky
	if m == nil || !chol.Factorize(m) {
		return nil
	}
	var inv mat.SymDense
	if chol.InverseTo(&inv) != nil {
		return nil
	}
	return &inv
}

// newPosterior is the posterior over names at p: cov(i, j) their log
// covariance, sd their prior sds, fitted which of them the fit moved
// (only those can be identified or narrowed).
func newPosterior(method string, p *model.Profile, names []string, cov func(i, j int) float64, sd []float64, fitted map[string]bool, modelErr float64) *model.Posterior {
	n := len(names)
	post := &model.Posterior{Method: method, Params: names, PriorSDLog: sd, ModelErrorLog: modelErr}
	for i, name := range names {
		post.MeanLog = append(post.MeanLog, math.Log(*mustCoef(name).Field(p)))
		row := make([]float64, n)
		for j := range n {
			row[j] = cov(i, j)
		}
		post.CovLog = append(post.CovLog, row)
		s := math.Sqrt(cov(i, i))
		post.Identified = append(post.Identified, fitted[name] && s <= model.IdentifiedSD)
		post.Narrowed = append(post.Narrowed, fitted[name] && s < model.NarrowedShare*sd[i])
	}
	return post
}

func mustCoef(name string) model.Coefficient {
	c, ok := model.CoefficientByName(name)
	if !ok {
		panic("calib: unknown coefficient " + name)
	}
	return c
}
