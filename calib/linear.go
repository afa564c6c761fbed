package calib

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload/session"
)

// The step-time model is linear in its coefficients, so with a simulated
// schedule in hand each request's TTFT and decode time are linear too:
//
//	TTFT_i      = frontend + Σ_s f_is · (x_s · θ)    over its worker's steps from routing to first token
//	E2E_i−TTFT_i =            Σ_s g_is · (x_s · θ)    over the steps from first to last token
//
// where x_s are step s's features — (1, P, Σp·ctx, D, Σctx) for a linear
// profile, (1, lin(P+D), P, pairs, D, Σctx) for a kernel one, whose layer
// curve lin is fixed and only scaled — and f, g the fractions of the step
// inside each interval. Regressing the measured
// per-request times on these sums gives new coefficients; re-simulating
// with them gives a new schedule; a few rounds reach a fixed point.

// stepLog records every simulated step's features per worker.
type stepLog struct {
	prof  *model.Profile // the form (and layer curve) features are taken for
	steps [][]stepFeat
}

type stepFeat struct {
	start, end sim.Time
	x          [6]float64 // stepCoefsFor's order; unused entries 0
}

func (l *stepLog) Step(w int, start, dur sim.Time, b model.Batch, _, _ int) {
	l.steps[w] = append(l.steps[w], stepFeat{start: start, end: start + dur, x: stepFeatures(l.prof, b)})
}

// stepFeatures are a step's features for p's form, in stepCoefsFor(p)'s
// order.
func stepFeatures(p *model.Profile, b model.Batch) [6]float64 {
	if p.IsKernel() {
		return [6]float64{1, p.LinearCurve.Compute(b.PrefillTokens + b.DecodeSeqs), float64(b.PrefillTokens), b.PrefillAttnPairs, float64(b.DecodeSeqs), float64(b.DecodeCtxTokens)}
	}
	return [6]float64{1, float64(b.PrefillTokens), b.PrefillTokenCtx, float64(b.DecodeSeqs), float64(b.DecodeCtxTokens)}
}

// stepCoefsFor names the profile fields the step features multiply.
func stepCoefsFor(p *model.Profile) []string {
	return model.StepCoefficients(p)
}

// overlapFeatures sums the features of w's steps weighted by the fraction
// of each step inside [from, to).
func (l *stepLog) overlapFeatures(w int, from, to sim.Time) [6]float64 {
	var sum [6]float64
	steps := l.steps[w]
	i := sort.Search(len(steps), func(i int) bool { return steps[i].end > from })
	for ; i < len(steps) && steps[i].start < to; i++ {
		s := steps[i]
		lo, hi := max(s.start, from), min(s.end, to)
		if hi <= lo {
			continue
		}
		f := float64(hi-lo) / float64(s.end-s.start)
		for k := range sum {
			sum[k] += f * s.x[k]
		}
	}
	return sum
}

// linearRound simulates every arm with p and solves the regression for the
// step coefficients and the frontend delay, respecting physical floors.
// Arms without per-request records are skipped; ok is false if none has.
func (f *fitter) linearRound(p *model.Profile, floors map[string]float64) (next *model.Profile, ok bool, err error) {
	k := len(stepCoefsFor(p))
	var rows [][]float64 // frontend, then the step coefficients
	var ys []float64
	for _, a := range f.arms {
		if a.records == nil {
			continue
		}
		r := a.built.Run(a.spec.Seed)
		r.Config = r.Config.WithProfile(p)
		log := &stepLog{prof: p, steps: make([][]stepFeat, r.Config.NumWorkers())}
		r.Config.Observer = log
		res, err := a.run(r)
		if err != nil {
			return nil, false, err
		}
		var done []*sim.Record
		for i := range res.Records {
			if res.Records[i].Status == sim.StatusOK {
				done = append(done, &res.Records[i])
			}
		}
		var meas []*Record
		for i := range a.records {
			if a.records[i].Error == "" {
				meas = append(meas, &a.records[i])
			}
		}
		if len(done) != len(meas) {
			continue // the candidate served a different set of requests
		}
		for i, r := range done {
			m := meas[i]
			fwd := p.FrontendNsPerInputToken * float64(r.InputTokens)
			if m.TTFTMs > 0 {
				x := log.overlapFeatures(r.Worker, r.Dispatched, r.FirstToken)
				rows = append(rows, append([]float64{1}, x[:k]...))
				ys = append(ys, m.TTFTMs*1e6-fwd)
			}
			if r.OutputTokens >= 2 && m.ITLMs > 0 {
				x := log.overlapFeatures(r.Worker, r.FirstToken, r.End)
				rows = append(rows, append([]float64{0}, x[:k]...))
				ys = append(ys, m.ITLMs*1e6*float64(r.OutputTokens-1))
			}
		}
		ok = true
	}
	if !ok || len(rows) < 12 {
		return nil, false, nil
	}
	names := append([]string{"frontend_ns"}, stepCoefsFor(p)...)
	theta, err := boundedLeastSquares(rows, ys, names, floors)
	if err != nil {
		return nil, false, err
	}
	q := *p
	all := coefs(f.arms[0].built.Deploy, p)
	for j, name := range names {
		*all[name].field(&q) = theta[j]
	}
	return &q, true, nil
}

