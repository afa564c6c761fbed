package scenario

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/routesim/routesim/internal/crash"
	"github.com/routesim/routesim/model"
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

// Bands simulates k coefficient sets drawn from the profile's posterior
// (stream "uncertainty" of r's seed), each a copy of r at the draw's
// profile — the same seed, common random numbers, so the bands show the
// model's uncertainty, not the workload's — on up to jobs goroutines
// (0 = GOMAXPROCS; progress is not reported). It returns the summaries'
// 10–90 % bands (model error from stream "model-error" of the seed) and
// every draw's summary in draw order, and hands each draw's result to
// each (if not nil), with the draw's index, from the goroutine that ran
// it. The result does not depend on jobs. Every draw is validated before
// any runs (model.Posterior.Draws), and the first draw to fail ends the
// others at once: none starts after it and those running are cancelled
// (sim.Config.Cancel).
func (r *Run) Bands(k, jobs int, each func(i int, res *sim.Result)) (*sim.Bands, []sim.Summary, error) {
	if k < 1 {
		return nil, nil, errors.New("uncertainty: need ≥ 1 draw")
	}
	seed := r.Config.Seed
	post, profiles, err := r.b.Draws(seed, k)
	if err != nil {
		return nil, nil, err
	}
	sums, err := r.runDraws(profiles, jobs, each)
	if err != nil {
		return nil, nil, err
	}
	return sim.NewBands(post.Method, sums, post.ModelErrorLog, sim.Stream(seed, "model-error")), sums, nil
}

// runDraws simulates r on every profile on up to jobs goroutines
// (0 = GOMAXPROCS) and returns their summaries in order; the first failure
// is the error, and it stops the rest.
func (r *Run) runDraws(profiles []*model.Profile, jobs int, each func(i int, res *sim.Result)) ([]sim.Summary, error) {
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
				c := *r
				c.Config = r.Config.WithProfile(p)
				c.Config.Cancel = ctx.Done()
				c.Config.Progress = nil // draws run in parallel
				res, _, err := c.Exec()
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
