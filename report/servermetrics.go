package report

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/routesim/routesim/sim"
)

// The KV tiers' traffic as AIPerf reports a server's Prometheus metrics:
// not in profile_export_aiperf.json, whose telemetry_data holds only the
// GPUs' DCGM readings, but in server_metrics_export.json, its aggregated
// server-metrics export (ai-dynamo/aiperf
// docs/server-metrics/server-metrics-json-schema.md @ 0c1428c9: top level
// schema_version, aiperf_version, benchmark_id, summary, metrics,
// input_config; a metric has type, description, unit and one series per
// endpoint and label set; a counter's stats are total and rate, a
// histogram's count, sum, avg, count_rate and sum_rate). Each worker is
// one endpoint, as vLLM serves /metrics on its own port.
//
// The metric names are the ones the simulated servers publish:
//   - vLLM's CPU offloading (OffloadingConnector, the release the CPU tier
//     models; docs/readings/kv-tiers.md G-mid, index id 18384354097,
//     OffloadPromMetrics): histograms vllm:kv_offload_size_gpu_to_cpu and
//     vllm:kv_offload_size_cpu_to_gpu (bytes per transfer) and counters
//     vllm:kv_offload_num_gpu_to_cpu and vllm:kv_offload_num_cpu_to_gpu
//     (transfers). A transfer's size there is its blocks × the bytes of a
//     block over every GPU of the worker (calculate_bytes_per_block
//     multiplies by the world size), which is TierStats.BlockBytes.
//   - Dynamo KVBM, its host (CPU_PINNED) and disk (DISK) tiers, by the
//     counters AIPerf's server-metrics reference lists for it (ai-dynamo/aiperf
//     docs/server-metrics/server-metrics-reference.md @ 13992dbd, "KVBM"):
//     kvbm_offload_blocks_d2h and kvbm_onboard_blocks_h2d (device ↔ host),
//     kvbm_offload_blocks_h2d (host → disk) and kvbm_onboard_blocks_d2d
//     (disk → device).
//
// Left out: histogram buckets and percentile estimates (the sim keeps no
// per-transfer sizes; AIPerf allows buckets to be null), the counters'
// rate_avg … rate_std (they need scrapes over time) and timeslices.

// ServerMetricsFile is the file a run directory holds when its workers
// have a KV tier below the GPU.
const ServerMetricsFile = "server_metrics_export.json"

// ServerMetricsSchemaVersion is the schema of AIPerf's server-metrics
// JSON export the file follows.
const ServerMetricsSchemaVersion = "1.0"

type smStats struct {
	// A counter's.
	Total *float64 `json:"total,omitempty"`
	Rate  *float64 `json:"rate,omitempty"`
	// A histogram's.
	Count     *int64   `json:"count,omitempty"`
	Sum       *float64 `json:"sum,omitempty"`
	Avg       *float64 `json:"avg,omitempty"`
	CountRate *float64 `json:"count_rate,omitempty"`
	SumRate   *float64 `json:"sum_rate,omitempty"`
}

type smSeries struct {
	EndpointURL string            `json:"endpoint_url"`
	Labels      map[string]string `json:"labels"`
	Stats       smStats           `json:"stats"`
}

type smMetric struct {
	Type        string     `json:"type"`
	Description string     `json:"description"`
	Unit        string     `json:"unit,omitempty"`
	Series      []smSeries `json:"series"`
}

type smSummary struct {
	EndpointsConfigured []string `json:"endpoints_configured"`
	EndpointsSuccessful []string `json:"endpoints_successful"`
	StartTime           string   `json:"start_time"`
	EndTime             string   `json:"end_time"`
}

type smExport struct {
	SchemaVersion string               `json:"schema_version"`
	Generator     string               `json:"generator"`
	BenchmarkID   string               `json:"benchmark_id"`
	Summary       smSummary            `json:"summary"`
	Metrics       map[string]*smMetric `json:"metrics"`
}

// tierMetric is one published metric of a tier: a counter of blocks or
// transfers, or a histogram of bytes per transfer.
type tierMetric struct {
	name, typ, unit, desc string
	// value gives a counter's total, or a histogram's count and sum.
	value func(t sim.TierStats) (count int64, sum float64)
}

func storedBlocks(t sim.TierStats) (int64, float64) { return int64(t.Stored), float64(t.Stored) }
func loadedBlocks(t sim.TierStats) (int64, float64) { return int64(t.Loaded), float64(t.Loaded) }

