package sim

// Where prompt tokens came from and what the KV tiers below the GPU
// moved: per request (Record.CachedHostTokens, CachedDiskTokens) and over
// a run (Summary.KVTiers). A tier below the GPU reports its counters as a
// TierStats keyed by its Medium, so a new tier (Dynamo KVBM's disk) adds
// an entry, not a field.

// tierTokens is a tier's share of r's cached tokens, once r was admitted
// (a load issued for a request that never ran served nothing).
func (r *reqState) tierTokens(n int32) int {
	if !r.admitted {
		return 0
	}
	return int(n)
}

// The connectors that run a tier below the GPU (TierStats.Connector).
const (
	ConnectorOffloading = "OffloadingConnector" // vLLM's native CPU offloading
	ConnectorKVBM       = "KVBM"                // Dynamo's KV Block Manager
	ConnectorLMCache    = "LMCacheConnectorV1"  // LMCache through vLLM
)

// TierStats are one worker tier's block traffic over a run.
type TierStats struct {
	Medium Medium
	// Connector is what runs the tier: vLLM's OffloadingConnector, Dynamo
	// KVBM or LMCacheConnectorV1 (whose blocks are LMCache's chunks).
	Connector  string
	Blocks     int   // capacity
	BlockBytes int64 // bytes one block copy moves
	Stored     int   // blocks copied into the tier (KVBM's duplicate copies included)
	Loaded     int   // blocks read from the tier towards the GPU
	// StoreOps and LoadOps are the copies (transfers) those took.
	StoreOps, LoadOps int
}

// Tiers lists a worker's tiers below the GPU, in Medium order.
func (s *WorkerStats) Tiers() []TierStats {
	var out []TierStats
	if h := s.Host; h != nil {
		t := TierStats{Medium: MediumCPU, Connector: ConnectorOffloading, Blocks: h.Blocks, BlockBytes: h.BlockBytes,
			Stored: h.StoredBlocks + h.DupBlocks, Loaded: h.LoadedBlocks, StoreOps: h.StoreOps, LoadOps: h.LoadOps}
		if h.KVBM {
			t.Medium, t.Connector = MediumCPUPinned, ConnectorKVBM
		}
		out = append(out, t)
	}
	if d := s.Disk; d != nil {
		out = append(out, TierStats{Medium: MediumDisk, Connector: ConnectorKVBM, Blocks: d.Blocks, BlockBytes: d.BlockBytes,
			Stored: d.StoredBlocks + d.DupBlocks, Loaded: d.LoadedBlocks, StoreOps: d.StoreOps, LoadOps: d.LoadOps})
	}
	if l := s.LMCache; l != nil {
		out = append(out, TierStats{Medium: MediumCPU, Connector: ConnectorLMCache, Blocks: l.Chunks, BlockBytes: l.ChunkBytes,
			Stored: l.StoredChunks, Loaded: l.LoadedChunks})
	}
	return out
}

// KVTiers is a run's prompt tokens by the tier that served them and the
// KV bytes each tier below the GPU moved (nil: the run has no such tier).
// The hit rates are over the completed requests' first admissions: a
// tier's tokens ÷ PromptTokens, and they sum to the completed requests'
// cached ÷ prompt tokens.
type KVTiers struct {
	// PromptTokens is the completed requests' input tokens.
	PromptTokens int64 `json:"prompt_tokens"`
	// GPUHitTokens are their prompt tokens found in the GPU prefix cache;
	// GPUHitRate is GPUHitTokens ÷ PromptTokens.
	GPUHitTokens int64   `json:"gpu_hit_tokens"`
	GPUHitRate   float64 `json:"gpu_hit_rate"`
	// Tiers has one entry per tier below the GPU, in Medium order.
	Tiers []TierSummary `json:"tiers"`
}

// TierSummary is one tier below the GPU over a run, summed over the
// workers that have it.
type TierSummary struct {
	// Medium is the tier as its KV events name it: "CPU" (vLLM's CPU
	// offloading), "CPU_PINNED" (Dynamo KVBM's host tier), "DISK".
	Medium string `json:"medium"`
	// Connector is what runs the tier (TierStats.Connector); an LMCache
	// tier's blocks are its chunks.
	Connector       string `json:"connector"`
	Workers         int    `json:"workers"`
	BlocksPerWorker int    `json:"blocks_per_worker"`
	BlockBytes      int64  `json:"block_bytes"`
	StoredBlocks    int    `json:"stored_blocks"`
	LoadedBlocks    int    `json:"loaded_blocks"`
	// BytesStored and BytesLoaded are the blocks × BlockBytes copied into
	// the tier and out of it.
	BytesStored float64 `json:"bytes_stored"`
	BytesLoaded float64 `json:"bytes_loaded"`
	// HitTokens are the completed requests' prompt tokens loaded from the
	// tier at their first admission; HitRate is HitTokens ÷ PromptTokens.
	HitTokens int64   `json:"hit_tokens"`
	HitRate   float64 `json:"hit_rate"`
}

// kvTiers sums the workers' tiers and the completed requests' tokens by
// tier; nil when no worker has a tier below the GPU.
func kvTiers(res *Result) *KVTiers {
	var byMedium [MediumDisk + 1]*TierSummary
	found := false
	for i := range res.Workers {
		for _, t := range res.Workers[i].Tiers() {
			s := byMedium[t.Medium]
			if s == nil {
				s = &TierSummary{Medium: t.Medium.String(), Connector: t.Connector, BlockBytes: t.BlockBytes}
				byMedium[t.Medium] = s
			}
			s.Workers++
			s.BlocksPerWorker = max(s.BlocksPerWorker, t.Blocks)
			s.StoredBlocks += t.Stored
			s.LoadedBlocks += t.Loaded
			s.BytesStored += float64(t.Stored) * float64(t.BlockBytes)
			s.BytesLoaded += float64(t.Loaded) * float64(t.BlockBytes)
			found = true
		}
	}
	if !found {
		return nil
	}
	k := &KVTiers{}
	var host, disk int64
	for i := range res.Records {
		r := &res.Records[i]
		if r.Status != StatusOK {
			continue
		}
		k.PromptTokens += int64(r.InputTokens)
		k.GPUHitTokens += int64(r.CachedTokens - r.CachedHostTokens - r.CachedDiskTokens)
		host += int64(r.CachedHostTokens)
		disk += int64(r.CachedDiskTokens)
	}
	rate := func(n int64) float64 {
		if k.PromptTokens == 0 {
			return 0
		}
		return float64(n) / float64(k.PromptTokens)
	}
	k.GPUHitRate = rate(k.GPUHitTokens)
	for m, s := range byMedium {
		if s == nil {
			continue
		}
		// A worker has one host tier (vLLM's CPU offloading or KVBM's), so
		// at most one of the host media is present.
		switch Medium(m) {
		case MediumCPU, MediumCPUPinned:
			s.HitTokens = host
		case MediumDisk:
			s.HitTokens = disk
		}
		s.HitRate = rate(s.HitTokens)
		k.Tiers = append(k.Tiers, *s)
	}
	return k
}
