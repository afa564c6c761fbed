package scenario

import (
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
)

// Run is one seeded simulation of a built scenario, the one way a built
// scenario runs. Its seed is Config.Seed, and every random stream of the
// run comes from it: the engine's, the policy's (stream "router"), a
// synthetic stream's or closed-loop users' draws, and the coefficient
// draws of Bands. Built.Run makes it; a caller may then change the
// cluster size (Config.WithN), the profile (Config.WithProfile), the
// observers, progress and cancellation of Config, and Concurrency, but no
// caller seeds a policy or a workload by hand.
type Run struct {
	// Config is the engine configuration: Built.Config with the run's
	// seed. Exec seeds the policy and the workload from Config.Seed too,
	// so a run's parts cannot be seeded apart.
	Config sim.Config
	// Concurrency, if > 0, overrides a session workload's users (a load
	// point of a sweep).
	Concurrency int

	b *Built
}

// Run returns b's run with seed. It runs nothing: Exec does, as often as
// called, each time from scratch (a fresh policy, fresh closed-loop
// clients), so two Execs of one Run give the same result.
func (b *Built) Run(seed uint64) *Run {
	r := &Run{Config: b.Config, b: b}
	r.Config.Seed = seed
	return r
}

// Policy builds a fresh policy for r: the spec's policy and parameters
// (with its Dynamo release), drawing from stream "router" of r's seed.
func (r *Run) Policy() (policy.Policy, error) {
	p := r.b.spec.policyParams()
	p.Rand = sim.Stream(r.Config.Seed, "router")
	return policy.New(r.b.spec.Policy, p)
}

// Exec simulates r: a fresh policy (Policy), the workload of r's seed with
// fresh closed-loop clients (Built.ForSeed, with Concurrency), the spec's
// warm-up cut from the result. The clients are returned for their report.
func (r *Run) Exec() (*sim.Result, ClosedLoop, error) {
	pol, err := r.Policy()
	if err != nil {
		return nil, nil, err
	}
	cfg := r.Config
	wl, pop, err := r.b.ForSeed(cfg.Seed, r.Concurrency)
	if err != nil {
		return nil, nil, err
	}
	if pop != nil {
		cfg.FollowUp = pop
	}
	res, err := sim.Run(cfg, wl, pol)
	if err != nil {
		return nil, pop, err
	}
	if e, ok := pop.(interface{ Err() error }); ok && e.Err() != nil {
		return nil, pop, e.Err() // a closed loop cut short by its request bound
	}
	spec := &r.b.spec
	return res.After(atLeastOneTick(sim.Time(spec.WarmupS*1e9), spec.WarmupS)), pop, nil
}

// Replay is a built scenario for a workload its caller prepared (a
// benchmark's requests: ML.ENERGY's, trtllm-bench's): n workers of
// configuration wc running profile p, under policy pol with its default
// parameters, no warm-up cut. Its runs are seeded as every Built's
// (Built.Run); the configuration is checked when a run executes.
func Replay(n int, wc sim.WorkerConfig, p *model.Profile, wl *sim.Workload, pol string) (*Built, error) {
	entry, err := policy.Lookup(pol)
	if err != nil {
		return nil, err
	}
	spec := Spec{Workload: "trace", N: n, Policy: pol, Policies: policy.DefaultParams()}
	return &Built{spec: spec, Work: wl, Config: sim.Config{Pools: sim.Single(n, wc, p)}, Profile: p, Entry: entry}, nil
}
