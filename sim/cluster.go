package sim

import (
	"fmt"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
)

// Result is everything a run produced.
type Result struct {
	Records []Record      // one per request, in trace order
	Workers []WorkerStats // one per worker
	// Makespan runs from the first arrival to the last event, or to the
	// last response's arrival at its client if that is later.
	Makespan Time
	// Events counts the events handled, each engine step one, whether it
	// was handled alone or inside a decode run.
	Events uint64
	// GPU is the simulated NVML trace, sampled every NVMLPeriod over the
	// sampler's span (Config.NVML), kept only with NVMLConfig.Series.
	GPU      GPUSamples
	nvml     *nvml
	profiles []*model.Profile // per worker, for power
}

// After returns the result with only the requests that arrived at or
// after warmup (a warm-up period excluded from the statistics); workers
// and GPU samples still cover the whole run.
func (r *Result) After(warmup Time) *Result {
	if warmup <= 0 {
		return r
	}
	out := *r
	out.Records = nil
	for _, rec := range r.Records {
		if rec.Arrival >= warmup {
			out.Records = append(out.Records, rec)
		}
	}
	return &out
}

// Event kinds, in the order they fire at equal times: arrivals at one
// instant all land before any worker starts a step, so a burst is batched.
const (
	KindArrival  Kind = iota // a request reaches the frontend; Arg = request
	KindResend               // a client re-sends a rejected request; Arg = request
	KindFollowUp             // a closed-loop client sends its next request; Arg = request
	KindKVEvent              // lagged KV events reach a router; Arg = pool
	KindMonitor              // messages reach a busy monitor; Arg = pool
	KindRoute                // frontend done, the router decides; Arg = request
	KindStepEnd              // a worker's step finishes; Arg = worker
	KindKick                 // an idle worker looks for work; Arg = worker
	KindTimeout              // a client's wait for a request runs out; Arg = request
	KindMember               // a worker joins or leaves; Arg = Config.Membership index
)

// cluster wires the pools (each a router stage and its workers) and
// handles the events of one run.
type cluster struct {
	eng      Engine
	cfg      Config
	wl       *Workload
	workers  []*worker // by id
	poolOf   []int32   // by worker id
	pools    []Pool
	paths    map[int32]*path // requests' paths, with more than one pool
	reqs     reqStore
	nvml     nvml
	ends     []int32 // requests that ended this event, for FollowUp
	ended    int
	drainDue bool
	preq     policy.Request
	src      JobStream // the workload's jobs, when streamed
	t0       Time      // the first arrival
	records  []Record  // of the requests retired so far, in index order
	retired  int       // requests [0, retired) are records now
	runs     bool      // workers may take decode runs (decodeRun)
	cur      Event     // the event being handled
	last     Time      // when the last event that did something fired
	lastEnd  Time      // the latest a client learned a request ended
	absorbed uint64    // step ends applied inside decode runs
	stale    uint64    // step-end events of runs cut short, ignored
}

// Run simulates wl on the configured cluster with routing policy pol.
// It fails on an invalid configuration, or, as a broken invariant, if any
// request did not end exactly once.
func Run(cfg Config, wl *Workload, pol policy.Policy) (*Result, error) {
	_, res, err := run(cfg, wl, pol)
	return res, err
}

