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
}

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
	scale := f.RateScale
	if scale == 0 {
		scale = 1
	}
	out := &Trace{Name: t.Name}
	skipped := 0
	for _, r := range t.Requests {
		if f.MaxISL > 0 && r.InputTokens > f.MaxISL {
			continue
		}
		if skipped < f.Skip {
			skipped++
			continue
		}
		if f.First > 0 && len(out.Requests) == f.First {
			break
		}
		out.Requests = append(out.Requests, r)
	}
	if len(out.Requests) == 0 {
		return nil, fmt.Errorf("%s: no requests left after filters (`max_isl` %d, `skip` %d, `first` %d)", t.Name, f.MaxISL, f.Skip, f.First)
	}
	base := out.Requests[0].ArrivalNs
	for i := range out.Requests {
		at := math.Round(float64(out.Requests[i].ArrivalNs-base) / scale)
		if at > HorizonS*1e9 {
			return nil, inputerr.Fieldf("rate_scale", "%g puts %s's request %d at %.3g s, past the %g s horizon", f.RateScale, t.Name, i+1, at/1e9, float64(HorizonS))
		}
		out.Requests[i].ArrivalNs = int64(at)
	}
	return out, nil
}
