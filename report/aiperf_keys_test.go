package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routesim/routesim/sim"
)

// aiperf08Keys are the top-level keys, in order, of a real AIPerf 0.8.0
// profile_export_aiperf.json: the 8×A100 study's N=8 kv-router run 1
// (MicheleCampi/dynamo-kv-router-ab @ a558ae0, results/N8/on/run_1; the
// file itself is not copied: the repository has no license). inputConfig08
// are the keys of its input_config.
var aiperf08Keys = []string{
	"schema_version", "aiperf_version", "benchmark_id", "request_throughput", "request_latency",
	"request_count", "time_to_first_token", "time_to_second_token", "inter_token_latency",
	"output_token_throughput", "output_token_throughput_per_user", "output_sequence_length",
	"input_sequence_length", "output_token_count", "inter_chunk_latency", "total_output_tokens",
	"benchmark_duration", "total_isl", "total_osl", "telemetry_data", "input_config", "was_cancelled",
	"error_summary", "start_time", "end_time", "http_req_sending", "http_req_data_received",
	"http_req_dns_lookup", "time_to_first_output_token", "http_req_connecting", "http_req_receiving",
	"http_req_blocked", "http_req_waiting", "http_req_data_sent", "http_req_duration",
	"http_req_connection_reused", "http_req_chunks_received", "http_req_chunks_sent",
	"osl_mismatch_diff_pct", "e2e_output_token_throughput", "prefill_throughput_per_user",
	"http_req_connection_overhead", "http_req_total", "osl_mismatch_count", "total_token_throughput",
}

var inputConfig08 = []string{"endpoint", "input", "output", "tokenizer", "cli_command", "benchmark_id"}

// routesimOnly are keys routesim writes that the study's export lacks.
var routesimOnly = map[string]string{
	"generator":           "names the producer where AIPerf writes aiperf_version",
	"error_request_count": "AIPerf writes it when requests fail (its docs' failed-run example); the study's run had none",
}

var inputConfigOnly = map[string]string{
	"routesim": "the run's full settings",
}

var omittedInputConfig = map[string]string{
	"tokenizer": "routesim does not tokenize: the trace gives token counts",
}

func omitted(k string) (string, bool) {
	if why, ok := AIPerfOmitted[k]; ok {
		return why, true
	}
	if strings.HasPrefix(k, "http_req_") {
		return AIPerfOmitted["http_req_"], true
	}
	return "", false
}

// TestAIPerfKeySet diffs the export's keys against the real AIPerf 0.8
// export: every real key is written or left out on purpose (with its
// reason), every key written is AIPerf's or explained.
func TestAIPerfKeySet(t *testing.T) {
	got := export(t)
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for _, k := range aiperf08Keys {
		why, left := omitted(k)
		switch {
		case keys[k] && left:
			t.Errorf("%s is written but listed as omitted (%s)", k, why)
		case !keys[k] && !left:
			t.Errorf("AIPerf's %s is missing and not listed in AIPerfOmitted", k)
		case !keys[k]:
			t.Logf("left out: %-24s %s", k, why)
		}
	}
	real := map[string]bool{}
	for _, k := range aiperf08Keys {
		real[k] = true
	}
	for k := range AIPerfOmitted {
		if _, ok := omitted(k); ok && !real[k] && k != "http_req_" {
			t.Errorf("AIPerfOmitted lists %s, which AIPerf 0.8 does not write", k)
		}
	}
	for k := range keys {
		if !real[k] && routesimOnly[k] == "" {
			t.Errorf("%s is not AIPerf's and not explained", k)
		}
	}
	var ic map[string]json.RawMessage
	if err := json.Unmarshal(got["input_config"], &ic); err != nil {
		t.Fatal(err)
	}
	for _, k := range inputConfig08 {
		if _, ok := ic[k]; !ok && omittedInputConfig[k] == "" {
			t.Errorf("input_config.%s is missing and not explained", k)
		}
	}
	for k := range ic {
		if !slices.Contains(inputConfig08, k) && inputConfigOnly[k] == "" {
			t.Errorf("input_config.%s is not AIPerf's and not explained", k)
		}
	}
}