// run is Run, also returning the cluster it ran.
func run(cfg Config, wl *Workload, pol policy.Policy) (*cluster, *Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if pol == nil && cfg.Pools[0].Policy == nil {
		return nil, nil, fmt.Errorf("sim: no policy for pool 0")
	}
	for p := range cfg.Pools {
		pp := cfg.Pools[p].Policy
		if pp == nil {
			pp = pol
		}
		if sz, ok := pp.(policy.Sized); ok {
			if err := sz.CheckWorkers(cfg.poolPeak(p)); err != nil {
				return nil, nil, err
			}
		}
	}
	if bs := cfg.Front().Worker.BlockSize; wl.BlockSize != bs {
		return nil, nil, fmt.Errorf("sim: workload prepared for block size %d, workers use %d", wl.BlockSize, bs)
	}
	c := &cluster{cfg: cfg, wl: wl}
	c.eng.cancel = cfg.Cancel
	if cfg.Progress != nil {
		c.eng.tick = func() { cfg.Progress(c.eng.Now(), len(c.records)) }
	}
	c.records = make([]Record, 0, wl.Len())
	for i := range wl.Jobs {
		if err := wl.Jobs[i].check(wl.BlockSize); err != nil {
			return nil, nil, fmt.Errorf("sim: job %d (line %d): %w", i, wl.Jobs[i].Line, err)
		}
		c.reqs.add(newReqState(&wl.Jobs[i]))
	}
	if wl.Jobs == nil && wl.Stream != nil {
		if cfg.FollowUp != nil {
			return nil, nil, fmt.Errorf("sim: a streamed workload cannot have closed-loop clients (they need every job at hand)")
		}
		src, err := wl.Stream()
		if err != nil {
			return nil, nil, err
		}
		defer src.Close()
		c.src = src
	}
	c.workers = make([]*worker, 0, cfg.NumWorkers())
	for p := range cfg.Pools {
		for k := 0; k < cfg.Pools[p].N; k++ {
			c.addWorker(p, &cfg.Pools[p])
		}
	}
	c.nvml = newNVML(c.workers, cfg.NVML)
	lmc := false
	for _, w := range c.workers {
		lmc = lmc || w.lmc != nil
	}
	if lmc {
		if err := c.lmcWarm(); err != nil {
			return nil, nil, err
		}
	}
	c.newPools(pol)
	engine := false
	for p := range c.pools {
		rt := c.pools[p].Router
		c.admit(p, rt)
		rt.readTiers(rt.Policy)
		engine = engine || rt.engine != nil
	}
	c.reqs.recycled = c.forgetScans
	c.runs = !cfg.StepByStep && cfg.Observer == nil && !cfg.CheckInvariants && !engine && !lmc
	for k, m := range cfg.Membership {
		c.eng.Schedule(m.At, KindMember, int32(k))
	}
	if c.src != nil {
		if c.pull() {
			c.t0 = c.reqs.at(0).job.Arrival
		}
	} else if len(wl.Jobs) > 0 {
		c.t0 = wl.Jobs[0].Arrival
		c.schedReq(c.t0, KindArrival, 0)
	}
	c.eng.Run(c)
	if err := c.eng.Err(); err != nil {
		return nil, nil, err
	}
	res, err := c.result()
	return c, res, err
}

func newReqState(j *Job) reqState {
	return reqState{job: j, isl: int32(j.InputTokens), osl: int32(j.OutputTokens), blocks: j.Blocks, worker: -1, routed: -1, dispatched: -1, queueNs: -1, firstToken: -1, secondToken: -1, end: -1}
}

// Handle dispatches one event.
func (c *cluster) Handle(e Event) {
	if e.Kind == KindStepEnd {
		if w := c.workers[e.Arg]; !w.busy || e.At != w.endAt {
			c.stale++ // the end of a run that was cut short
			return
		}
	}
	c.cur = e
	if e.Kind != KindMember { // a membership change alone does not extend the run
		c.last = e.At
	}
	switch e.Kind {
	case KindArrival, KindResend, KindFollowUp, KindRoute, KindTimeout:
		c.reqs.at(e.Arg).events--
	}
	switch e.Kind {
	case KindArrival:
		if c.src != nil {
			c.pull()
		} else if next := int(e.Arg) + 1; next < len(c.wl.Jobs) {
			c.schedReq(c.wl.Jobs[next].Arrival, KindArrival, int32(next))
		}
		c.submit(e.Arg)
	case KindResend, KindFollowUp:
		c.submit(e.Arg)
	case KindRoute:
		c.route(e.Arg)
	case KindKVEvent:
		c.deliverKV(e.Arg)
	case KindMonitor:
		c.deliverMonitor(e.Arg)
	case KindStepEnd:
		w := c.workers[e.Arg]
		if w.run.k > 0 {
			c.advance(w, w.run.k)
			w.run = decodeRun{}
		}
		w.busy = false
		c.endStep(w, c.eng.Now())
		w.overlapCutoff()
		c.startStep(w)
	case KindKick:
		w := c.workers[e.Arg]
		w.kicked = false
		if !w.busy {
			w.seeAll()
			c.startStep(w)
		}
	case KindTimeout:
		c.timeout(e.Arg)
	case KindMember:
		c.member(e.Arg)
	}
	if c.drainDue {
		c.drainDue = false
		c.drain()
	}
	c.followUps()
	c.retire()
}

// schedReq schedules an event that names request i, which then stays
// in the store until the event has fired.
func (c *cluster) schedReq(at Time, kind Kind, i int32) {
	c.reqs.at(i).events++
	c.eng.Schedule(at, kind, i)
}

