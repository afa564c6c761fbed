package policy

// What a router makes of its workers' KV events of the tiers below the
// GPU (docs/readings/tier-routing.md). The engine side tags every event
// with the tier it speaks for (vLLM's native CPU offloading: "CPU", no
// token ids; Dynamo KVBM: "CPU_PINNED" and "DISK", with token ids); each
// router family reads them its own way, and a policy that reads more than
// the GPU tier says how by implementing TierReader.

// TierReading is how a router reads the events of the tiers below the GPU.
// The zero value is a GPU-only router: every other event is dropped.
type TierReading struct {
	// Lower keeps a host-tier index of CPU_PINNED events and a disk-tier
	// index of DISK events, and matches a request on through them from
	// each worker's last device-matched block, host first, then disk
	// (Dynamo ≥ 1.2: lib/kv-router/src/indexer/lower_tier_indexers.rs
	// query_lower_tiers @c8d8e7602573). The router reads the mediums it
	// receives: whether KVBM's host and disk blocks reach it as CPU_PINNED
	// and DISK or merged into Device events is the worker's KV event
	// consolidator's choice (sim.KVBMEvents, --kvbm-kv-events).
	Lower bool
	// MediumIgnored: the router has one index and reads every event into
	// it, whatever its medium (Dynamo v0.9: convert_event reads no medium,
	// lib/llm/src/kv_router/publisher.rs L562-620 @45bc1b798cce). Events
	// without token ids are still dropped (NativeCPU says what their
	// removes do).
	MediumIgnored bool
	// NativeCPU is what vLLM's native CPU events do.
	NativeCPU NativeCPURule
	// HostWeight and DiskWeight are the credit of a host and a disk block
	// in the prefill tokens the router books (Dynamo's cached_tokens =
	// round((device + host_cache_hit_weight·host +
	// disk_cache_hit_weight·disk) · block_size), lib/llm/src/kv_router.rs
	// L130-175 @c8d8e7602573, booked by prefill_load_hint_for L728-745).
	HostWeight, DiskWeight float64
}

// NativeCPURule is what a router does with vLLM's native CPU-offloading
// events (medium "CPU", BlockStored without token ids).
type NativeCPURule uint8

const (
	// CPUDropped: the stores are not indexed (no token ids to index them
	// by) and the removes name nothing the router indexes: the router's
	// view is the GPU's. llm-d's index rejects an add without request keys
	// (pkg/kvcache/kvblock/in_memory.go L149-155 @a378f5b) and evicts only
	// the pod entry of the event's tier (kvevents/pool.go L307-330);
	// Dynamo ≥ 1.3 parses "CPU" as HostPinned and drops the placeholder
	// store (#10368, d8a94ef28, zmq_wire/tests.rs
	// cpu_event_with_placeholder_payload_is_dropped_safely).
	CPUDropped NativeCPURule = iota
	// CPURemovesDevice: Dynamo v1.2 parses "CPU" as the Device tier
	// (StorageTier::from_kv_medium_or_default, lib/kv-router/src/protocols.rs
	// L230-244 @c8d8e7602573), drops the store for lack of token ids
	// (zmq_wire/convert.rs L163-201) and applies the remove to the device
	// index (convert.rs L100-123): a CPU-tier eviction erases the router's
	// GPU entry of that block, whatever the GPU still holds.
	CPURemovesDevice
	// CPURemovesHost: Dynamo ≥ 1.3 parses "CPU" as HostPinned
	// (protocols.rs L771-779 @e147ceeac056, #10368): the placeholder store
	// is dropped and the remove applies to the host-tier index.
	CPURemovesHost
)

// TierReader is a policy whose router reads tiers below the GPU: the
// router stage asks once, before the run, how (a capability the router
// type-asserts, as Admitter).
type TierReader interface {
	TierReading() TierReading
}

// TierHits is one worker's match of a request in its lower tiers, as the
// router's per-tier indexes see it: Host blocks matched on in the host
// tier from the worker's last device-matched block, then Disk blocks in
// the disk tier from there.
type TierHits struct {
	Host, Disk int32
}

// TierView is a View whose router keeps lower-tier indexes
// (TierReading.Lower).
type TierView interface {
	View
	// TierHits returns every live worker's lower-tier hits for blocks,
	// indexed by id as Loads, or nil when the router keeps no lower-tier
	// index. dst is reused when long enough.
	TierHits(blocks []uint64, dst []TierHits) []TierHits
}

// tierHits is v's TierHits for blocks, nil when v keeps no lower-tier
// index.
func tierHits(v View, blocks []uint64, dst []TierHits) []TierHits {
	if tv, ok := v.(TierView); ok {
		return tv.TierHits(blocks, dst)
	}
	return nil
}
