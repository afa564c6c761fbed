package calib

import (
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

// withLog returns p with each fitted coefficient set to exp(u_i), kept at
// or above its physical floor and the host overhead within the step base.
func (f *fitter) withLog(p *model.Profile, u []float64) *model.Profile {
	q := *p
	for i, c := range f.coefs {
		*c.field(&q) = math.Max(math.Exp(u[i]), c.floor*1.0001)
	}
	q.HostOverheadNs = math.Min(q.HostOverheadNs, 0.95*q.StepBaseNs)
	return &q
}

// levenbergMarquardt minimises the MAP objective from p over the fitted
// coefficients' logarithms (lmMinimize). It returns p itself if no step
// improves it. A least-squares objective is what LM is made for; unlike
// Nelder–Mead it uses the residuals' structure and converges in a few
// dozen simulations per iteration.
func (f *fitter) levenbergMarquardt(p *model.Profile, iters int) (*model.Profile, float64) {
	k := len(f.coefs)
	u := make([]float64, k)
	for i, c := range f.coefs {
		u[i] = math.Log(math.Max(*c.field(p), c.floor*1.0001))
	}
	u, best, _ := lmMinimize(u, func(x []float64) []float64 { return f.mapResiduals(f.withLog(p, x)) }, iters, 8, f.tick)
	if math.IsInf(best, 1) {
		return p, best
	}
	return f.withLog(p, u), best
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