// pull takes the next job from the stream and schedules its arrival; it
// reports false at the stream's end (a read error stops the run).
func (c *cluster) pull() bool {
	j, ok := c.src.Next()
	if !ok {
		if err := c.src.Err(); err != nil {
			c.eng.Stop(err)
		}
		return false
	}
	if err := j.check(c.wl.BlockSize); err != nil {
		c.eng.Stop(fmt.Errorf("sim: job %d (line %d): %w", j.ID, j.Line, err))
		return false
	}
	c.schedReq(j.Arrival, KindArrival, c.reqs.add(newReqState(j)))
	return true
}

// retire turns the oldest requests that are done with (ended, named by no
// pending event, out of every worker's step) into records, in index
// order, and frees each page of request state once all of it is retired:
// a run holds its records and the requests in flight, not the state of
// every request it has seen.
func (c *cluster) retire() {
	for c.retired < c.reqs.len() {
		i := int32(c.retired)
		r := c.reqs.at(i)
		if r.status == StatusPending || r.events > 0 || (r.worker >= 0 && c.workers[r.worker].inStep(i)) {
			return
		}
		c.records = append(c.records, c.record(i, r))
		c.retired++
		if c.retired%reqPage == 0 {
			c.reqs.pages[(c.retired-1)>>reqPageBits] = nil
		}
	}
}

// record is request i's outcome.
func (c *cluster) record(i int32, r *reqState) Record {
	return Record{
		ID: int(i), Line: r.job.Line, Arrival: r.job.Arrival, Routed: r.routed, Dispatched: r.dispatched, QueueNs: r.queueNs,
		Worker: int(r.worker), FirstToken: r.firstToken, SecondToken: r.secondToken, End: r.end,
		InputTokens: r.job.InputTokens, OutputTokens: r.job.OutputTokens,
		CachedTokens: r.cached, CachedHostTokens: r.tierTokens(r.cachedHost), CachedDiskTokens: r.tierTokens(r.cachedDisk), Preemptions: r.preemptions, Status: r.status, HTTPCode: c.httpCode(r.status), Reason: r.reason, Attempts: r.attempts,
	}
}

// followUps asks the closed-loop clients for the next request of every
// request that ended during this event. It runs after the event, never
// inside a worker's step, so the request store only grows between steps.
func (c *cluster) followUps() {
	for _, i := range c.ends {
		r := c.reqs.at(i)
		j := c.cfg.FollowUp.Ended(r.job, r.status, r.end)
		if j == nil {
			continue
		}
		if err := j.check(c.wl.BlockSize); err != nil || j.Arrival < r.end {
			panic(fmt.Sprintf("sim: follow-up of request %d is malformed (%v) or sent at %d before its predecessor ended at %d", i, err, j.Arrival, r.end))
		}
		idx := c.reqs.add(newReqState(j))
		j.ID = int(idx)
		c.schedReq(j.Arrival, KindFollowUp, idx)
	}
	c.ends = c.ends[:0]
}

// startStep schedules w's next step, or leaves it idle if nothing fits.
func (c *cluster) startStep(w *worker) {
	if w.host != nil {
		c.hostBefore(w)
	}
	if !w.hasWork() {
		return
	}
	b := w.schedule()
	if w.host != nil {
		c.hostAfter(w)
	}
	rt := c.rtOf(w.id)
	rt.publishUsage(w.id, c.eng.Now(), w.kv.Used(), w.numWaiting())
	if rt.engine != nil {
		c.engineUsage(w.id, w.kv.Used())
	}
	if len(w.sched) == 0 {
		return
	}
	dur := c.stepDur(w, b)
	if c.eng.Err() != nil {
		return // the step is past the clock or the longest step: the run stops
	}
	w.busy = true
	c.bookStep(w, c.eng.Now(), dur, b)
	if c.cfg.Observer != nil {
		c.cfg.Observer.Step(w.id, c.eng.Now(), dur, b, len(w.sched), w.kv.Used())
	}
	if c.cfg.CheckInvariants {
		if err := w.kv.Check(); err != nil {
			panic(fmt.Sprintf("sim: worker %d: %v", w.id, err))
		}
		if err := w.checkReservations(); err != nil {
			panic(fmt.Sprintf("sim: worker %d: %v", w.id, err))
		}
		if w.lmc != nil {
			if err := w.lmc.check(); err != nil {
				panic(fmt.Sprintf("sim: worker %d: %v", w.id, err))
			}
		}
	}
	start, end := c.eng.Now(), c.eng.Now()+dur
	if c.runs {
		start, end = c.planRun(w, b, dur)
	}
	c.scheduleStepEnd(w, start, end)
}