// TestAIPerfNumberTypes: statistics are floats as AIPerf writes them
// (Python's json: "1000.0"), counts are integers, so readers that check
// types accept the export.
func TestAIPerfNumberTypes(t *testing.T) {
	got := export(t)
	checked := 0
	for k, raw := range got {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m["unit"] == nil {
			continue
		}
		for stat, v := range m {
			s := string(v)
			switch {
			case stat == "unit" || s == "null":
			case stat == "count":
				if strings.ContainsAny(s, ".e") {
					t.Errorf("%s.count = %s, want an integer", k, s)
				}
			case !strings.ContainsAny(s, ".e"):
				t.Errorf("%s.%s = %s, want a float", k, stat, s)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d numbers", checked)
	}
}

// TestAIPerfTelemetryShape: telemetry_data follows AIPerf's GPU telemetry
// export (summary; endpoints → gpus → gpu_<i> → metrics), one endpoint per
// worker with tp GPUs, stamped from the run's start.
func TestAIPerfTelemetryShape(t *testing.T) {
	got := export(t)
	var tel struct {
		Summary struct {
			Configured []string `json:"endpoints_configured"`
			Start      string   `json:"start_time"`
			End        string   `json:"end_time"`
		}
		Endpoints map[string]struct {
			GPUs map[string]struct {
				Index   int `json:"gpu_index"`
				Metrics map[string]struct {
					Unit  string
					Avg   float64
					Max   float64
					Count int
				}
			}
		}
	}
	if err := json.Unmarshal(got["telemetry_data"], &tel); err != nil {
		t.Fatal(err)
	}
	if len(tel.Endpoints) != 1 || len(tel.Summary.Configured) != 1 {
		t.Fatalf("endpoints: %+v", tel)
	}
	if tel.Summary.Start != "2026-06-05T21:58:30.000000" || tel.Summary.End != "2026-06-05T21:58:30.300000" {
		t.Errorf("telemetry window %s – %s", tel.Summary.Start, tel.Summary.End)
	}
	gpus := tel.Endpoints["worker-0:9401"].GPUs
	if len(gpus) != 2 {
		t.Fatalf("gpus: %+v", gpus)
	}
	m := gpus["gpu_1"].Metrics
	// Utilization 0, 0.5, 1 at 100 + 200 W per unit: power 100, 200, 300 W.
	if p := m["gpu_power_usage"]; p.Unit != "W" || p.Avg != 200 || p.Count != 3 {
		t.Errorf("power %+v", p)
	}
	if e := m["energy_consumption"]; e.Unit != "MJ" || e.Max != 60e-6 {
		t.Errorf("energy %+v (want 60 J = 6e-5 MJ at the end)", e)
	}
	if u := m["gpu_utilization"]; u.Unit != "%" || u.Avg != 50 {
		t.Errorf("utilization %+v", u)
	}
}

func export(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	recs, s := records()
	nv := &NVML{
		Samples: sim.GPUSamples{Util: [][]float64{{0, 0.5, 1}}}, TP: 2, GPUName: "A100-SXM4-40GB",
		PowerW: func(u, _ float64) float64 { return 100 + 200*u }, MemUsedBytes: 30e9,
	}
	run := AIPerfRun{
		Generator: "routesim test", Start: time.Date(2026, 6, 5, 21, 58, 30, 0, time.UTC), Model: "Qwen/Qwen3-8B",
		Dataset: "conversation", FixedSchedule: true, Command: "routesim run", Settings: map[string]int{"n": 1}, NVML: nv,
	}
	var buf bytes.Buffer
	if err := WriteAIPerf(&buf, recs, s, run); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(got) == 0 {
		t.Fatal("empty export")
	}
	return got
}
