package sim

import (
	"fmt"
	"strings"
)

// How a KVBM worker's KV events reach the router (docs/readings/kvbm.md
// §6). With KVBM on, Dynamo's vLLM worker routes vLLM's own (GPU) events
// and KVBM's host and disk events through the KV event consolidator in
// the worker (components/src/dynamo/vllm/main.py L526-543 @c8d8e7602573),
// whose mode is the worker's environment variable
// DYN_KVBM_KV_EVENTS_CONSOLIDATOR_MODE, "dedup" unless set
// (lib/bindings/kvbm/python/kvbm/utils.py get_consolidator_mode L16-29
// @c8d8e7602573; an unknown value falls back to dedup there, routesim
// refuses it):
//
//   - dedup (the default; the only mode in v0.9, whose CacheStatusTracker
//     is this one: kv_consolidator/tracker.rs L214-300 @45bc1b798cce): a
//     block is tracked per source (vLLM, KVBM; the host and disk tiers are
//     one source, add_source / remove_source on a set). Its store is
//     published when the first source gets it and its removal when the
//     last one drops it, both tagged as the device tier
//     (DedupCacheStatusTracker, kv_consolidator/tracker.rs L300-470,
//     L383-393, L405-465 @c8d8e7602573): the router sees GPU ∪ KVBM as GPU
//     blocks.
//   - passthrough (#8380, Dynamo ≥ 1.2.0; scenario validation refuses it
//     with an older --dynamo-version): every event is forwarded with its
//     own tier (PassthroughCacheStatusTracker, tracker.rs L520-600
//     @c8d8e7602573): vLLM's GPU; KVBM's host as CPU_TIER1, disk as
//     CPU_TIER2, which Dynamo's router reads as its HostPinned and Disk
//     tiers, as it reads CPU_PINNED and DISK: MediumCPUPinned and
//     MediumDisk here.
//
// The router only reads the mediums it receives (tierindex.go): it has no
// consolidator of its own.

// KVBMEvents is the consolidator's mode.
type KVBMEvents uint8

const (
	// KVBMEventsDedup merges the tiers into device-tier events (default).
	KVBMEventsDedup KVBMEvents = iota
	// KVBMEventsPassthrough forwards each tier's events with its medium.
	KVBMEventsPassthrough
)

// String is the mode as DYN_KVBM_KV_EVENTS_CONSOLIDATOR_MODE spells it.
func (m KVBMEvents) String() string {
	if m == KVBMEventsPassthrough {
		return "passthrough"
	}
	return "dedup"
}

// ParseKVBMEvents reads a consolidator mode (empty: dedup).
func ParseKVBMEvents(s string) (KVBMEvents, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "dedup":
		return KVBMEventsDedup, nil
	case "passthrough":
		return KVBMEventsPassthrough, nil
	}
	return 0, fmt.Errorf("%q: want dedup or passthrough", s)
}

// The consolidator's sources of a block (dedup mode).
const (
	srcGPU  uint8 = 1 << iota // vLLM's prefix cache
	srcKVBM                   // KVBM's host or disk tier
)

// kvbmCons is one KVBM worker's consolidator.
type kvbmCons struct {
	mode KVBMEvents
	src  map[uint64]uint8 // dedup: the sources holding each block
	out  func(stored bool, m Medium, h uint64)
}

func newKVBMCons(mode KVBMEvents, out func(bool, Medium, uint64)) *kvbmCons {
	c := &kvbmCons{mode: mode, out: out}
	if mode == KVBMEventsDedup {
		c.src = make(map[uint64]uint8)
	}
	return c
}

// event takes one source's store or removal of h (m: the tier that
// reported it) and publishes what the consolidator publishes.
func (c *kvbmCons) event(src uint8, m Medium, stored bool, h uint64) {
	if c.mode == KVBMEventsPassthrough {
		c.out(stored, m, h)
		return
	}
	had := c.src[h]
	switch {
	case stored && had&src == 0:
		c.src[h] = had | src
		if had == 0 {
			c.out(true, MediumGPU, h)
		}
	case !stored && had&src != 0:
		if had &^= src; had == 0 {
			delete(c.src, h)
			c.out(false, MediumGPU, h)
		} else {
			c.src[h] = had
		}
	}
}

// kvbmSink takes a KVBM worker's GPU events to its consolidator.
type kvbmSink struct {
	kvSink
	cons *kvbmCons
}

func (s kvbmSink) Stored(h uint64)  { s.cons.event(srcGPU, MediumGPU, true, h) }
func (s kvbmSink) Removed(h uint64) { s.cons.event(srcGPU, MediumGPU, false, h) }

// kvbmSinkFor is the sink of KV-aware worker w when it runs KVBM (nil
// otherwise): its GPU events and KVBM's go through one consolidator.
func (c *cluster) kvbmSinkFor(w *worker) KVEventSink {
	if w.host == nil || w.host.kv == nil {
		return nil
	}
	id := int32(w.id)
	w.host.kv.cons = newKVBMCons(w.cfg.KVBM.Events, func(stored bool, m Medium, h uint64) {
		c.tierEvent(id, m, stored, h)
	})
	return kvbmSink{kvSink{c, id}, w.host.kv.cons}
}

// kvbmPublish sends the tier events w's KVBM reported since the last
// call to its consolidator (none if the router reads no KV events).
func (c *cluster) kvbmPublish(w *worker) {
	k := w.host.kv
	if k.cons != nil {
		for _, e := range k.events {
			k.cons.event(srcKVBM, e.medium, e.stored, e.hash)
		}
	}
	k.events = k.events[:0]
}