// stepDur is the duration of w's next step, with batch b: the profile's
// time with the service noise of the step's index (the steps w began). A
// step longer than model.MaxStepNs stops the run with an error
// (checkStep).
func (c *cluster) stepDur(w *worker, b model.Batch) Time {
	ns := w.iterNs(w.noisy(w.prof.StepNs(b), w.stats.Steps))
	if w.lmc != nil {
		ns += w.lmc.stepNs // LMCache's synchronous loads and stores (lmcache.go)
		w.lmc.stepNs = 0
	}
	c.checkStep(w, b, ns)
	return durationOf(ns)
}

// maxStep is model.MaxStepNs on the clock: the longest step a run takes.
const maxStep = Time(model.MaxStepNs)

// checkStep stops the run if a step of w with batch b takes ns > the
// longest step any engine takes (or is not a number): the coefficients,
// each within its physical bound, or the batch are absurd, and a result
// built on such a step would be fiction.
func (c *cluster) checkStep(w *worker, b model.Batch, ns float64) {
	if ns <= model.MaxStepNs {
		return
	}
	c.eng.Stop(fmt.Errorf("sim: worker %d: a step of %d prefill tokens and %d decoding sequences (%d context tokens) takes %.4g s under profile %q, longer than the %g s no engine step takes: its coefficients are too large for this batch, or the batch is absurd",
		w.id, b.PrefillTokens, b.DecodeSeqs, b.DecodeCtxTokens, ns/1e9, w.prof.Name, model.MaxStepNs/1e9))
}

// maxDuration is the longest duration durationOf returns: past the
// Horizon, so the engine refuses the event, and small enough that a time
// within the Horizon plus it stays on the clock (no int64 wrap).
const maxDuration = Time(1) << 62

// durationOf rounds a modelled step time to the clock: whole
// nanoseconds, at least one, max(Time(math.Round(ns)), 1), at most
// maxDuration, small enough to inline. In the range of step times the
// conversion truncates, and the part it cut off (exact below 2⁵³) says
// whether to round up; from 2⁵³ on a double is whole already; below half
// a nanosecond the answer is 1; from maxDuration on, and for NaN, it is
// maxDuration (converting a double past the int64 range is undefined: it
// must never make a zero-time or negative step).
func durationOf(ns float64) Time {
	switch {
	case ns >= 0.5 && ns < 1<<53:
		t := Time(ns)
		if ns-float64(t) >= 0.5 {
			t++
		}
		return t
	case ns >= 1<<53 && ns < float64(maxDuration):
		return Time(ns)
	case ns < 0.5:
		return 1
	}
	return maxDuration
}

// bookStep counts a step of w running [start, start+dur) with batch b:
// the worker's counters and the GPU sampler.
func (c *cluster) bookStep(w *worker, start, dur Time, b model.Batch) {
	w.stats.Steps++
	w.stats.BusyNs += dur
	w.stats.BatchedTokensSum += b.PrefillTokens + b.DecodeSeqs
	if used := w.kv.Used(); used > w.stats.PeakBlocksUsed {
		w.stats.PeakBlocksUsed = used
	}
	flops := 0.0
	if w.prof.FLOPPower() {
		flops = w.prof.StepFLOPs(b)
	}
	c.nvml.add(w.id, start-c.t0, dur, w.hostIdleNs(), flops)
}

// scheduleStepEnd schedules the end, at t, of w's step that started at
// start (the last step of a run). Steps ending at the same instant end in
// the order they started, as if scheduled when they started (which a
// run's last step was not), then in worker order.
func (c *cluster) scheduleStepEnd(w *worker, start, t Time) {
	w.endAt, w.stepStart = t, start
	c.eng.ScheduleOrdered(t, KindStepEnd, int32(w.id), uint64(start))
}

// sampled records a token of request ri (r) produced by the step ending
// at at: the client has it once its worker has emitted it (emitLag). The
// router hears of it, and the engine frees the request, when the step
// ends. Only a request's first, second and last tokens change anything:
// the others return here, inline (a decode run samples a token per
// request per step).
func (c *cluster) sampled(ri int32, r *reqState, at Time) {
	if r.generated > 2 && r.generated != int(r.osl) {
		return
	}
	c.recordToken(ri, r, at)
}

