package explore

import (
	"context"
	"errors"
	"math"
	"sort"
	"sync"

	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

// Build validates one configuration given as routesim run's arguments
// and builds it exactly as routesim run does, returning the built run and
// its settings (cmd/routesim supplies the command's own code; an error's
// text is the command's).
type Build func(args []string) (*scenario.Built, *scenario.Spec, error)

// Result is one simulated point: what the page draws and prints.
type Result struct {
	N       int         `json:"n"`
	Policy  string      `json:"policy"`
	Seed    uint64      `json:"seed"`
	Summary sim.Summary `json:"summary"`
	// Command is the routesim run command line that prints this summary.
	Command string  `json:"command"`
	Series  *Series `json:"series,omitempty"`
	// Elapsed is the wall time the simulation took, in milliseconds (0
	// when it came from the cache).
	ElapsedMs float64 `json:"elapsed_ms"`
}

// Series are the per-request views of one run.
type Series struct {
	// CDF is TTFT over offered requests: CDF[i] is the (i/CDFSteps)-th
	// quantile in ms, nil where it lands on a request not served (its
	// TTFT is infinite).
	CDF []*float64 `json:"ttft_cdf_ms"`
	// DecileTTFTMs is the mean TTFT of the completed requests arriving in
	// each tenth of the arrival span (nil: none completed);
	// DecileNotServed the share of that tenth's requests not served.
	DecileTTFTMs    [10]*float64 `json:"decile_ttft_ms"`
	DecileNotServed [10]float64  `json:"decile_not_served"`
	// Overload counts the responses with an overload status (503, or
	// Dynamo 1.4's 529) per BinS seconds of simulated time from the
	// first arrival.
	Overload []int   `json:"overload"`
	BinS     float64 `json:"bin_s"`
}

// CDFSteps is the number of steps of Series.CDF (it has CDFSteps+1 points).
const CDFSteps = 200

// overloadBins is the number of bins of Series.Overload.
const overloadBins = 40

// entry is one cache slot: done is closed when res or err is set.
type entry struct {
	done chan struct{}
	res  *Result
	err  error
}

// cache holds finished points by their run arguments, at most max of
// them (the oldest go first); a point being computed is shared by every
// request that wants it.
type cache struct {
	mu      sync.Mutex
	entries map[string]*entry
	order   []string
	max     int
}

func newCache(max int) *cache { return &cache{entries: map[string]*entry{}, max: max} }

// get returns the finished result for key, if any.
func (c *cache) get(key string) (*Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	select {
	case <-e.done:
		return e.res, e.err == nil
	default:
		return nil, false
	}
}

// claim returns key's entry and whether the caller must compute it (then
// it must call finish).
func (c *cache) claim(key string) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return e, false
	}
	e := &entry{done: make(chan struct{})}
	c.entries[key] = e
	return e, true
}

// finish records key's outcome. A cancelled computation is forgotten (the
// next request for the point computes it again); errors are kept, as the
// same arguments fail the same way.
func (c *cache) finish(key string, e *entry, res *Result, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.res, e.err = res, err
	if errors.Is(err, context.Canceled) || errors.Is(err, sim.ErrCancelled) {
		delete(c.entries, key)
	} else {
		c.order = append(c.order, key)
		for len(c.order) > c.max {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	close(e.done)
}

// built is a point's configuration as Build returned it.
type built struct {
	b    *scenario.Built
	spec *scenario.Spec
}

// simulate runs one point as routesim run does: build it from its
// arguments (unless pre holds it built), make its policy from its
// settings, run it with its seed.
func simulate(ctx context.Context, build Build, p point, pre built) (*sim.Result, error) {
	b, spec := pre.b, pre.spec
	if b == nil {
		var err error
		if b, spec, err = build(p.Args); err != nil {
			return nil, err
		}
	}
	run := b.Run(spec.Seed)
	run.Config.Cancel = ctx.Done() // never changes a finished run's result
	res, _, err := run.Exec()
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return res, err
}

// series computes the per-request views of a run.
func series(res *sim.Result) *Series {
	s := &Series{}
	recs := res.Records
	if len(recs) == 0 {
		return s
	}
	ttft := make([]float64, 0, len(recs))
	first, last := recs[0].Arrival, recs[0].Arrival
	for i := range recs {
		first, last = min(first, recs[i].Arrival), max(last, recs[i].Arrival)
		if recs[i].Status == sim.StatusOK {
			ttft = append(ttft, recs[i].TTFT().Ms())
		}
	}
	sort.Float64s(ttft)
	s.CDF = make([]*float64, CDFSteps+1)
	for i := range s.CDF {
		// the nearest-rank quantile over every offered request, with
		// the requests not served as +Inf after the served ones
		k := int(math.Ceil(float64(i)/CDFSteps*float64(len(recs)))) - 1
		k = max(k, 0)
		if k < len(ttft) {
			v := ttft[k]
			s.CDF[i] = &v
		}
	}
	span := (last - first).Seconds()
	var sum, cnt, all, lost [10]float64
	for i := range recs {
		d := 0
		if span > 0 {
			d = max(min(int(10*(recs[i].Arrival-first).Seconds()/span), 9), 0)
		}
		all[d]++
		if recs[i].Status != sim.StatusOK {
			lost[d]++
			continue
		}
		sum[d] += recs[i].TTFT().Ms()
		cnt[d]++
	}
	for d := range 10 {
		if cnt[d] > 0 {
			v := sum[d] / cnt[d]
			s.DecileTTFTMs[d] = &v
		}
		if all[d] > 0 {
			s.DecileNotServed[d] = lost[d] / all[d]
		}
	}
	end := first
	for i := range recs {
		end = max(end, recs[i].End)
	}
	s.BinS = max((end-first).Seconds()/overloadBins, 1e-3)
	s.Overload = make([]int, overloadBins)
	for i := range recs {
		if c := recs[i].HTTPCode; c == 503 || c == 529 {
			b := min(int((recs[i].End-first).Seconds()/s.BinS), overloadBins-1)
			s.Overload[max(b, 0)]++
		}
	}
	return s
}
