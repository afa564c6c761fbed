package sim

import "slices"

// KVBM's KV event consolidator in its dedup mode, as the router sees its
// output (lib/llm/src/block_manager/kv_consolidator/tracker.rs
// DedupCacheStatusTracker L300-470 @c8d8e7602573; the only mode before
// v1.2, the default since: DYN_KVBM_KV_EVENTS_CONSOLIDATOR_MODE,
// lib/bindings/kvbm/python/kvbm/utils.py L16-29). It sits between a
// worker's engine and the router and merges the engine's GPU events
// (source vLLM) with KVBM's host and disk events (source KVBM) into one
// stream tagged Device: a block is published stored when the first source
// holds it and removed when no source does. KVBM is one source for both of
// its tiers: any KVBM store marks the block held by KVBM, any KVBM remove
// unmarks it (add_source / remove_source on a set of sources).
//
// The router's device index (stored) is then the union; dedup keeps the
// two sources apart. It starts at a worker's first KVBM event: until then
// every event was a GPU one and the device index is the GPU's, so it is
// copied once as the vLLM source.
type dedup struct {
	gpu  *holders // blocks the engine's GPU events hold (source vLLM)
	kvbm *holders // blocks KVBM holds in any of its tiers (source KVBM)
}

// applyDedup applies a GPU or KVBM event through the consolidator.
func (r *router) applyDedup(e kvEvent) {
	if r.dd == nil {
		r.dd = &dedup{gpu: r.stored.clone(), kvbm: newHolders()}
	}
	w := int(e.worker)
	src := r.dd.gpu
	if e.medium != MediumGPU {
		src = r.dd.kvbm
	}
	if e.stored {
		src.add(w, e.hash)
	} else {
		src.remove(w, e.hash)
	}
	held := r.dd.gpu.has(w, e.hash) || r.dd.kvbm.has(w, e.hash)
	if held != r.stored.has(w, e.hash) {
		r.applyDevice(w, held, e.hash)
	}
}

// has reports whether w holds block b.
func (h *holders) has(w int, b uint64) bool { return slices.Contains(h.of(b), int32(w)) }

// clone is a deep copy of h.
func (h *holders) clone() *holders {
	c := &holders{lists: h.lists, free: slices.Clone(h.free), posts: make([][]int32, len(h.posts))}
	c.lists.slots = slices.Clone(h.lists.slots)
	for i, p := range h.posts {
		c.posts[i] = slices.Clone(p)
	}
	return c
}
