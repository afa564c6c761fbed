package sim

import (
	"math"

	"github.com/routesim/routesim/policy"
)

// monitor is Dynamo's busy monitor (KvWorkerMonitor) and the frontend
// client's free set, as a policy's Admission configures them. It learns a
// worker's load only from messages: the router's own ActiveLoad after
// every booking, first token and release (its booked prompt blocks D and
// prefill tokens P, over the event plane), and the engine's published
// kv_used_blocks U (after the metrics lag). On each message it recomputes
// the worker's busy state; when the busy set changes it pushes the free
// set (the workers not busy) to the client. The client resets its free set
// to every worker once per reconcile period (FleetGate; the v1.4 reset
// keeps the overloaded workers, which makes the pushed set the truth).
//
// A worker is busy when D or U exceeds DecodeBlocksFrac × its total blocks
// (strict >; Dynamo latches this until both its last D and last U are at or
// under, which is the same as testing the last values), or P exceeds
// PrefillTokens, or P exceeds ⌊PrefillTokensFrac × max_num_batched_tokens⌋.
// A worker is one dp rank here.
type monitor struct {
	adm     policy.Admission
	total   []int // T: each worker's total KV blocks
	mnbt    []int
	d, p, u []int // last ActiveLoad (D, P) and last published usage (U)
	busy    []bool
	nBusy   int    // busy live workers
	live    []bool // the pool's workers still listed (by id)
	nLive   int
	pushed  Time // when the free set was last pushed (-1: never)
	phase   Time // the reconcile timer's phase within its period
	period  Time
	delay   Time // the event plane's delay of ActiveLoad messages
	lag     Time // the engine's publishing delay (the metrics lag)
	sentU   []int
	queues  [2][]monMsg // 0: ActiveLoad, 1: engine usage; each in time order
	next    Time        // the delivery event scheduled (-1: none)
	wipes   Time        // the last reset the trace reported
}

type monMsg struct {
	at     Time
	w      int32
	engine bool
	a, b   int // D and P, or U
}

// newMonitor builds the monitor of the pool whose workers are ids, among
// workers (indexed by id), with total blocks and token budgets from their
// pools; phase is the reconcile timer's offset.
func newMonitor(adm policy.Admission, workers []*worker, ids []int, delay, lag, phase Time) *monitor {
	m := &monitor{adm: adm, pushed: -1, phase: phase, period: Time(adm.ReconcileNs), delay: delay, lag: lag, next: -1, wipes: -1}
	m.grow(workers)
	for _, w := range ids {
		m.setLive(w, true)
	}
	return m
}

// grow makes room for the ids of workers (a worker joined).
func (m *monitor) grow(workers []*worker) {
	from, n := len(m.total), len(workers)
	m.total, m.mnbt = grown(m.total, n), grown(m.mnbt, n)
	m.d, m.p, m.u, m.sentU = grown(m.d, n), grown(m.p, n), grown(m.u, n), grown(m.sentU, n)
	m.busy, m.live = grown(m.busy, n), grown(m.live, n)
	for w := from; w < n; w++ {
		m.total[w], m.mnbt[w] = workers[w].cfg.KVBlocks, workers[w].cfg.MaxNumBatchedTokens
	}
}

// setLive lists worker w (it joined) or takes it out (it left: its busy
// state no longer counts, as the client drops a deregistered instance).
func (m *monitor) setLive(w int, live bool) {
	if m.live[w] == live {
		return
	}
	m.live[w] = live
	if live {
		m.nLive++
		return
	}
	m.nLive--
	if m.busy[w] {
		m.busy[w] = false
		m.nBusy--
	}
}

// busyOf applies the thresholds to worker w's last values.
func (m *monitor) busyOf(w int) bool {
	a := &m.adm
	if f := a.DecodeBlocksFrac; f > 0 && m.total[w] > 0 {
		limit := f * float64(m.total[w])
		if float64(m.d[w]) > limit || float64(m.u[w]) > limit {
			return true
		}
	}
	if a.PrefillTokens > 0 && m.p[w] > a.PrefillTokens {
		return true
	}
	return a.PrefillTokensFrac > 0 && float64(m.p[w]) > math.Floor(a.PrefillTokensFrac*float64(m.mnbt[w]))
}

// apply takes one message at now and reports whether the busy set changed
// (and so was pushed).
func (m *monitor) apply(msg monMsg, now Time) bool {
	w := int(msg.w)
	if msg.engine {
		m.u[w] = msg.a
	} else {
		m.d[w], m.p[w] = msg.a, msg.b
	}
	b := m.busyOf(w)
	if b == m.busy[w] || !m.live[w] {
		return false
	}
	m.busy[w] = b
	if b {
		m.nBusy++
	} else {
		m.nBusy--
	}
	m.pushed = now
	return true
}

