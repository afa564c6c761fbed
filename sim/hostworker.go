package sim

import "fmt"

// How a vLLM worker uses its CPU tier (hosttier.go), and the cluster's
// part: the hooks the worker's scheduler and the cluster call, only when
// the worker has a tier (worker.host != nil).

// hostAdmit handles waiting request ri at the head of w's queue when w has
// a CPU tier. A request whose blocks came back from the tier is admitted
// with them (or waits for GPU blocks, stop); a request with CPU hits past
// its GPU prefix takes GPU blocks for them, starts their load and leaves
// the queue (handled); any other request is left to admit (neither).
func (w *worker) hostAdmit(ri int32, r *reqState, budget *int) (handled, stop bool) {
	h := w.host
	B := w.cfg.BlockSize
	total := r.numTokens()
	if len(r.table) > 0 { // loaded: its blocks are held and computed
		n := min(total-r.computed, *budget)
		need := w.blocksFor(r.computed+n) - len(r.table)
		if need > w.kv.Free() {
			return false, true
		}
		r.table, _ = w.kv.Grow(r.table, need)
		w.enter(ri, r, n, budget)
		return true, false
	}
	limit := (total - 1) / B // at least one token is computed, as for GPU hits
	hits, hitsFree := w.kv.Lookup(r.blocks, limit)
	h.touch(r.blocks[:min(len(r.blocks), total/B)])
	hh := h.lookup(r.blocks, hits, limit, h.now)
	if hh == 0 {
		h.stats.LookedBlocks += max(limit-hits, 0)
		return false, false
	}
	if hh+hitsFree > w.kv.Free() {
		return false, true // vLLM's allocation fails: the queue waits
	}
	h.stats.LookedBlocks += limit - hits
	if r.table == nil {
		r.table = make([]int32, 0, w.blocksFor(int(r.isl)+int(r.osl)))
	}
	r.table = w.kv.Acquire(r.table[:0], r.blocks[:hits])
	r.table, _ = w.kv.Grow(r.table, hh)
	r.computed, r.committed = (hits+hh)*B, hits
	done := h.load(r.blocks[hits:hits+hh], h.now)
	h.loads = append(h.loads, hostLoad{req: ri, done: done, from: hits, n: hh})
	h.kicks = append(h.kicks, done)
	w.popWaiting()
	return true, false
}

// enter moves waiting request ri, its blocks in hand, into the step with
// n tokens (admit's bookkeeping for a request loaded from the CPU tier).
func (w *worker) enter(ri int32, r *reqState, n int, budget *int) {
	w.stats.PromptTokens += r.numTokens()
	w.stats.CachedTokens += r.computed
	if !r.admitted {
		r.admitted, r.cached = true, r.computed
	}
	w.popWaiting()
	w.running = append(w.running, ri)
	w.sched = append(w.sched, schedEntry{ri, n})
	*budget -= n
}

// releaseLoads returns the requests whose loads ended by now to the front
// of the queue, in the order they were issued: their loaded blocks are
// cached on the GPU and unpinned in the tier (vLLM's
// _update_waiting_for_remote_kv and complete_load).
func (w *worker) releaseLoads(now Time) {
	h := w.host
	k := 0
	for k < len(h.loads) && h.loads[k].done <= now {
		k++
	}
	for i := k - 1; i >= 0; i-- {
		l := h.loads[i]
		r := w.reqs.at(l.req)
		h.unpin(r.blocks[l.from : l.from+l.n])
		for b := l.from; b < l.from+l.n; b++ {
			w.kv.Commit(r.table[b], r.blocks[b])
		}
		r.committed = l.from + l.n
		w.prependWaiting(l.req)
	}
	h.loads = append(h.loads[:0], h.loads[k:]...)
}

// forgetLoad drops request ri's load, if it has one: its client gave up
// (abort has freed its GPU blocks).
func (w *worker) forgetLoad(ri int32) {
	h := w.host
	for i, l := range h.loads {
		if l.req == ri {
			h.unpin(w.reqs.at(ri).blocks[l.from : l.from+l.n])
			h.loads = append(h.loads[:i], h.loads[i+1:]...)
			return
		}
	}
}

// storeFull writes r's blocks up to full to the CPU tier, those from from
// on being new: called as commitFull makes them findable on the GPU, at
// the end of the step that filled them.
func (w *worker) storeFull(r *reqState, from, full int) {
	w.host.store(r.blocks[:full], from, w.endAt)
}

// hostBefore runs before w schedules a step: the tier learns the time and
// the requests whose loads ended rejoin the queue.
func (c *cluster) hostBefore(w *worker) {
	w.host.now = c.eng.Now()
	w.releaseLoads(c.eng.Now())
}

// hostAfter runs after w scheduled a step: an idle worker must wake when
// a load it started ends (vLLM's engine keeps stepping while a request
// waits for its KV), so each load's end is a kick.
func (c *cluster) hostAfter(w *worker) {
	h := w.host
	for _, t := range h.kicks {
		c.eng.Schedule(t, KindKick, int32(w.id))
	}
	h.kicks = h.kicks[:0]
	if c.cfg.CheckInvariants {
		if err := h.check(&c.reqs); err != nil {
			panic(fmt.Sprintf("sim: worker %d: %v", w.id, err))
		}
	}
}
