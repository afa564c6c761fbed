package sim

import (
	"math"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

// KVBM's settings and how the flags make them (kvbm.go has the rules).

// Disk bandwidth of a datacenter PCIe Gen4 NVMe drive (Micron 7450:
// ≈6.8 GB/s sequential read, up to 5.6 GB/s write on its larger models;
// ServeTheHome, "Micron 7450 SSDs Launched with 176-Layer NAND",
// servethehome.com/?p=59563).
const (
	// DefaultDiskReadBytesPerSec is a KVBM disk tier's read bandwidth.
	DefaultDiskReadBytesPerSec = 6.8e9
	// DefaultDiskWriteBytesPerSec is a KVBM disk tier's write bandwidth.
	DefaultDiskWriteBytesPerSec = 5.6e9
	// MaxKVBMCacheGB bounds --kvbm-cpu-cache-gb and --kvbm-disk-cache-gb:
	// 1 PB, far from overflowing the byte count.
	MaxKVBMCacheGB = 1 << 20
	// MaxDiskGBs bounds the disk bandwidth flags: 1 PB/s.
	MaxDiskGBs = 1 << 20
)

// The disk offload filter's constants (lib/bindings/kvbm/src/block_manager.rs
// L69-76 @c8d8e7602573: min frequency 2, decay every 600 s, 10⁶ entries).
const (
	kvbmMinOffloadFrequency = 2
	kvbmDecayEvery          = Time(600 * 1e9)
	kvbmMaxFreqEntries      = 1_000_000
)

// KVBMConfig makes a worker's host tier Dynamo's KVBM (zero: none). The
// host capacity is the worker's HostTierConfig.
type KVBMConfig struct {
	// On selects KVBM's rules for the host tier.
	On bool `json:",omitempty"`
	// DiskBlocks is the disk tier's capacity (0: no disk tier).
	DiskBlocks int `json:",omitempty"`
	// DiskReadNs and DiskWriteNs are the times to read and write one
	// block (the KV of all the worker's GPUs) on the disk.
	DiskReadNs  float64 `json:",omitempty"`
	DiskWriteNs float64 `json:",omitempty"`
	// Events is the KV event consolidator's mode (kvbmevents.go).
	Events KVBMEvents `json:",omitempty"`
}

func (k KVBMConfig) validate() []error {
	if !k.On {
		if k != (KVBMConfig{}) {
			return []error{inputerr.Fieldf("kvbm_disk_cache_gb", "a KVBM disk tier needs KVBM's host tier (kvbm_cpu_cache_gb)")}
		}
		return nil
	}
	if k.Events > KVBMEventsPassthrough {
		return []error{inputerr.Fieldf("kvbm_kv_events", "mode %d: want dedup or passthrough", k.Events)}
	}
	if k.DiskBlocks < 0 || (k.DiskBlocks > 0 && !(k.DiskReadNs > 0 && k.DiskWriteNs > 0 && !math.IsInf(k.DiskReadNs+k.DiskWriteNs, 0))) {
		return []error{inputerr.Fieldf("kvbm_disk_cache_gb", "a disk tier of %d blocks read in %g ns and written in %g ns each: want ≥ 0 blocks and finite times > 0", k.DiskBlocks, k.DiskReadNs, k.DiskWriteNs)}
	}
	return nil
}

// kvbmConfig is the host tier and KVBM settings --kvbm-cpu-cache-gb and
// --kvbm-disk-cache-gb give a worker of dep. KVBM sizes a tier as
// int(GB·10⁹ / bytes per block), the bytes summed over the worker's
// GPUs (lib/llm/src/block_manager/distributed/leader.rs L27-35, L162-165
// @c8d8e7602573): decimal GB, where vLLM's flag is GiB.
func kvbmConfig(dep model.Deployment, f EngineFlags) (HostTierConfig, KVBMConfig, error) {
	cpu, disk := f.KVBMCPUCacheGB, f.KVBMDiskCacheGB
	for _, c := range []struct {
		field string
		v     float64
	}{{"kvbm_cpu_cache_gb", cpu}, {"kvbm_disk_cache_gb", disk}} {
		if c.v != 0 && !(c.v > 0 && c.v <= MaxKVBMCacheGB) {
			return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf(c.field, "%g must be in (0, %d] GB (0 = no tier)", c.v, MaxKVBMCacheGB)
		}
	}
	rd, wr := DefaultDiskReadBytesPerSec, DefaultDiskWriteBytesPerSec
	for _, c := range []struct {
		field string
		v     float64
		bps   *float64
	}{{"kvbm_disk_read_gb_s", f.KVBMDiskReadGBs, &rd}, {"kvbm_disk_write_gb_s", f.KVBMDiskWriteGBs, &wr}} {
		switch {
		case c.v == 0:
		case !(c.v > 0 && c.v <= MaxDiskGBs):
			return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf(c.field, "%g must be in (0, %d] GB/s (0 = a PCIe Gen4 NVMe drive's)", c.v, MaxDiskGBs)
		case disk == 0:
			return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf(c.field, "is the KVBM disk's bandwidth: it needs --kvbm-disk-cache-gb")
		default:
			*c.bps = c.v * 1e9
		}
	}
	if f.KVBMEvents != KVBMEventsDedup && cpu == 0 {
		return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_kv_events", "is KVBM's KV event consolidator: it needs --kvbm-cpu-cache-gb")
	}
	switch {
	case cpu == 0 && disk == 0:
		return HostTierConfig{}, KVBMConfig{}, nil
	case f.KVOffloadingSizeGiB != 0:
		return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_cpu_cache_gb", "KVBM and --kv-offloading-size are both vLLM KV connectors and vLLM takes one: set --kvbm-cpu-cache-gb/--kvbm-disk-cache-gb or --kv-offloading-size, not both")
	case cpu == 0:
		return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_disk_cache_gb", "a disk tier without --kvbm-cpu-cache-gb (KVBM then writes GPU blocks straight to disk) is not simulated: set --kvbm-cpu-cache-gb too")
	case f.Engine != VLLM:
		return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_cpu_cache_gb", "is simulated through KVBM's vLLM connector: it needs `engine` vllm")
	case f.NoPrefixCaching:
		return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_cpu_cache_gb", "needs prefix caching (KVBM finds blocks by their prefix hashes)")
	case dep.GPU.HostLinkBytesPerSec <= 0:
		return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_cpu_cache_gb", "GPU %s has no host-link bandwidth (host_link_bytes_per_s; a GPU file's pcie_gb_s)", dep.GPU.Name)
	}
	tp := int64(max(dep.TP, 1))
	perGPU := dep.KVBytesPerTokenPerGPU() * int64(f.BlockSize)
	h := HostTierConfig{BlockBytes: perGPU * tp, BlockNs: float64(perGPU) / dep.GPU.HostLinkBytesPerSec * 1e9}
	h.Blocks = int(cpu * 1e9 / float64(h.BlockBytes))
	if h.Blocks < 1 {
		return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_cpu_cache_gb", "%g GB holds no block of %d bytes", cpu, h.BlockBytes)
	}
	k := KVBMConfig{On: true, Events: f.KVBMEvents}
	if disk > 0 {
		k.DiskBlocks = int(disk * 1e9 / float64(h.BlockBytes))
		if k.DiskBlocks < 1 {
			return HostTierConfig{}, KVBMConfig{}, inputerr.Fieldf("kvbm_disk_cache_gb", "%g GB holds no block of %d bytes", disk, h.BlockBytes)
		}
		k.DiskReadNs = float64(h.BlockBytes) / rd * 1e9
		k.DiskWriteNs = float64(h.BlockBytes) / wr * 1e9
	}
	return h, k, nil
}
