package scenario

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/routesim/routesim/internal/crash"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
)

// Posterior returns the distribution --uncertainty draws coefficients
// from: the profile's calibrated posterior, or, for a kernel profile that
// was never calibrated, its documented priors (TensorRT-LLM's for a
// TensorRT-LLM profile).
func (b *Built) Posterior() (*model.Posterior, error) {
	p := b.Profile
	if p.Posterior != nil {
		return p.Posterior, nil
	}
	if !p.IsKernel() {
		return nil, fmt.Errorf("profile %q has no posterior: calibrate it with routesim calibrate (priors on), or use a kernel profile (--profile kernel-prior)", p.Name)
	}
	prior := func() ([]model.Prior, error) {
		_, priors, err := model.KernelPrior(b.Deploy, model.DefaultCatalogue(), b.spec.EnforceEager)
		return priors, err
	}
	if p.Engine == model.EngineTRTLLM {
		prior = func() ([]model.Prior, error) {
			_, priors, err := model.TRTLLMKernelPrior(b.Deploy, model.DefaultCatalogue())
			return priors, err
		}
	}
	priors, err := prior()
	if err != nil {
		return nil, err
	}
	return model.PriorPosterior(p, priors), nil
}

// Estimate says which coefficients a run of b (the point estimate beside
// --uncertainty's bands) uses: the profile's own, which for a calibrated
// profile are its calibration's MAP estimate and for an uncalibrated
// kernel profile the centre of the priors the draws come from.
func (b *Built) Estimate() string {
	what := "the centre of the documented priors the draws come from (the profile was not calibrated)"
	if b.Profile.Posterior != nil {
		what = "its calibration's MAP estimate, the centre of the posterior the draws come from"
	}
	return fmt.Sprintf("the run at profile %s's own coefficients, %s, with the draws' seed", b.Profile.Name, what)
}

// Draws returns the posterior and the k coefficient sets RunDraws
// simulates for seed (stream "uncertainty"), every one validated as a
// profile: what a sweep checks for each seed before it runs anything.
func (b *Built) Draws(seed uint64, k int) (*model.Posterior, []*model.Profile, error) {
	post, err := b.Posterior()
	if err != nil {
		return nil, nil, err
	}
	profiles, err := post.Draws(b.Profile, b.Deploy, k, sim.Stream(seed, "uncertainty"))
	if err != nil {
		return nil, nil, err
	}
	return post, profiles, nil
}

// RunBands simulates k coefficient sets drawn from the profile's posterior
// (stream "uncertainty" of seed), each with the same seed — common random
// numbers, so the bands show the model's uncertainty, not the workload's —
// on up to jobs goroutines, and returns the summaries' 10–90 % bands. The
// result does not depend on jobs.
func (b *Built) RunBands(seed uint64, k, jobs int, newPolicy func() (policy.Policy, error)) (*sim.Bands, error) {
	method, modelErr, sums, err := b.RunDraws(seed, k, jobs, 0, newPolicy)
	if err != nil {
		return nil, err
	}
	return sim.NewBands(method, sums, modelErr, sim.Stream(seed, "model-error")), nil
}

// RunDraws is RunBands' runs: the summary of each of k draws (in draw
// order), the posterior's method and its model error; concurrency > 0
// overrides a session workload's users, as in ForSeed.
func (b *Built) RunDraws(seed uint64, k, jobs, concurrency int, newPolicy func() (policy.Policy, error)) (string, float64, []sim.Summary, error) {
	return b.RunDrawsEach(seed, k, jobs, concurrency, newPolicy, nil)
}

// RunDrawsEach is RunDraws that also hands each draw's result to each (if
// not nil), with the draw's index, from the goroutine that ran it. Every
// draw is validated before any runs (model.Posterior.Draws), and the first
// draw to fail ends the others at once: none starts after it and those
// running are cancelled (sim.Config.Cancel).
func (b *Built) RunDrawsEach(seed uint64, k, jobs, concurrency int, newPolicy func() (policy.Policy, error), each func(i int, res *sim.Result)) (string, float64, []sim.Summary, error) {
	if k < 1 {
		return "", 0, nil, errors.New("uncertainty: need ≥ 1 draw")
	}
	post, profiles, err := b.Draws(seed, k)
	if err != nil {
		return "", 0, nil, err
	}
	sums, err := b.runDraws(profiles, seed, jobs, concurrency, newPolicy, each)
	if err != nil {
		return "", 0, nil, err
	}
	return post.Method, post.ModelErrorLog, sums, nil
}

// runDraws simulates seed on every profile on up to jobs goroutines
// (0 = GOMAXPROCS) and returns their summaries in order; the first failure
// is the error, and it stops the rest.
func (b *Built) runDraws(profiles []*model.Profile, seed uint64, jobs, concurrency int, newPolicy func() (policy.Policy, error), each func(i int, res *sim.Result)) ([]sim.Summary, error) {
	if jobs < 1 {
		jobs = runtime.GOMAXPROCS(0)
	}
	sums := make([]sim.Summary, len(profiles))
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(jobs)
	for i, p := range profiles {
		if ctx.Err() != nil {
			break // a draw failed: start no more
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil // a draw failed while this one waited for a slot
			}
			err := crash.Guard(func() error {
				pol, err := newPolicy()
				if err != nil {
					return err
				}
				c := *b
				c.Config, c.Profile = b.Config.WithProfile(p), p
				c.Config.Cancel = ctx.Done()
				c.Config.Progress = nil // draws run in parallel
				res, _, err := c.RunWith(seed, concurrency, pol)
				if err != nil {
					return err
				}
				sums[i] = sim.Summarize(res)
				if each != nil {
					each(i, res)
				}
				return nil
			})
			if err != nil && !errors.Is(err, sim.ErrCancelled) {
				return fmt.Errorf("draw %d of %d: %w", i+1, len(profiles), err)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return sums, nil
}
