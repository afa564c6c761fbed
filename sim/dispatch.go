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

// decide asks pool p's policy about request i and reports the decision.
func (c *cluster) decide(i int32, parked bool, p int32) policy.Decision {
	r := c.reqs.at(i)
	c.preq = policy.Request{ID: int(i), InputTokens: r.job.InputTokens, OutputTokens: r.job.OutputTokens, Blocks: r.prompt(), Session: r.job.Session, Parked: parked}
	rt := c.pools[p].Router
	d := rt.Policy.Route(&c.preq, rt)
	if c.cfg.Decisions != nil {
		c.cfg.Decisions.Decision(c.eng.Now(), int(i), len(r.attempts)+1, d)
	}
	return d
}

// route lets the router of the request's pool decide on a request that
// has just passed the frontend: dispatch it, park it, or reject it.
func (c *cluster) route(i int32) {
	r := c.reqs.at(i)
	if r.status != StatusPending {
		return // its client gave up during the frontend delay
	}
	if r.routed < 0 {
		r.routed = c.eng.Now()
	}
	p, ok := c.poolFor(i)
	if !ok {
		return
	}
	d := c.decide(i, false, p)
	if d.Action == policy.Park {
		r.parkedAt = c.eng.Now()
		c.pools[p].Router.park(i, r.job.InputTokens, r.prompt())
		return
	}
	c.apply(i, d, p)
}

// apply carries out pool p's decision that is not Park: reject or
// dispatch.
func (c *cluster) apply(i int32, d policy.Decision, p int32) {
	switch d.Action {
	case policy.RejectBusy:
		c.reject(i, StatusRejectedBusy, d.Reason)
	case policy.RejectBackpressure:
		c.reject(i, StatusRejectedBackpressure, d.Reason)
	case policy.Dispatch:
		c.dispatch(i, d.Worker, p)
	default:
		panic(fmt.Sprintf("sim: policy returned action %v for request %d", d.Action, i))
	}
}

// drain dispatches every pool's parked requests, in pool order.
func (c *cluster) drain() {
	for p := range c.pools {
		c.drainPool(int32(p))
	}
}

// drainPool dispatches pool p's parked requests in FCFS order until the
// head has to wait again (head-of-line blocking, as Dynamo's queue).
func (c *cluster) drainPool(p int32) {
	rt := c.pools[p].Router
	for rt.queueLen() > 0 {
		i := rt.queue[rt.qHead]
		rt.using, rt.usingTiers = rt.frozen[i], rt.frozenTiers[i] // nil unless frozen
		d := c.decide(i, true, p)
		if d.Action == policy.Park {
			rt.using, rt.usingTiers = nil, nil
			return
		}
		r := c.reqs.at(i)
		rt.unpark(r.job.InputTokens)
		r.queueNs = c.eng.Now() - r.parkedAt
		c.apply(i, d, p)
		rt.using, rt.usingTiers = nil, nil
		rt.thaw(i)
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
		rt := c.rtOf(w.id)
		if r.firstToken < 0 {
			rt.firstToken(w.id, r.booked)
		}
		rt.finish(w.id, r.prompt())
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
	} else if p := c.routedIn(i); p >= 0 && c.pools[p].Router.remove(i, r.job.InputTokens) {
		c.pools[p].Router.thaw(i)
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

// dispatch sends request i to worker w, which pool p's policy chose; a
// worker not listed by p's router (another pool's, or one that left) is a
// broken invariant.
func (c *cluster) dispatch(i int32, w int, p int32) {
	if w < 0 || w >= len(c.workers) || c.poolOf[w] != p || !c.live(w) {
		panic(fmt.Sprintf("sim: pool %d's policy chose worker %d, not among its workers %v", p, w, c.pools[p].Workers))
	}
	r := c.reqs.at(i)
	rt := c.pools[p].Router
	r.booked = rt.book(w, r.job.InputTokens, r.prompt())
	c.activeLoad(w)
	if c.gateRefuses(rt) {
		// Dynamo v1.2 books the chosen worker first and, refused, releases
		// the booking (two ActiveLoads) and re-checks its queue.
		rt.firstToken(w, r.booked)
		rt.finish(w, r.prompt())
		c.activeLoad(w)
		c.drainDue = true
		msg := rt.mon.adm.OverloadMessage
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
	if rt := s.c.rtOf(int(s.w)); rt.kvLag == 0 {
		rt.stored.lists.warm(hs)
	}
}

// kvEvent sends a worker's KV event to its pool's router, after the lag.
func (c *cluster) kvEvent(e kvEvent) {
	rt := c.rtOf(int(e.worker))
	lag := rt.kvLag
	if lag == 0 {
		rt.applyKV(e)
		return
	}
	e.at = c.eng.Now() + lag
	if len(rt.pending) == 0 {
		c.eng.Schedule(e.at, KindKVEvent, c.poolOf[e.worker])
	}
	rt.pending = append(rt.pending, e)
}

// deliverKV applies the KV events due now at pool p's router and
// schedules its next delivery.
func (c *cluster) deliverKV(pool int32) {
	rt := c.pools[pool].Router
	now, p := c.eng.Now(), rt.pending
	k := 0
	for ; k < len(p) && p[k].at <= now; k++ {
		rt.applyKV(p[k])
	}
	rt.pending = p[:copy(p, p[k:])]
	if len(rt.pending) > 0 {
		c.eng.Schedule(rt.pending[0].at, KindKVEvent, pool)
	}
}
