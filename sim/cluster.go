package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/routesim/routesim/policy"
)

// Result is everything a run produced.
type Result struct {
	Records []Record      // one per request, in trace order
	Workers []WorkerStats // one per worker
	// Makespan runs from the first arrival to the last event.
	Makespan Time
	Events   uint64
}

// cluster wires the router stage to N workers and handles the events of
// one run.
type cluster struct {
	eng     Engine
	cfg     Config
	wl      *Workload
	pol     policy.Policy
	workers []*worker
	reqs    []reqState
	view    routerView
	noise   *rand.Rand
	next    int // next job to arrive
	ended   int
	preq    policy.Request
}

// Run simulates wl on the configured cluster with routing policy pol.
// It fails on an invalid configuration, or, as a broken invariant, if any
// request did not end exactly once.
func Run(cfg Config, wl *Workload, pol policy.Policy) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if wl.BlockSize != cfg.Worker.BlockSize {
		return nil, fmt.Errorf("sim: workload prepared for block size %d, workers use %d", wl.BlockSize, cfg.Worker.BlockSize)
	}
	c := &cluster{
		cfg:   cfg,
		wl:    wl,
		pol:   pol,
		reqs:  make([]reqState, len(wl.Jobs)),
		noise: Stream(cfg.Seed, "service"),
		view:  routerView{inFlight: make([]int, cfg.Workers)},
	}
	for i := range c.reqs {
		c.reqs[i] = reqState{job: &wl.Jobs[i], worker: -1, routed: -1, firstToken: -1, secondToken: -1, end: -1}
	}
	c.workers = make([]*worker, cfg.Workers)
	for i := range c.workers {
		c.workers[i] = newWorker(i, cfg.Worker, c.reqs)
	}
	if len(wl.Jobs) > 0 {
		c.eng.Schedule(wl.Jobs[0].Arrival, KindArrival, 0)
	}
	c.eng.Run(c)
	return c.result()
}

// Handle dispatches one event.
func (c *cluster) Handle(e Event) {
	switch e.Kind {
	case KindArrival:
		c.arrive(e.Arg)
	case KindRoute:
		c.route(e.Arg)
	case KindStepEnd:
		w := c.workers[e.Arg]
		w.busy = false
		w.finishStep(c.sampled)
		c.startStep(w)
	case KindKick:
		w := c.workers[e.Arg]
		w.kicked = false
		if !w.busy {
			c.startStep(w)
		}
	}
}

func (c *cluster) arrive(i int32) {
	now := c.eng.Now()
	if next := int(i) + 1; next < len(c.wl.Jobs) {
		c.eng.Schedule(c.wl.Jobs[next].Arrival, KindArrival, int32(next))
	}
	j := c.reqs[i].job
	if total := j.InputTokens + j.OutputTokens; total > c.cfg.Worker.MaxModelLen {
		c.end(i, StatusRejectedTooLong, fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion).",
			c.cfg.Worker.MaxModelLen, total, j.InputTokens, j.OutputTokens))
		return
	}
	delay := Time(math.Round(c.cfg.Profile.FrontendDelayNs(j.InputTokens)))
	if delay == 0 {
		c.route(i)
		return
	}
	c.eng.Schedule(now+delay, KindRoute, i)
}

func (c *cluster) route(i int32) {
	r := &c.reqs[i]
	r.routed = c.eng.Now()
	c.preq = policy.Request{ID: int(i), InputTokens: r.job.InputTokens, OutputTokens: r.job.OutputTokens, Blocks: r.job.Blocks}
	d := c.pol.Route(&c.preq, &c.view)
	if d.Worker == policy.Reject {
		c.end(i, StatusRejectedBusy, d.Reason)
		return
	}
	if d.Worker < 0 || d.Worker >= len(c.workers) {
		panic(fmt.Sprintf("sim: policy chose worker %d of %d", d.Worker, len(c.workers)))
	}
	r.worker = int32(d.Worker)
	c.view.inFlight[d.Worker]++
	w := c.workers[d.Worker]
	w.enqueue(i)
	if !w.busy && !w.kicked {
		w.kicked = true
		c.eng.Schedule(c.eng.Now(), KindKick, int32(w.id))
	}
}

