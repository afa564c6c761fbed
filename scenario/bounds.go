package scenario

import (
	"math"
	"time"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// Upper bounds of the numeric settings whose arithmetic would overflow, or
// whose meaning would be lost, past them. Validate checks each, naming its
// field; zero keeps meaning "vLLM's default" for the engine limits.
const (
	// maxNumSeqs bounds max_num_seqs: 2^20 running requests per worker, a
	// thousand times vLLM's largest default (1,024 on H100); the memory
	// model's activation term stays exact (and positive) below it.
	maxNumSeqs = 1 << 20
	// maxBatchTokens bounds max_num_batched_tokens and max_model_len: 2^24
	// tokens, past the longest context of any released model (10 M).
	maxBatchTokens = 1 << 24
	// maxLag bounds kv_event_lag and metrics_lag: a day, as
	// --refresh-metrics-interval. Dynamo's lags are milliseconds; a lag
	// past the run's one-year horizon would wrap the nanosecond clock.
	maxLag = 24 * time.Hour
	// maxRetryBackoff bounds retry_backoff: the client's waits double up
	// to sim.MaxRetryWait, so a longer first wait would be cut silently.
	maxRetryBackoff = time.Duration(sim.MaxRetryWait)
)

// checkDelays range-checks the router's delays: each must be ≥ 0 and at
// most its bound.
func (s *Spec) checkDelays() []error {
	var errs []error
	for _, d := range []struct {
		field  string
		v, max time.Duration
	}{{"kv_event_lag", s.KVEventLag, maxLag}, {"metrics_lag", s.MetricsLag, maxLag}, {"event_plane_delay", s.EventPlaneDelay, maxLag}, {"retry_backoff", s.RetryBackoff, maxRetryBackoff}} {
		if d.v < 0 || d.v > d.max {
			errs = append(errs, inputerr.Fieldf(d.field, "%s must be in [0, %s]", d.v, d.max))
		}
	}
	return errs
}

// clockTime is s seconds on the simulated nanosecond clock, rounded. A
// positive s shorter than the clock's resolution is one nanosecond, the
// shortest time there is: a positive timeout never turns into 0, which
// means "none".
func clockTime(s float64) sim.Time {
	return atLeastOneTick(sim.Time(math.Round(s*1e9)), s)
}

// atLeastOneTick is t, the clock time of s seconds, or one nanosecond
// when s is positive but t came out 0.
func atLeastOneTick(t sim.Time, s float64) sim.Time {
	if t == 0 && s > 0 {
		return 1
	}
	return t
}
