package sim

import "github.com/routesim/routesim/policy"

// RetryWait exposes retryWait to the external tests.
var RetryWait = retryWait

// RunStats are a run's internal counters.
type RunStats struct {
	Absorbed uint64 // step ends applied inside decode runs
}

// RunCounted is Run, also returning the run's internal counters.
func RunCounted(cfg Config, wl *Workload, pol policy.Policy) (*Result, RunStats, error) {
	c, res, err := run(cfg, wl, pol)
	if c == nil {
		return res, RunStats{}, err
	}
	return res, RunStats{Absorbed: c.absorbed}, err
}