// recordToken is sampled for a token that changes the request's record.
func (c *cluster) recordToken(ri int32, r *reqState, at Time) {
	now := at + c.workers[r.worker].emitLag()
	switch r.generated {
	case 1:
		r.firstToken = now
		c.rtOf(int(r.worker)).firstToken(int(r.worker), r.booked)
		c.activeLoad(int(r.worker))
		c.drainDue = true
	case 2:
		r.secondToken = now
	}
	if r.generated == int(r.osl) {
		c.rtOf(int(r.worker)).finish(int(r.worker), r.prompt())
		c.activeLoad(int(r.worker))
		c.drainDue = true
		c.endAt(ri, StatusOK, "", now)
	}
}

// end closes a request now; ending one twice is a broken invariant.
func (c *cluster) end(i int32, s Status, reason string) { c.endAt(i, s, reason, c.eng.Now()) }

// endAt closes a request whose client learns of it at (now, or its last
// token's emission).
func (c *cluster) endAt(i int32, s Status, reason string, at Time) {
	r := c.reqs.at(i)
	if r.status != StatusPending {
		panic(fmt.Sprintf("sim: request %d ended twice (%v, then %v)", i, r.status, s))
	}
	r.status, r.end, r.reason = s, at, reason
	c.lastEnd = max(c.lastEnd, at)
	c.ended++
	if r.worker < 0 || !c.workers[r.worker].inStep(i) {
		c.reqs.release(r) // else the worker drops it after its step
	}
	if c.paths != nil {
		delete(c.paths, i)
	}
	if c.cfg.FollowUp != nil {
		c.ends = append(c.ends, i)
	}
}

// httpCode is the status code the client saw for outcome s.
func (c *cluster) httpCode(s Status) int {
	if (s == StatusRejectedBusy || s == StatusRejectedBackpressure) && c.cfg.Router.OverloadCode != 0 {
		return c.cfg.Router.OverloadCode
	}
	return s.HTTPCode()
}

func (c *cluster) result() (*Result, error) {
	res := &Result{Workers: make([]WorkerStats, len(c.workers)), Events: c.eng.Processed() + c.absorbed - c.stale}
	if c.reqs.len() > 0 {
		res.Makespan = max(c.last, c.lastEnd) - c.t0
	}
	c.retire()
	if c.retired < c.reqs.len() {
		r := c.reqs.at(int32(c.retired))
		if r.status == StatusPending {
			return nil, fmt.Errorf("sim: request %d (line %d) never ended: %d of %d requests ended", c.retired, r.job.Line, c.ended, c.reqs.len())
		}
		return nil, fmt.Errorf("sim: request %d (line %d) ended but is still named by %d events after the run", c.retired, r.job.Line, r.events)
	}
	res.Records, c.records = c.records, nil
	for i, w := range c.workers {
		res.profiles = append(res.profiles, w.prof)
		w.stats.CacheEvictions = w.kv.Evictions
		res.Workers[i] = w.stats
		if err := w.kv.Check(); err != nil {
			return nil, fmt.Errorf("sim: worker %d after the run: %w", i, err)
		}
		if u := w.kv.Used(); u != 0 || w.hasWork() {
			return nil, fmt.Errorf("sim: worker %d after the run: %d KV blocks still referenced, %d running, %d waiting (a request ended without releasing them)",
				i, u, len(w.running), w.numWaiting())
		}
		if w.kv.Used() != 0 {
			return nil, fmt.Errorf("sim: worker %d holds %d KV blocks after every request ended", i, w.kv.Used())
		}
		if rt := c.rtOf(i); rt.inFlight[i] != 0 || rt.prefill[i] != 0 || rt.ActiveBlocks(i) != 0 {
			return nil, fmt.Errorf("sim: router still books worker %d after the run: %d in flight, %d prefill tokens, %d blocks",
				i, rt.inFlight[i], rt.prefill[i], rt.ActiveBlocks(i))
		}
	}
	c.nvml.finish(int((res.Makespan + NVMLPeriod - 1) / NVMLPeriod))
	res.nvml = &c.nvml
	res.GPU = c.nvml.samples()
	return res, nil
}

// GPUStats summarises the simulated NVML sampler over its span (the run,
// or Config.NVML.Window), with power(w, util) in watts.
func (r *Result) GPUStats(power func(w int, util float64) float64) GPUStats {
	if r.nvml == nil {
		return GPUStats{}
	}
	return r.nvml.stats(power)
}