// tierMetrics are the metrics each medium's server publishes.
var tierMetrics = map[sim.Medium][]tierMetric{
	sim.MediumCPU: {
		{"vllm:kv_offload_size_gpu_to_cpu", "histogram", "bytes", "bytes per GPU → CPU transfer (vLLM's CPU offloading)",
			func(t sim.TierStats) (int64, float64) {
				return int64(t.StoreOps), float64(t.Stored) * float64(t.BlockBytes)
			}},
		{"vllm:kv_offload_size_cpu_to_gpu", "histogram", "bytes", "bytes per CPU → GPU transfer (vLLM's CPU offloading)",
			func(t sim.TierStats) (int64, float64) {
				return int64(t.LoadOps), float64(t.Loaded) * float64(t.BlockBytes)
			}},
		{"vllm:kv_offload_num_gpu_to_cpu", "counter", "", "GPU → CPU transfers",
			func(t sim.TierStats) (int64, float64) { return int64(t.StoreOps), float64(t.StoreOps) }},
		{"vllm:kv_offload_num_cpu_to_gpu", "counter", "", "CPU → GPU transfers",
			func(t sim.TierStats) (int64, float64) { return int64(t.LoadOps), float64(t.LoadOps) }},
	},
	sim.MediumCPUPinned: {
		{"kvbm_offload_blocks_d2h", "counter", "blocks", "blocks offloaded from device to host memory (KVBM)", storedBlocks},
		{"kvbm_onboard_blocks_h2d", "counter", "blocks", "blocks onboarded from host memory to device (KVBM)", loadedBlocks},
	},
	sim.MediumDisk: {
		{"kvbm_offload_blocks_h2d", "counter", "blocks", "blocks offloaded from host memory to disk (KVBM)", storedBlocks},
		{"kvbm_onboard_blocks_d2d", "counter", "blocks", "blocks onboarded from disk to device (KVBM)", loadedBlocks},
	},
}

// publishesServerMetrics reports whether a run's tiers have metrics in
// server_metrics_export.json: any tier but LMCache's.
func publishesServerMetrics(k *sim.KVTiers) bool {
	if k == nil {
		return false
	}
	for _, t := range k.Tiers {
		if t.Connector != sim.ConnectorLMCache {
			return true
		}
	}
	return false
}

// WriteServerMetrics writes the KV tiers' traffic of res's workers in the
// shape of AIPerf's server_metrics_export.json; the run lasted durS
// seconds (the summary's duration_s) and is stamped as run.
func WriteServerMetrics(w io.Writer, res *sim.Result, durS float64, run AIPerfRun) error {
	workers := make([][]sim.TierStats, len(res.Workers))
	for i := range res.Workers {
		workers[i] = res.Workers[i].Tiers()
	}
	var end sim.Time
	for i := range res.Records {
		end = max(end, res.Records[i].End)
	}
	settings, err := json.Marshal(run.Settings)
	if err != nil {
		return err
	}
	return writeServerMetrics(w, workers, durS, end, run, benchmarkID(run, settings))
}

func writeServerMetrics(w io.Writer, workers [][]sim.TierStats, durS float64, end sim.Time, run AIPerfRun, id string) error {
	rate := func(v float64) *float64 {
		r := 0.0
		if durS > 0 {
			r = v / durS
		}
		return &r
	}
	x := smExport{SchemaVersion: ServerMetricsSchemaVersion, Generator: run.Generator, BenchmarkID: id,
		Metrics: map[string]*smMetric{}}
	for wk, tiers := range workers {
		url := "http://worker-" + strconv.Itoa(wk) + ":8000/metrics"
		x.Summary.EndpointsConfigured = append(x.Summary.EndpointsConfigured, url)
		labels := map[string]string{"engine": "0", "model_name": run.Model}
		for _, t := range tiers {
			if t.Connector == sim.ConnectorLMCache {
				continue // LMCache's own metrics (lmcache:*) are not modelled
			}
			for _, m := range tierMetrics[t.Medium] {
				count, sum := m.value(t)
				var st smStats
				if m.typ == "counter" {
					st.Total, st.Rate = &sum, rate(sum)
				} else {
					st.Count = &count
					if count > 0 {
						avg := sum / float64(count)
						st.Sum, st.Avg, st.CountRate, st.SumRate = &sum, &avg, rate(float64(count)), rate(sum)
					}
				}
				mm := x.Metrics[m.name]
				if mm == nil {
					mm = &smMetric{Type: m.typ, Description: m.desc, Unit: m.unit}
					x.Metrics[m.name] = mm
				}
				mm.Series = append(mm.Series, smSeries{EndpointURL: url, Labels: labels, Stats: st})
			}
		}
	}
	x.Summary.EndpointsSuccessful = x.Summary.EndpointsConfigured
	x.Summary.StartTime = run.Start.UTC().Format(AIPerfTimeLayout)
	x.Summary.EndTime = run.Start.Add(time.Duration(end)).UTC().Format(AIPerfTimeLayout)
	return WriteJSON(w, x)
}