// boundedLeastSquares minimises Σ (row·θ / y − 1)² (relative errors) with
// θ_j ≥ floor_j, by fixing violators at their floor and re-solving.
func boundedLeastSquares(rows [][]float64, ys []float64, names []string, floors map[string]float64) ([]float64, error) {
	n := len(names)
	fixed := make([]bool, n)
	theta := make([]float64, n)
	for iter := 0; iter <= n; iter++ {
		var free []int
		for j := 0; j < n; j++ {
			if !fixed[j] {
				free = append(free, j)
			}
		}
		if len(free) == 0 {
			break
		}
		a := mat.NewDense(len(rows), len(free), nil)
		b := mat.NewVecDense(len(rows), nil)
		for i, row := range rows {
			if ys[i] <= 0 {
				continue
			}
			rhs := ys[i]
			for j := 0; j < n; j++ {
				if fixed[j] {
					rhs -= row[j] * theta[j]
				}
			}
			for k, j := range free {
				a.Set(i, k, row[j]/ys[i])
			}
			b.SetVec(i, rhs/ys[i])
		}
		var sol mat.VecDense
		if err := sol.SolveVec(a, b); err != nil {
			return nil, fmt.Errorf("calib: per-request regression is singular: %w", err)
		}
		violated := false
		for k, j := range free {
			v := sol.AtVec(k)
			if fl := floors[names[j]]; v < fl || math.IsNaN(v) {
				theta[j], fixed[j], violated = fl, true, true
			} else {
				theta[j] = v
			}
		}
		if !violated {
			return theta, nil
		}
	}
	return theta, nil
}

// linearFit iterates the per-request regression (linear.go) from base
// until the coefficients settle, then sets the host overhead from the
// measured utilization. It returns nil when no arm has per-request records.
func (f *fitter) linearFit(base *model.Profile, all map[string]coef, params []string) (*model.Profile, string, error) {
	// The regression is exact at the truth but biased on a wrong schedule,
	// and most in queue-dominated runs; so iterate on each arm alone and on
	// all together, and keep whichever start explains every arm best.
	var best *model.Profile
	bestLoss, bestNote := math.Inf(1), ""
	subsets := [][]*arm{f.arms}
	if len(f.arms) > 1 {
		for _, a := range f.arms {
			subsets = append(subsets, []*arm{a})
		}
	}
	allArms := f.arms
	defer func() { f.arms = allArms }()
	for _, sub := range subsets {
		f.arms = sub
		p, note, err := f.linearFitArms(base, all, params)
		f.arms = allArms
		if err != nil {
			return nil, "", err
		}
		if p == nil {
			continue
		}
		if l := f.lossOf(p); l < bestLoss {
			names := make([]string, len(sub))
			for i, a := range sub {
				names[i] = a.name
			}
			best, bestLoss, bestNote = p, l, fmt.Sprintf("%s on arm(s) %s (loss %.3g)", note, strings.Join(names, ", "), l)
		}
	}
	if best != nil && hasParam(params, "host_overhead_ns") {
		best.HostOverheadNs = f.hostFromUtil(best)
	}
	return best, bestNote, nil
}

func hasParam(params []string, name string) bool {
	for _, p := range params {
		if p == name {
			return true
		}
	}
	return false
}

