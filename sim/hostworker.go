package sim

import (
	"fmt"
	"slices"
)

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
		for need > w.kv.Free() {
			if len(w.running) > 0 || !w.unstall(ri) {
				return false, true
			}
		}
		r.table, _ = w.kv.Grow(r.table, need)
		w.enter(ri, r, n, budget)
		return true, false
	}
	if len(w.running) == 0 && w.promoteLoaded(ri) {
		return true, false
	}
	limit := (total - 1) / B // at least one token is computed, as for GPU hits
	h.touch(r.blocks[:min(len(r.blocks), total/B)])
	var hits, hitsFree, hh int
	for {
		hits, hitsFree = w.kv.Lookup(r.blocks, limit)
		hh = h.lookup(r.blocks, hits, limit, h.now)
		need := hh // blocks for the CPU hits (vLLM allocates for the external tokens only)
		if hh == 0 {
			need = w.blocksFor(hits*B+min(total-hits*B, *budget)) - hits // admit's
		}
		if need+hitsFree <= w.kv.Free() || len(w.running) > 0 || !w.unstall(ri) {
			break
		}
	}
	h.stats.LookedBlocks += max(limit-hits, 0)
	if hh == 0 {
		return false, false
	}
	if hh+hitsFree > w.kv.Free() {
		return false, true // vLLM's allocation fails: the queue waits
	}
	if r.table == nil {
		r.table = make([]int32, 0, w.blocksFor(int(r.isl)+int(r.osl)))
	}
	r.table = w.kv.Acquire(r.table[:0], r.blocks[:hits])
	r.table, _ = w.kv.Grow(r.table, hh)
	r.computed, r.committed = (hits+hh)*B, hits
	done := h.load(r.blocks[hits:hits+hh], h.now)
	if !r.admitted { // counted once it is admitted with them (enter)
		r.cachedHost, r.cachedDisk = int32(hh*B), 0
		if h.kv != nil {
			r.cachedHost, r.cachedDisk = int32(h.kv.lastHost*B), int32(h.kv.lastDisk*B)
		}
	}
	h.loads = append(h.loads, hostLoad{req: ri, done: done, from: hits, n: hh})
	h.kicks = append(h.kicks, done)
	w.popWaiting()
	return true, false
}

// unstall frees the GPU blocks of the newest request other than head that
// holds blocks while waiting (a load issued before this schedule and still
// in flight, else one loaded and queued), sending it back to the queue to
// look up its prefix again. It runs only when nothing runs: requests that
// hold blocks while waiting would otherwise leave head no room, and
// nothing would ever free one (vLLM's scheduler would stall there;
// HostStats.Unstalls counts the times the sim did not). It reports false
// if no such request exists.
func (w *worker) unstall(head int32) bool {
	h := w.host
	if k := h.earlier; k > 0 { // not a load this schedule issued: that was progress
		l := h.loads[k-1]
		if r := w.reqs.at(l.req); w.blocksFor(r.computed+1)-len(r.table) <= w.kv.Free() {
			// Once loaded it runs (its next block fits): wait for it.
			// Cancelling it for a head that loads too could have the two
			// cancel each other's loads forever (TestKVBMInvariantsOnRandomRuns
			// found such a run).
			return false
		}
		h.loads = slices.Delete(h.loads, k-1, k)
		h.earlier--
		r := w.reqs.at(l.req)
		h.unpin(r.blocks[l.from : l.from+l.n])
		w.dropBlocks(r)
		w.waiting = slices.Insert(w.waiting, w.wHead+1, l.req)
		h.stats.Unstalls++
		return true
	}
	for i := len(w.waiting) - 1; i > w.wHead; i-- {
		if ri := w.waiting[i]; ri != head && len(w.reqs.at(ri).table) > 0 {
			w.dropBlocks(w.reqs.at(ri))
			h.stats.Unstalls++
			return true
		}
	}
	return false
}

// promoteLoaded moves a waiting request whose blocks came back from the
// tier, and whose next block fits, ahead of head, when nothing runs. Its
// blocks are held and no one else can use them: were head admitted
// first, it could be preempted by the blocks it lacks, readmitted on its
// GPU hits and preempted again, forever (TestKVBMInvariantsOnRandomRuns
// found such a run; vLLM, which keeps the queue's order, would cycle so
// too). It reports whether it moved one.
func (w *worker) promoteLoaded(head int32) bool {
	for i := w.wHead + 1; i < len(w.waiting); i++ {
		ri := w.waiting[i]
		r := w.reqs.at(ri)
		if ri != head && len(r.table) > 0 && w.blocksFor(r.computed+1)-len(r.table) <= w.kv.Free() {
			w.waiting = slices.Delete(w.waiting, i, i+1)
			w.prependWaiting(ri)
			w.host.stats.Unstalls++
			return true
		}
	}
	return false
}

// dropBlocks frees a waiting request's GPU blocks: it will compute or
// load its prefix again.
func (w *worker) dropBlocks(r *reqState) {
	w.kv.Release(r.table)
	r.table = r.table[:0]
	r.computed, r.committed = 0, 0
	if !r.admitted {
		r.cachedHost, r.cachedDisk = 0, 0
	}
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
	if w.host.kv != nil {
		w.host.kv.store(w.host, r.blocks[from:full], w.endAt)
		return
	}
	w.host.store(r.blocks[:full], from, w.endAt)
}

// hostBefore runs before w schedules a step: the tier learns the time and
// the requests whose loads ended rejoin the queue.
func (c *cluster) hostBefore(w *worker) {
	w.host.now = c.eng.Now()
	if w.host.kv != nil {
		c.kvbmPublish(w) // the stores of the step that just ended
	}
	w.releaseLoads(c.eng.Now())
	w.host.earlier = len(w.host.loads)
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
	// A step that preempted admits no one (vLLM V1); with requests holding
	// GPU blocks while waiting, it may have preempted every running one,
	// leaving nothing to end and wake the worker: look again now (admit
	// then frees a waiting holder if the head needs its blocks: unstall).
	if len(w.sched) == 0 && len(w.running) == 0 && w.numWaiting() > 0 && len(h.loads) == 0 && !w.kicked {
		w.kicked = true
		c.eng.Schedule(c.eng.Now(), KindKick, int32(w.id))
	}
	if c.cfg.CheckInvariants {
		if err := h.check(&c.reqs); err != nil {
			panic(fmt.Sprintf("sim: worker %d: %v", w.id, err))
		}
	}
}
