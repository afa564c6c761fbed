package calib

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/routesim/routesim/model"
)

// mapResiduals are the residuals whose sum of squares is the MAP
// objective: √scale × the data residuals, then the prior residuals. nil if
// the simulation failed.
func (f *fitter) mapResiduals(p *model.Profile) []float64 {
	r, err := f.residuals(p, false)
	if err != nil {
		return nil
	}
	s := math.Sqrt(f.scale())
	out := make([]float64, 0, len(r)+len(f.coefs))
	for _, v := range r {
		out = append(out, s*v)
	}
	return append(out, f.priorResiduals(p)...)
}

// polishProblem is the spec fit's MAP objective as a Problem: its fitted
// coefficients from p, each kept just above its physical floor (the
// search's encoding needs it strictly above), and residuals that carry
// the spec fit's own prior terms (mapResiduals: its objective is −log
// posterior, its priors on the coefficients' values).
func (f *fitter) polishProblem(p *model.Profile) *Problem {
	pr := &Problem{Base: p}
	for _, c := range f.coefs {
		lo := c.floor * 1.0001
		pr.Coefficients = append(pr.Coefficients, Param{Name: c.name, Start: math.Max(*c.field(p), lo), Floor: lo})
	}
	pr.Residuals = func(c Candidate) ([]Residual, error) {
		r := f.mapResiduals(c.Profile)
		if r == nil {
			return nil, errSimulation
		}
		out := make([]Residual, len(r))
		for i, v := range r {
			out[i].R = v
		}
		return out, nil
	}
	return pr
}

// errSimulation marks a candidate the spec fit could not simulate (the
// fitter keeps the simulation's own error).
var errSimulation = errors.New("calib: simulation failed")

// levenbergMarquardt minimises the MAP objective from p over the fitted
// coefficients' logarithms (the one MAP fit, Problem's, on
// polishProblem). It returns p itself if no step improves it. A
// least-squares objective is what LM is made for; unlike Nelder–Mead it
// uses the residuals' structure and converges in a few dozen simulations
// per iteration.
func (f *fitter) levenbergMarquardt(p *model.Profile, iters int) (*model.Profile, float64) {
	pr := f.polishProblem(p)
	m := pr.mapFit(MAPOptions{Iters: iters, Tries: 8, Tick: f.tick})
	if math.IsInf(m.best, 1) {
		return p, m.best
	}
	return pr.Candidate(m.u).Profile, m.best
}

// lmMinimize minimises ½Σr(u)² from u by Levenberg–Marquardt: Jacobian by
// central differences (h = 0.02), damped Gauss–Newton steps of at most
// ±0.5 per coordinate, up to tries dampings per iteration, at most iters
// iterations, stopping when no damping improves. resid returns nil where
// it cannot be evaluated; tick, if set, is called at each iteration's
// start, before each Jacobian evaluation and after each trial step. It
// returns the best point, its objective (+Inf if u itself fails) and JᵀJ
// at the last Jacobian (nil if none).
func lmMinimize(u []float64, resid func([]float64) []float64, iters, tries int, tick func()) ([]float64, float64, *mat.SymDense) {
	if tick == nil {
		tick = func() {}
	}
	k := len(u)
	r := resid(u)
	if r == nil {
		return u, math.Inf(1), nil
	}
	best := sumSquares(r)
	lambda := 1e-2
	const h = 0.02
	var jtj *mat.SymDense
	for it := 0; it < iters; it++ {
		tick()
		cols := jacobian(r, k, h, func(int) bool { return true }, func(j int, dx float64) []float64 {
			moved := append([]float64(nil), u...)
			moved[j] += dx
			tick()
			return resid(moved)
		})
		var jtr *mat.VecDense
		jtj, jtr = gram(cols, r)
		improved := false
		for try := 0; try < tries && !improved; try++ {
			m := mat.NewSymDense(k, nil)
			for a := range k {
				for b := a; b < k; b++ {
					m.SetSym(a, b, jtj.At(a, b))
				}
				m.SetSym(a, a, jtj.At(a, a)*(1+lambda)+1e-9)
			}
			var chol mat.Cholesky
			if !chol.Factorize(m) {
				lambda *= 10
				continue
			}
			var step mat.VecDense
			if err := chol.SolveVecTo(&step, jtr); err != nil {
				lambda *= 10
				continue
			}
			next := make([]float64, k)
			for a := range k {
				d := math.Max(-0.5, math.Min(0.5, -step.AtVec(a))) // at most ×e^±0.5 per step
				next[a] = u[a] + d
			}
			rn := resid(next)
			tick()
			if l := sumSquares(rn); rn != nil && l < best-1e-9 {
				u, r, best, improved = next, rn, l, true
				lambda = math.Max(lambda/3, 1e-6)
			} else {
				lambda *= 10
			}
		}
		if !improved {
			break
		}
	}
	return u, best, jtj
}