func (f *fitter) linearFitArms(base *model.Profile, all map[string]coef, params []string) (*model.Profile, string, error) {
	fitted := map[string]bool{}
	for _, p := range params {
		fitted[p] = true
	}
	floors := map[string]float64{}
	for _, name := range append([]string{"frontend_ns"}, stepCoefsFor(base)...) {
		if fitted[name] {
			floors[name] = all[name].floor
		} else { // not fitted: pin it at its current value
			floors[name] = *all[name].field(base)
		}
	}
	// Damped fixed-point iteration: move a quarter of the way (geometrically)
	// toward the regression's answer and keep the iterate with the lowest
	// full loss; full steps oscillate once queues make the schedule sensitive.
	p, best := base, f.lossOf(base)
	cur := base
	rounds := 0
	names := append([]string{"frontend_ns"}, stepCoefsFor(base)...)
	for ; rounds < 60; rounds++ {
		q, ok, err := f.linearRound(cur, floors)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			if rounds == 0 {
				return nil, "", nil
			}
			break
		}
		next := *cur
		change := 0.0
		for _, name := range names {
			a, b := *all[name].field(cur), *all[name].field(q)
			v := b
			if !fitted[name] {
				v = *all[name].field(base)
			} else if a > 0 && b > 0 {
				v = a * math.Pow(b/a, linearStep)
			}
			if a > 0 {
				change = math.Max(change, math.Abs(v/a-1))
			}
			*all[name].field(&next) = v
		}
		cur = &next
		if l := f.lossOf(cur); l < best {
			p, best = cur, l
		}
		if change < 0.002 {
			rounds++
			break
		}
	}
	p = clone(p)
	return p, fmt.Sprintf("per-request regression: %d rounds of simulate → least squares on step features", rounds), nil
}

// hostOverheadFromUtil solves utilization = (busy − steps·host)/(window·N)
// for host, over every arm with a GPU measurement.
func (f *fitter) hostFromUtil(p *model.Profile) float64 {
	var excess, steps float64
	for _, a := range f.arms {
		u, ok := a.measured["gpu_util_mean"]
		if !ok {
			continue
		}
		r := a.built.Run(a.spec.Seed)
		r.Config = r.Config.WithProfile(p)
		res, err := a.run(r)
		if err != nil {
			continue
		}
		window := a.windowS * 1e9
		if window == 0 {
			window = float64(res.Makespan)
		}
		for _, w := range res.Workers {
			excess += float64(w.BusyNs)
			steps += float64(w.Steps)
		}
		excess -= u * window * float64(r.Config.NumWorkers())
	}
	if steps == 0 {
		return p.HostOverheadNs
	}
	return math.Min(math.Max(excess/steps, 0), 0.95*p.StepBaseNs)
}

// linearStep is the damping of the per-request iteration.
const linearStep = 0.25

func clone(p *model.Profile) *model.Profile { q := *p; return &q }

func buildArms(spec *Spec, obs []Observed, base *model.Profile) ([]*arm, error) {
	byArm := map[string]*arm{}
	var order []string
	reps := map[string][]Stats{}
	for i := range obs {
		o := &obs[i]
		a, ok := byArm[o.Run.Arm]
		if !ok {
			a = &arm{name: o.Run.Arm, spec: o.Run.Setup}
			if o.Bench != nil {
				a.spec.Workload, a.spec.Synthetic = "synthetic", benchPlaceholder
			}
			b, err := a.spec.Build(base)
			if err != nil {
				return nil, spec.setupError(o.Run, err)
			}
			a.built = b
			if o.Bench != nil {
				if err := a.benchWorkload(o.Bench); err != nil {
					return nil, spec.setupError(o.Run, err)
				}
			}
			byArm[o.Run.Arm] = a
			order = append(order, o.Run.Arm)
		}
		if o.GPU != nil {
			a.windowS = o.GPU.WindowS
			a.built.Config.NVML.Window = sim.Time(a.windowS * 1e9)
		}
		if a.built.Work != nil && !session.HasSessions(a.built.Work) {
			// An open-loop setup offers a known number of requests; an
			// export with another count was taken from a different run.
			if err := o.checkCounts(spec, len(a.built.Work.Jobs)); err != nil {
				return nil, err
			}
		}
		if a.records == nil && len(o.Records) > 0 {
			a.records = o.Records
		}
		st := measuredStats(o)
		if len(st) == 0 {
			return nil, fmt.Errorf("run %s: no statistics to fit", o.Run.Name)
		}
		reps[o.Run.Arm] = append(reps[o.Run.Arm], st)
	}
	var arms []*arm
	for _, name := range order {
		a := byArm[name]
		a.measured, a.spread = meanStats(reps[name])
		a.reps = len(reps[name])
		arms = append(arms, a)
	}
	return arms, nil
}
