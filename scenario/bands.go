package scenario

import (
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
// was never calibrated, its documented priors.
func (b *Built) Posterior() (*model.Posterior, error) {
	p := b.Profile
	if p.Posterior != nil {
		return p.Posterior, nil
	}
	if !p.IsKernel() {
		return nil, fmt.Errorf("profile %q has no posterior: calibrate it with routesim calibrate (priors on), or use a kernel profile (--profile kernel-prior)", p.Name)
	}
	_, priors, err := model.KernelPrior(b.Deploy, model.DefaultCatalogue(), b.spec.EnforceEager)
	if err != nil {
		return nil, err
	}
	return model.PriorPosterior(p, priors), nil
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
// not nil), with the draw's index, from the goroutine that ran it.
func (b *Built) RunDrawsEach(seed uint64, k, jobs, concurrency int, newPolicy func() (policy.Policy, error), each func(i int, res *sim.Result)) (string, float64, []sim.Summary, error) {
	if k < 1 {
		return "", 0, nil, errors.New("uncertainty: need ≥ 1 draw")
	}
	post, err := b.Posterior()
	if err != nil {
		return "", 0, nil, err
	}
	profiles, err := post.Draws(b.Profile, b.Deploy, k, sim.Stream(seed, "uncertainty"))
	if err != nil {
		return "", 0, nil, err
	}
	if jobs < 1 {
		jobs = runtime.GOMAXPROCS(0)
	}
	sums := make([]sim.Summary, k)
	var g errgroup.Group
	g.SetLimit(jobs)
	for i, p := range profiles {
		g.Go(func() error {
			return crash.Guard(func() error {
				pol, err := newPolicy()
				if err != nil {
					return err
				}
				c := *b
				c.Config, c.Profile = b.Config.WithProfile(p), p
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
		})
	}
	if err := g.Wait(); err != nil {
		return "", 0, nil, err
	}
	return post.Method, post.ModelErrorLog, sums, nil
}