// startStep schedules w's next step, or leaves it idle if nothing fits.
func (c *cluster) startStep(w *worker) {
	if !w.hasWork() {
		return
	}
	b := w.schedule()
	if len(w.sched) == 0 {
		return
	}
	ns := c.cfg.Profile.StepNs(b)
	if s := c.cfg.Profile.NoiseSigma; s > 0 {
		ns *= math.Exp(s*c.noise.NormFloat64() - s*s/2)
	}
	dur := max(Time(math.Round(ns)), 1)
	w.busy = true
	w.stats.Steps++
	w.stats.BusyNs += dur
	w.stats.BatchedTokensSum += b.PrefillTokens + b.DecodeSeqs
	if used := w.kv.Used(); used > w.stats.PeakBlocksUsed {
		w.stats.PeakBlocksUsed = used
	}
	if c.cfg.Observer != nil {
		c.cfg.Observer.Step(w.id, c.eng.Now(), dur, b, len(w.sched), w.kv.Used())
	}
	if c.cfg.CheckInvariants {
		if err := w.kv.Check(); err != nil {
			panic(fmt.Sprintf("sim: worker %d: %v", w.id, err))
		}
	}
	c.eng.Schedule(c.eng.Now()+dur, KindStepEnd, int32(w.id))
}

// sampled records a token of request ri produced at the current time.
func (c *cluster) sampled(ri int32) {
	r := &c.reqs[ri]
	now := c.eng.Now()
	switch r.generated {
	case 1:
		r.firstToken = now
	case 2:
		r.secondToken = now
	}
	if r.generated == r.job.OutputTokens {
		c.view.inFlight[r.worker]--
		c.end(ri, StatusOK, "")
	}
}

// end closes a request; ending one twice is a broken invariant.
func (c *cluster) end(i int32, s Status, reason string) {
	r := &c.reqs[i]
	if r.status != StatusPending {
		panic(fmt.Sprintf("sim: request %d ended twice (%v, then %v)", i, r.status, s))
	}
	r.status, r.end, r.reason = s, c.eng.Now(), reason
	c.ended++
}

func (c *cluster) result() (*Result, error) {
	res := &Result{Records: make([]Record, len(c.reqs)), Workers: make([]WorkerStats, len(c.workers)), Events: c.eng.Processed()}
	for i := range c.reqs {
		r := &c.reqs[i]
		if r.status == StatusPending {
			return nil, fmt.Errorf("sim: request %d (line %d) never ended: %d of %d requests ended", i, r.job.Line, c.ended, len(c.reqs))
		}
		res.Records[i] = Record{
			ID: i, Line: r.job.Line, Arrival: r.job.Arrival, Routed: r.routed, Worker: int(r.worker),
			FirstToken: r.firstToken, SecondToken: r.secondToken, End: r.end,
			InputTokens: r.job.InputTokens, OutputTokens: r.job.OutputTokens,
			CachedTokens: r.cached, Preemptions: r.preemptions, Status: r.status, Reason: r.reason,
		}
	}
	for i, w := range c.workers {
		w.stats.CacheEvictions = w.kv.Evictions
		res.Workers[i] = w.stats
		if err := w.kv.Check(); err != nil {
			return nil, fmt.Errorf("sim: worker %d after the run: %w", i, err)
		}
		if w.kv.Used() != 0 {
			return nil, fmt.Errorf("sim: worker %d holds %d KV blocks after every request ended", i, w.kv.Used())
		}
	}
	if len(c.reqs) > 0 {
		res.Makespan = c.eng.Now() - c.reqs[0].job.Arrival
	}
	return res, nil
}

// routerView is the router's own bookkeeping, as policy.View.
type routerView struct {
	inFlight []int
}

func (v *routerView) NumWorkers() int    { return len(v.inFlight) }
func (v *routerView) InFlight(w int) int { return v.inFlight[w] }
