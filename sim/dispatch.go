package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/routesim/routesim/policy"
)

// submit sends request i (again) through the frontend: a too-long request
// is refused at once (HTTP 400, never retried): over max-model-len, or,
// for TensorRT-LLM without chunked prefill, a prompt over max_num_tokens;
// others reach the router after the frontend delay.
func (c *cluster) submit(i int32) {
	r := c.reqs.at(i)
	if r.status != StatusPending {
		return // its client gave up while waiting to re-send
	}
	j := r.job
	c.reqs.expand(r, c.wl.BlockSize)
	if t := c.cfg.Router.Timeout; t > 0 {
		r.deadline = c.eng.Now() + t
		c.schedReq(r.deadline, KindTimeout, i)
	}
	front := c.cfg.Front()
	if total := j.InputTokens + j.OutputTokens; total > front.Worker.MaxModelLen {
		c.end(i, StatusRejectedTooLong, fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion).",
			front.Worker.MaxModelLen, total, j.InputTokens, j.OutputTokens))
		return
	}
	if fw := front.Worker; fw.Engine == TRTLLM && !fw.ChunkedPrefill && j.InputTokens > fw.MaxNumBatchedTokens {
		// TensorRT-LLM's LLM._check_arguments (PyTorch backend, chunked
		// prefill off), with its message; trtllm-serve answers 400.
		c.end(i, StatusRejectedTooLong, fmt.Sprintf(
			"The sum of prompt length (%.1f), query length (0) should not exceed max_num_tokens (%d)", float64(j.InputTokens), fw.MaxNumBatchedTokens))
		return
	}
	delay := Time(math.Round(front.Profile.FrontendDelayNs(j.InputTokens)))
	if delay == 0 {
		c.route(i)
		return
	}
	c.schedReq(c.eng.Now()+delay, KindRoute, i)
}

// decide asks the policy about request i and reports the decision.
func (c *cluster) decide(i int32, parked bool) policy.Decision {
	r := c.reqs.at(i)
	c.preq = policy.Request{ID: int(i), InputTokens: r.job.InputTokens, OutputTokens: r.job.OutputTokens, Blocks: r.prompt(), Session: r.job.Session, Parked: parked}
	d := c.pol.Route(&c.preq, c.rt)
	if c.cfg.Decisions != nil {
		c.cfg.Decisions.Decision(c.eng.Now(), int(i), len(r.attempts)+1, d)
	}
	return d
}

// route lets the router decide on a request that has just passed the
// frontend: dispatch it, park it, or reject it.
func (c *cluster) route(i int32) {
	r := c.reqs.at(i)
	if r.status != StatusPending {
		return // its client gave up during the frontend delay
	}
	if r.routed < 0 {
		r.routed = c.eng.Now()
	}
	d := c.decide(i, false)
	if d.Action == policy.Park {
		r.parkedAt = c.eng.Now()
		c.rt.park(i, r.job.InputTokens, r.prompt())
		return
	}
	c.apply(i, d)
}

// apply carries out a decision that is not Park: reject or dispatch.
func (c *cluster) apply(i int32, d policy.Decision) {
	switch d.Action {
	case policy.RejectBusy:
		c.reject(i, StatusRejectedBusy, d.Reason)
	case policy.RejectBackpressure:
		c.reject(i, StatusRejectedBackpressure, d.Reason)
	case policy.Dispatch:
		c.dispatch(i, d.Worker)
	default:
		panic(fmt.Sprintf("sim: policy returned action %v for request %d", d.Action, i))
	}
}

// drain dispatches parked requests in FCFS order until the head has to
// wait again (head-of-line blocking, as Dynamo's queue).
func (c *cluster) drain() {
	for c.rt.queueLen() > 0 {
		i := c.rt.queue[c.rt.qHead]
		c.rt.using = c.rt.frozen[i] // nil unless frozen
		d := c.decide(i, true)
		if d.Action == policy.Park {
			c.rt.using = nil
			return
		}
		r := c.reqs.at(i)
		c.rt.unpark(r.job.InputTokens)
		r.queueNs = c.eng.Now() - r.parkedAt
		c.apply(i, d)
		c.rt.using = nil
		c.rt.thaw(i)
	}
}

// reject ends request i, or, if the client still has retries, schedules
// its re-send after an exponential backoff.
func (c *cluster) reject(i int32, s Status, reason string) {
	r := c.reqs.at(i)
	if k := len(r.attempts); k < c.cfg.Router.Retries {
		r.attempts = append(r.attempts, Attempt{At: c.eng.Now(), Status: s, Reason: reason})
		c.schedReq(c.eng.Now()+retryWait(c.cfg.Router.RetryBackoff, k), KindResend, i)
		return
	}
	c.end(i, s, reason)
}