// lastReset is the client's last reset of its free set at or before now
// (-1 before the first, or without resets).
func (m *monitor) lastReset(now Time) Time {
	if m.period <= 0 || now < m.phase {
		return -1
	}
	return m.phase + (now-m.phase)/m.period*m.period
}

// refuses says the client's free set is empty at now: the monitor pushed
// an all-busy set after the client's last reset.
func (m *monitor) refuses(now Time) bool {
	return m.nBusy == m.nLive && m.pushed >= 0 && m.pushed >= m.lastReset(now)
}

// overloaded is worker w as the ExcludeBusy rule sees it: busy in the set
// the monitor last pushed, which the v1.4 reset keeps.
func (m *monitor) overloaded(w int) bool { return m.busy[w] }

// post queues a message for delivery at msg.at.
func (m *monitor) post(msg monMsg) {
	q := 0
	if msg.engine {
		q = 1
	}
	m.queues[q] = append(m.queues[q], msg)
}

// due is the earliest queued message's time (-1: none).
func (m *monitor) due() Time {
	t := Time(-1)
	for _, q := range m.queues {
		if len(q) > 0 && (t < 0 || q[0].at < t) {
			t = q[0].at
		}
	}
	return t
}

// pop removes and returns the earliest queued message due by now, ActiveLoad
// first at equal times.
func (m *monitor) pop(now Time) (monMsg, bool) {
	q := -1
	for i, qq := range m.queues {
		if len(qq) > 0 && qq[0].at <= now && (q < 0 || qq[0].at < m.queues[q][0].at) {
			q = i
		}
	}
	if q < 0 {
		return monMsg{}, false
	}
	msg := m.queues[q][0]
	m.queues[q] = m.queues[q][:copy(m.queues[q], m.queues[q][1:])]
	return msg, true
}

// MonitorObserver is told about the busy monitor's state changes: a worker
// entering or leaving the busy set (with the values that decided it and
// the resulting busy count), and a client reset of the free set that let
// a request through an all-busy fleet. A DecisionObserver that also
// implements it gets both (--trace-decisions).
type MonitorObserver interface {
	Busy(at Time, worker int, busy bool, decodeBlocks, engineBlocks, prefillTokens, busyWorkers int)
	Reset(at Time, busyWorkers int)
}

// activeLoad sends the router's ActiveLoad for worker w (its booked prompt
// blocks and prefill tokens now) to the monitor, over the event plane.
func (c *cluster) activeLoad(w int) {
	rt := c.rtOf(w)
	m := rt.mon
	if m == nil || m.adm.EngineOnly {
		return
	}
	m.post(monMsg{at: c.eng.Now() + m.delay, w: int32(w), a: rt.ActiveBlocks(w), b: rt.prefill[w]})
	c.scheduleMonitor(c.poolOf[w])
}

// engineUsage sends worker w's published kv_used_blocks to the monitor
// when it changed, after the metrics lag.
func (c *cluster) engineUsage(w, used int) {
	m := c.rtOf(w).mon
	if m == nil || m.sentU[w] == used {
		return
	}
	m.sentU[w] = used
	m.post(monMsg{at: c.eng.Now() + m.lag, w: int32(w), engine: true, a: used})
	c.scheduleMonitor(c.poolOf[w])
}

// scheduleMonitor makes sure a delivery event is scheduled for the earliest
// message queued at pool p's monitor.
func (c *cluster) scheduleMonitor(p int32) {
	m := c.pools[p].Router.mon
	if t := m.due(); t >= 0 && (m.next < 0 || t < m.next) {
		m.next = t
		c.eng.Schedule(t, KindMonitor, p)
	}
}

// deliverMonitor applies the messages due now at pool p's monitor and
// schedules the next delivery.
func (c *cluster) deliverMonitor(p int32) {
	m, now := c.pools[p].Router.mon, c.eng.Now()
	if m.next != now {
		return // superseded by an earlier delivery
	}
	m.next = -1
	obs, _ := c.cfg.Decisions.(MonitorObserver)
	for {
		msg, ok := m.pop(now)
		if !ok {
			break
		}
		if m.apply(msg, now) && obs != nil {
			w := int(msg.w)
			obs.Busy(now, w, m.busy[w], m.d[w], m.u[w], m.p[w], m.nBusy)
		}
	}
	c.scheduleMonitor(p)
}

// gateRefuses says the fleet gate refuses a request now, telling the
// trace when a client reset is what lets one through an all-busy fleet.
func (c *cluster) gateRefuses(rt *Router) bool {
	m := rt.mon
	if m == nil || m.adm.Gate != policy.FleetGate {
		return false
	}
	now := c.eng.Now()
	if m.refuses(now) {
		return true
	}
	if reset := m.lastReset(now); m.nBusy == m.nLive && reset > m.wipes {
		m.wipes = reset
		if obs, ok := c.cfg.Decisions.(MonitorObserver); ok {
			obs.Reset(reset, m.nBusy)
		}
	}
	return false
}
