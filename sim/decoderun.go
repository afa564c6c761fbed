package sim

import (
	"math"

	"github.com/routesim/routesim/model"
)

// decodeRun is a run of engine steps a worker takes as one event. Once a
// worker's batch only decodes and nothing waits, every step until the
// next change repeats the same requests with one more context token each,
// so the run's step times follow from the first step's batch. The cluster
// schedules one step end, at the run's last step, and applies the steps
// before it (tokens, block allocations and commits, counters, the GPU
// sampler) only when something needs the worker's state: the last step's
// end, a request dispatched to the worker, or a client giving up on one of
// its requests (cut). Nothing outside the worker reads that state in
// between: the run is only taken when the worker's KV changes reach no
// one (no KV events to the router, no published usage) and without a step
// observer (service noise is a function of the step's index, so a run's
// steps have the noise the step-by-step path gives them); its last step is the first in which
// a request samples its last token (that step's end is handled as any
// other), or the last whose block allocations fit the free blocks. The
// results are those of simulating every step (Config.StepByStep,
// compared in tests): a run applies each step through the same functions
// as the per-step path (step.go) and batches only the arithmetic (the
// steps' durations and batches, how far its allocations reach).
type decodeRun struct {
	k    int         // steps in the run (0 = none under way); step k ends the run
	done int         // steps begun: 1..done-1 are finished, done is in flight
	at   Time        // the start of step done
	dur  Time        // its duration
	b    model.Batch // step 1's batch
	k0   int         // step 1's index among the steps the worker began (its noise)
	lin  float64     // the profile's curve term, the same for every step
	head float64     // the profile's step time but for the context term, the same for every step
}

// planDur is the duration of step s of w's run, with its service noise:
// computed once, by planRun, into w.runDurs.
func (r *decodeRun) planDur(w *worker, s int) Time {
	return durationOf(w.iterNs(w.noisy(w.prof.StepNsFromHead(r.head, r.ctx(s), r.lin), r.k0+s-1)))
}

// stepDur is the duration of step s (1 … k) of w's run, as planned.
func (r *decodeRun) stepDur(w *worker, s int) Time { return w.runDurs[s] }

// ctx is step s's decode context tokens: step 1's with s−1 more per
// request.
func (r *decodeRun) ctx(s int) int { return r.b.DecodeCtxTokens + r.b.DecodeSeqs*(s-1) }

// batch is step s's batch in the run: step 1's with step s's context.
func (r *decodeRun) batch(s int) model.Batch {
	b := r.b
	b.DecodeCtxTokens = r.ctx(s)
	return b
}

// planRun starts a run at w's step just begun (batch b, duration dur) if
// the step qualifies, and returns when the run's last step starts and
// ends (the step's own start and end if no run is taken). The cluster
// calls it only where runs are allowed (cluster.runs).
func (c *cluster) planRun(w *worker, b model.Batch, dur Time) (start, end Time) {
	now := c.eng.Now()
	start, end = now, now+dur
	n := len(w.sched)
	if w.numWaiting() > 0 || b.PrefillTokens > 0 || w.host != nil ||
		b.DecodeSeqs != n || n != len(w.running) {
		return start, end
	}
	k := c.runLength(w)
	if k < 2 {
		return start, end
	}
	w.run = decodeRun{k: 1, done: 1, at: now, dur: dur, b: b, k0: w.stats.Steps - 1, lin: w.prof.CurveNs(n), head: w.prof.StepHeadNs(b)}
	w.runDurs = append(w.runDurs[:0], 0, dur)
	for s := 2; s <= k; s++ {
		d := w.run.planDur(w, s)
		w.runDurs = append(w.runDurs, d)
		if end+d > Horizon || d >= maxStep {
			break // the worker's next step event reports it
		}
		start, end = end, end+d
		w.run.k = s
	}
	if w.run.k < 2 {
		w.run = decodeRun{}
	}
	return start, end
}

// runLength is how many steps w's batch may run unchanged: up to the step
// in which a request samples its last token, while the blocks the steps
// allocate are free (no preemption), and, when the router hears the
// worker's KV events, before any step that allocates or commits a block.
func (c *cluster) runLength(w *worker) int {
	B := w.cfg.BlockSize
	events := w.kv.Events != nil
	k := math.MaxInt
	for _, e := range w.sched {
		r := w.reqs.at(e.req)
		k = min(k, int(r.osl)-r.generated)
		if events {
			// Step s computes token c+s and needs blocksFor(c+s) blocks;
			// its end commits the block it fills, if one of the job's.
			k = min(k, B*len(r.table)-r.computed)
			if r.committed < len(r.blocks) {
				k = min(k, B*(r.committed+1)-r.computed)
			}
		}
	}
	if events || k < 2 {
		return k
	}
	// Without events, allocations are the worker's own business as long
	// as none fails: the longest run whose allocations fit the free blocks.
	free := w.kv.Free()
	if c.allocations(w, k) <= free {
		return k
	}
	lo, hi := 1, k // allocations(lo) ≤ free < allocations(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if c.allocations(w, mid) <= free {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// allocations is the number of blocks steps 2..k of a run starting at w's
// step in flight allocate.
func (c *cluster) allocations(w *worker, k int) int {
	total := 0
	for _, e := range w.sched {
		r := w.reqs.at(e.req)
		total += max(w.blocksFor(r.computed+k)-len(r.table), 0)
	}
	return total
}

// advance applies w's run up to step j: steps before j end and steps up
// to j begin, each through the functions the per-step path applies a step
// with (step.go), at the step's own times and in the order simulating
// each step would apply them. Only what the scheduler would do is left
// out: it would choose the same requests, one token each.
func (c *cluster) advance(w *worker, j int) {
	run := &w.run
	for s := run.done + 1; s <= j; s++ {
		start := run.at + run.dur
		c.endStep(w, start) // step s−1 ends
		c.absorbed++
		for _, e := range w.sched { // step s begins
			r := w.reqs.at(e.req)
			if !w.grow(r, r.computed+e.tokens) {
				panic("sim: a decode run ran out of KV blocks it had counted")
			}
		}
		dur := run.stepDur(w, s)
		c.bookStep(w, start, dur, run.batch(s))
		run.done, run.at, run.dur = s, start, dur
	}
}

// cut ends w's run at the step in flight now, the current event being
// handled: a request was dispatched to w or one of its requests was given
// up on, which the next step must see. The steps before it are applied;
// if the run would have gone on, its step end moves to this step's.
func (c *cluster) cut(w *worker) {
	run := &w.run
	j, start, end := run.done, run.at, run.at+run.dur
	for ; j < run.k && !c.firesAfterNow(w.id, start, end); j++ {
		start, end = end, end+run.stepDur(w, j+1)
	}
	c.advance(w, j)
	if j < run.k {
		c.scheduleStepEnd(w, start, end)
	}
	*run = decodeRun{}
}

// firesAfterNow reports whether the end at t of w's step that started at
// start comes after the event being handled, in the engine's order (the
// event scheduleStepEnd would schedule for it).
func (c *cluster) firesAfterNow(w int, start, t Time) bool {
	return c.cur.before(&Event{At: t, Kind: KindStepEnd, Seq: uint64(start), Arg: int32(w)})
}