// timeout ends request i whose client has waited its --request-timeout
// for the current send: the router forgets it, and its worker aborts it
// and frees its blocks. A stale timer (the request ended, or was re-sent
// since) does nothing.
func (c *cluster) timeout(i int32) {
	r := c.reqs.at(i)
	if r.status != StatusPending || r.deadline != c.eng.Now() {
		return
	}
	if r.worker >= 0 {
		w := c.workers[r.worker]
		if r.firstToken < 0 {
			c.rt.firstToken(w.id, r.booked)
		}
		c.rt.finish(w.id, r.prompt())
		c.activeLoad(w.id)
		if w.run.k > 0 {
			c.cut(w)
		}
		w.abort(i)
		if !w.busy && !w.kicked && w.hasWork() {
			w.kicked = true
			c.eng.Schedule(c.eng.Now(), KindKick, int32(w.id))
		}
		c.drainDue = true
	} else if c.rt.remove(i, r.job.InputTokens) {
		c.rt.thaw(i)
		c.drainDue = true
	}
	c.end(i, StatusFailedTimeout, fmt.Sprintf("client timed out after %s without the full response", time.Duration(c.cfg.Router.Timeout)))
}

// MaxRetryWait caps the client's exponential backoff (the wait doubles
// from --retry-backoff with every re-send, up to this).
const MaxRetryWait = Time(3600) * Second

// retryWait is the wait before re-send k+1: backoff·2^k, at most
// MaxRetryWait (and never an overflowed shift).
func retryWait(backoff Time, k int) Time {
	w := min(backoff, MaxRetryWait)
	for ; k > 0 && w < MaxRetryWait; k-- {
		w = min(2*w, MaxRetryWait)
	}
	return w
}

func (c *cluster) dispatch(i int32, w int) {
	if w < 0 || w >= len(c.workers) {
		panic(fmt.Sprintf("sim: policy chose worker %d of %d", w, len(c.workers)))
	}
	r := c.reqs.at(i)
	r.booked = c.rt.book(w, r.job.InputTokens, r.prompt())
	c.activeLoad(w)
	if c.gateRefuses() {
		// Dynamo v1.2 books the chosen worker first and, refused, releases
		// the booking (two ActiveLoads) and re-checks its queue.
		c.rt.firstToken(w, r.booked)
		c.rt.finish(w, r.prompt())
		c.activeLoad(w)
		c.drainDue = true
		msg := c.rt.mon.adm.OverloadMessage
		if c.cfg.Decisions != nil {
			c.cfg.Decisions.Decision(c.eng.Now(), int(i), len(r.attempts)+1, policy.Decision{Action: policy.RejectBusy,
				Reason: fmt.Sprintf("refused after booking worker %d: the busy monitor's free set is empty (%s)", w, msg)})
		}
		c.reject(i, StatusRejectedBusy, msg)
		return
	}
	r.worker, r.dispatched = int32(w), c.eng.Now()
	wk := c.workers[w]
	if wk.run.k > 0 {
		c.cut(wk)
	}
	wk.enqueue(i)
	if !wk.busy && !wk.kicked {
		wk.kicked = true
		c.eng.Schedule(c.eng.Now(), KindKick, int32(w))
	}
}

// kvSink forwards one worker's KV events to the router, after the lag.
type kvSink struct {
	c *cluster
	w int32
}

func (s kvSink) Stored(h uint64)  { s.c.kvEvent(kvEvent{worker: s.w, stored: true, hash: h}) }
func (s kvSink) Removed(h uint64) { s.c.kvEvent(kvEvent{worker: s.w, hash: h}) }

// warm loads the router's stored-block slots of hashes whose events
// follow now (KVCache.warm); lagged events reach the index later.
func (s kvSink) warm(hs []uint64) {
	if s.c.cfg.Router.KVEventLag == 0 {
		s.c.rt.stored.lists.warm(hs)
	}
}

func (c *cluster) kvEvent(e kvEvent) {
	lag := c.cfg.Router.KVEventLag
	if lag == 0 {
		c.rt.applyKV(e)
		return
	}
	e.at = c.eng.Now() + lag
	if len(c.rt.pending) == 0 {
		c.eng.Schedule(e.at, KindKVEvent, 0)
	}
	c.rt.pending = append(c.rt.pending, e)
}

// deliverKV applies the KV events due now and schedules the next delivery.
func (c *cluster) deliverKV() {
	now, p := c.eng.Now(), c.rt.pending
	k := 0
	for ; k < len(p) && p[k].at <= now; k++ {
		c.rt.applyKV(p[k])
	}
	c.rt.pending = p[:copy(p, p[k:])]
	if len(c.rt.pending) > 0 {
		c.eng.Schedule(c.rt.pending[0].at, KindKVEvent, 0)
	}
}
