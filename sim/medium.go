package sim

// Medium is the storage tier a KV event names, as the engine's connector
// publishes it: the router decides what it makes of each (a Dynamo
// release parses the medium string into its StorageTier, llm-d's index
// lower-cases it into a backend weight; docs/readings/kv-tiers.md §3-4).
// The engine side tags its events truthfully; the router side interprets.
type Medium uint8

const (
	// MediumGPU is the engine's own prefix cache (vLLM's "GPU" medium, the
	// default of events without one).
	MediumGPU Medium = iota
	// MediumCPU is vLLM's native CPU offloading tier
	// (OffloadingConnector): events tagged "CPU", with no token ids.
	MediumCPU
	// MediumCPUPinned is a host-memory tier that publishes its blocks with
	// token ids under "CPU_PINNED" (Dynamo KVBM's G2).
	MediumCPUPinned
	// MediumDisk is a local-disk tier publishing under "DISK" (KVBM's G3).
	MediumDisk
)

// String is the medium as the engine's event spells it.
func (m Medium) String() string {
	switch m {
	case MediumGPU:
		return "GPU"
	case MediumCPU:
		return "CPU"
	case MediumCPUPinned:
		return "CPU_PINNED"
	case MediumDisk:
		return "DISK"
	}
	return "UNKNOWN"
}

// tierEvent publishes that worker w's tier m stored (or removed) block h:
// it reaches w's router after the KV event lag, like a GPU event. An event
// the router would drop (tierindex.go) is not sent.
func (c *cluster) tierEvent(w int32, m Medium, stored bool, h uint64) {
	if !c.rtOf(int(w)).hears(m, stored) {
		return
	}
	c.kvEvent(kvEvent{worker: w, medium: m, stored: stored, hash: h})
}
