package workload

import (
	"errors"
	"fmt"
	"math"

	"github.com/routesim/routesim/internal/inputerr"
)

// Filter selects and re-times part of a trace. The zero value keeps
// everything at the recorded rate.
type Filter struct {
	// MaxISL drops requests whose input is longer (0 = no limit), as the
	// 8×A100 study's filter_trace.py did with 16,384.
	MaxISL int
	// Skip drops the first Skip requests left after MaxISL.
	Skip int
	// First keeps at most First requests after Skip (0 = all).
	First int
	// RateScale multiplies the arrival rate: arrival times are divided by it
	// (2 = twice as fast). 0 means 1.
	RateScale float64
	// Repeat replays the selection this many times back to back (0 or 1 =
	// once): copy c starts one mean inter-arrival gap after copy c−1
	// ends, with its own prompts (hash ids and sessions relabelled), so
	// a short trace stands for a long, steady one.
	Repeat int
}

// MaxRequests bounds a workload's requests after Repeat: beyond it a run
// would exhaust memory before it finished.
const MaxRequests = 50_000_000

// Validate reports every problem at once.
func (f Filter) Validate() error {
	var errs []error
	if f.MaxISL < 0 {
		errs = append(errs, inputerr.Fieldf("max_isl", "%d must be ≥ 0", f.MaxISL))
	}
	if f.Skip < 0 {
		errs = append(errs, inputerr.Fieldf("skip", "%d must be ≥ 0", f.Skip))
	}
	if f.First < 0 {
		errs = append(errs, inputerr.Fieldf("first", "%d must be ≥ 0", f.First))
	}
	if f.Repeat < 0 || f.Repeat > MaxRequests {
		errs = append(errs, inputerr.Fieldf("repeat", "%d must be in [0, %d]", f.Repeat, MaxRequests))
	}
	if f.RateScale < 0 || math.IsNaN(f.RateScale) || math.IsInf(f.RateScale, 0) || (f.RateScale > 0 && f.RateScale < 1e-6) || f.RateScale > 1e6 {
		errs = append(errs, inputerr.Fieldf("rate_scale", "%g must be in [1e-6, 1e6]", f.RateScale))
	}
	return errors.Join(errs...)
}

// Apply returns the filtered trace; request slices share hash ids with t.
// The first kept request arrives at 0.
func (t *Trace) Apply(f Filter) (*Trace, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	sel := f.selector()
	out := &Trace{Name: t.Name}
	for _, r := range t.Requests {
		keep, done := sel(r)
		if done {
			break
		}
		if keep {
			out.Requests = append(out.Requests, r)
		}
	}
	return out.finish(f)
}

// selector returns a function that says, request by request in trace
// order, whether MaxISL, Skip and First keep it, and when no later
// request can be kept.
func (f Filter) selector() func(Request) (keep, done bool) {
	skipped, kept := 0, 0
	return func(r Request) (bool, bool) {
		if f.MaxISL > 0 && r.InputTokens > f.MaxISL {
			return false, false
		}
		if skipped < f.Skip {
			skipped++
			return false, false
		}
		if f.First > 0 && kept == f.First {
			return false, true
		}
		kept++
		return true, false
	}
}

// finish re-times the selected requests: the first arrives at 0, the rest
// at the rate scale, repeated.
func (t *Trace) finish(f Filter) (*Trace, error) {
	if len(t.Requests) == 0 {
		return nil, fmt.Errorf("%s: no requests left after filters (`max_isl` %d, `skip` %d, `first` %d)", t.Name, f.MaxISL, f.Skip, f.First)
	}
	scale := f.RateScale
	if scale == 0 {
		scale = 1
	}
	base := t.Requests[0].ArrivalNs
	for i := range t.Requests {
		a, ok := retime(t.Requests[i].ArrivalNs, base, scale)
		if !ok {
			return nil, inputerr.Fieldf("rate_scale", "%g puts %s's request %d at %.3g s, past the %g s horizon", f.RateScale, t.Name, i+1, float64(t.Requests[i].ArrivalNs-base)/scale/1e9, float64(HorizonS))
		}
		t.Requests[i].ArrivalNs = a
	}
	if f.Repeat > 1 {
		if err := t.repeat(f.Repeat); err != nil {
			return nil, err
		}
	}
	for i, r := range t.Requests {
		if float64(r.ArrivalNs) > HorizonS*1e9 {
			if f.Repeat > 1 {
				return nil, inputerr.Fieldf("repeat", "%d copies at rate scale %g put %s's request %d at %.3g s, past the %g s horizon", f.Repeat, scale, t.Name, i+1, float64(r.ArrivalNs)/1e9, float64(HorizonS))
			}
			return nil, inputerr.Fieldf("rate_scale", "%g puts %s's request %d at %.3g s, past the %g s horizon", f.RateScale, t.Name, i+1, float64(r.ArrivalNs)/1e9, float64(HorizonS))
		}
	}
	return t, nil
}

// repeatPeriod is the arrival offset between k copies of n re-timed
// requests, the last at span ns: one mean gap after the span. It refuses
// more than MaxRequests requests, or copies that would run past the
// horizon.
func repeatPeriod(name string, n, k int, span int64) (int64, error) {
	if n*k > MaxRequests || n*k < 0 {
		return 0, inputerr.Fieldf("repeat", "%d copies of %d requests exceed %d requests", k, n, MaxRequests)
	}
	gap := int64(0)
	if n > 1 {
		gap = span / int64(n-1)
	}
	period := span + gap
	if period > 0 && int64(k-1) > int64(HorizonS*1e9)/period+1 {
		return 0, inputerr.Fieldf("repeat", "%d copies of %s (%.3g s each) run past the %g s horizon", k, name, float64(period)/1e9, float64(HorizonS))
	}
	return period, nil
}

// retime is a recorded arrival ns re-timed: base (the first kept
// arrival) becomes 0 and the rate is multiplied by scale. It reports false
// past the horizon, before the nanosecond count could overflow.
func retime(ns, base int64, scale float64) (int64, bool) {
	a := math.Round(float64(ns-base) / scale)
	if a > HorizonS*1e9 {
		return 0, false
	}
	return int64(a), true
}

// repeat appends k−1 shifted copies of the requests: copy c arrives
// c·(span + mean gap) later, its hash ids offset past every id of the
// trace and its sessions renamed, so copies share no prompt blocks.
func (t *Trace) repeat(k int) error {
	n := len(t.Requests)
	period, err := repeatPeriod(t.Name, n, k, t.Requests[n-1].ArrivalNs)
	if err != nil {
		return err
	}
	var maxID int64
	perCopy := 0 // hash ids per copy
	for _, r := range t.Requests {
		perCopy += len(r.HashIDs)
		for _, id := range r.HashIDs {
			maxID = max(maxID, id)
		}
	}
	out := make([]Request, 0, n*k)
	out = append(out, t.Requests...)
	for c := 1; c < k; c++ {
		off := int64(c) * (maxID + 1)
		ids := make([]int64, 0, perCopy)
		for _, r := range t.Requests {
			r.ArrivalNs += int64(c) * period
			start := len(ids)
			for _, id := range r.HashIDs {
				ids = append(ids, id+off)
			}
			r.HashIDs = ids[start:len(ids):len(ids)]
			if r.Session != "" {
				r.Session = fmt.Sprintf("%s#%d", r.Session, c)
			}
			if r.SharedPrefix > 0 {
				r.PrefixGroup += c << 20
			}
			out = append(out, r)
		}
	}
	t.Requests = out
	return nil
}
