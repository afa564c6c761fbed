package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/routesim/routesim/sim"
)

// TestServerMetricsByMedium: each tier publishes its server's metrics in
// AIPerf's server-metrics shape, one series per worker: vLLM's CPU tier
// its transfer-size histograms (count = transfers, sum = blocks × block
// bytes) and transfer counters, KVBM's tiers their block counters; rates
// are per second of the run.
func TestServerMetricsByMedium(t *testing.T) {
	workers := [][]sim.TierStats{
		{{Medium: sim.MediumCPU, BlockBytes: 1000, Stored: 30, Loaded: 12, StoreOps: 10, LoadOps: 3}},
		{{Medium: sim.MediumCPU, BlockBytes: 1000}}, // no traffic
		{{Medium: sim.MediumCPUPinned, BlockBytes: 1000, Stored: 8, Loaded: 5}, {Medium: sim.MediumDisk, BlockBytes: 1000, Stored: 4, Loaded: 2}},
	}
	var buf bytes.Buffer
	run := AIPerfRun{Generator: "routesim test", Model: "m", Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := writeServerMetrics(&buf, workers, 2, 3*sim.Second, run, "ID"); err != nil {
		t.Fatal(err)
	}
	var x struct {
		SchemaVersion string `json:"schema_version"`
		Summary       struct {
			Configured []string `json:"endpoints_configured"`
			End        string   `json:"end_time"`
		}
		Metrics map[string]struct {
			Type   string
			Unit   string
			Series []struct {
				EndpointURL string `json:"endpoint_url"`
				Stats       map[string]float64
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
		t.Fatal(err)
	}
	if x.SchemaVersion != "1.0" || len(x.Summary.Configured) != 3 || x.Summary.End != "2026-01-01T00:00:03.000000" {
		t.Errorf("header: %+v", x)
	}
	for _, tc := range []struct {
		metric, typ string
		worker      int // series index
		want        map[string]float64
	}{
		{"vllm:kv_offload_size_gpu_to_cpu", "histogram", 0, map[string]float64{"count": 10, "sum": 30000, "avg": 3000, "count_rate": 5, "sum_rate": 15000}},
		{"vllm:kv_offload_size_cpu_to_gpu", "histogram", 0, map[string]float64{"count": 3, "sum": 12000, "avg": 4000, "count_rate": 1.5, "sum_rate": 6000}},
		{"vllm:kv_offload_size_cpu_to_gpu", "histogram", 1, map[string]float64{"count": 0}},
		{"vllm:kv_offload_num_gpu_to_cpu", "counter", 0, map[string]float64{"total": 10, "rate": 5}},
		{"vllm:kv_offload_num_cpu_to_gpu", "counter", 1, map[string]float64{"total": 0, "rate": 0}},
		{"kvbm_offload_blocks_d2h", "counter", 0, map[string]float64{"total": 8, "rate": 4}},
		{"kvbm_onboard_blocks_h2d", "counter", 0, map[string]float64{"total": 5, "rate": 2.5}},
		{"kvbm_offload_blocks_h2d", "counter", 0, map[string]float64{"total": 4, "rate": 2}},
		{"kvbm_onboard_blocks_d2d", "counter", 0, map[string]float64{"total": 2, "rate": 1}},
	} {
		m, ok := x.Metrics[tc.metric]
		if !ok || m.Type != tc.typ || tc.worker >= len(m.Series) {
			t.Errorf("%s: %+v", tc.metric, m)
			continue
		}
		got := m.Series[tc.worker].Stats
		if len(got) != len(tc.want) {
			t.Errorf("%s series %d: stats %v, want %v", tc.metric, tc.worker, got, tc.want)
		}
		for k, v := range tc.want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s series %d: %s = %v, want %v", tc.metric, tc.worker, k, g, v)
			}
		}
	}
	if n := len(x.Metrics["kvbm_onboard_blocks_d2d"].Series); n != 1 {
		t.Errorf("the disk tier is on one worker, %d series", n)
	}
}
