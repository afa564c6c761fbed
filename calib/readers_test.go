package calib

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
)

const goodSummary = `{"schema_version":"1.1",
 "request_throughput":{"unit":"requests/sec","avg":4.39},
 "request_latency":{"unit":"ms","avg":4928,"p50":1313.6,"count":1000},
 "time_to_first_token":{"unit":"ms","avg":451.4,"p50":360.9,"p90":935.8,"count":1000},
 "inter_token_latency":{"unit":"ms","avg":45.4,"p50":32.0,"count":997},
 "input_config":{"endpoint":{"type":"chat"}},"error_summary":[]}`

func TestReadAIPerfSummary(t *testing.T) {
	s, err := ReadAIPerfSummary(strings.NewReader(goodSummary), "s.json")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Stat("time_to_first_token", "p50"); v != 360.9 {
		t.Errorf("ttft p50 %v", v)
	}
	if s.Metrics["time_to_first_token"].Count != 1000 || s.Metrics["inter_token_latency"].Unit != "ms" {
		t.Errorf("metrics %+v", s.Metrics)
	}
}

func TestReadersRejectBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		read           func(string) error
	}{
		{"summary not JSON", "{", "s.json: not a JSON object", summary},
		{"summary missing metric", `{"request_throughput":{"unit":"requests/sec","avg":1}}`, "s.json: time_to_first_token: missing", summary},
		{"summary string stat", strings.Replace(goodSummary, `"p50":360.9`, `"p50":"fast"`, 1), "s.json: time_to_first_token.p50: \"fast\" is not a number", summary},
		{"summary NaN", strings.Replace(goodSummary, `"p50":360.9`, `"p50":NaN`, 1), "s.json: not a JSON object", summary},
		{"summary empty run", strings.Replace(goodSummary, `"avg":4.39`, `"avg":0`, 1), "request_throughput.avg: 0: the run completed nothing", summary},
		{"records missing metadata", `{"metrics":{}}`, "r.jsonl:1: metadata.request_start_ns: missing", records},
		{"records missing ttft", `{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"request_latency":{"value":1}},"error":null}`, "r.jsonl:1: metrics.time_to_first_token: missing", records},
		{"records negative", `{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"time_to_first_token":{"value":-1},"request_latency":{"value":1},"input_sequence_length":{"value":1},"output_sequence_length":{"value":1}}}`, "r.jsonl:1: metrics.time_to_first_token: -1", records},
		{"records end before start", `{"metadata":{"request_start_ns":5,"request_end_ns":2},"metrics":{}}`, "r.jsonl:1: metadata.request_end_ns", records},
		{"records empty", "", "r.jsonl: no profiling records", records},
		{"records ttft after the end", `{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"time_to_first_token":{"value":500},"request_latency":{"value":100},"input_sequence_length":{"value":10},"output_sequence_length":{"value":1}}}`, "r.jsonl:1: metrics.time_to_first_token: 500 ms exceeds request_latency 100 ms", records},
		{"records absurd latency", `{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"time_to_first_token":{"value":1},"request_latency":{"value":1e300},"input_sequence_length":{"value":10},"output_sequence_length":{"value":1}}}`, "r.jsonl:1: metrics.request_latency: 1e+300 is not a valid value", records},
		{"records absurd ISL", `{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"time_to_first_token":{"value":1},"request_latency":{"value":2},"input_sequence_length":{"value":1e30},"output_sequence_length":{"value":1}}}`, "r.jsonl:1: metrics.input_sequence_length: 1e+30 is not a valid value", records},
		{"records fractional ISL", `{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"time_to_first_token":{"value":1},"request_latency":{"value":2},"input_sequence_length":{"value":12.5},"output_sequence_length":{"value":1}}}`, "r.jsonl:1: metrics.input_sequence_length: 12.5 is not a token count", records},
		{"summary ttft after the end", strings.Replace(goodSummary, `"time_to_first_token":{"unit":"ms","avg":451.4`, `"time_to_first_token":{"unit":"ms","avg":1e7`, 1), "time_to_first_token.avg: 1e+07 ms exceeds request_latency.avg", summary},
		{"records truncated", `{"metadata":{"request_start_ns":5,`, "r.jsonl:1: malformed JSON", records},
		{"smi missing column", "timestamp, index, utilization.gpu [%]\n", "n.csv:1: power.draw: column missing", smi},
		{"smi bad util", smiHeader + "2026/06/05 21:58:30.828, 0, lots %, 100 W, 1 MiB\n", "n.csv:2: utilization.gpu: \"lots %\"", smi},
		{"smi over 100", smiHeader + "2026/06/05 21:58:30.828, 0, 140 %, 100 W, 1 MiB\n", "n.csv:2: utilization.gpu: 140 % is over 100", smi},
		{"smi bad time", smiHeader + "yesterday, 0, 40 %, 100 W, 1 MiB\n", "n.csv:2: timestamp", smi},
		{"smi short row", smiHeader + "2026/06/05 21:58:30.828, 0\n", "n.csv:2: 2 fields", smi},
		{"smi empty", smiHeader, "n.csv: no samples", smi},
		{"inferscope no gpu", `{"duration_secs": 300}`, "i.json: gpu.per_device: missing", inferscope},
		{"inferscope no duration", `{"gpu":{"per_device":[]}}`, "i.json: duration_secs", inferscope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var pe *inputerr.Error
			if !errors.As(err, &pe) {
				t.Errorf("%T is not a positioned *inputerr.Error", err)
			}
		})
	}
}

const smiHeader = "timestamp, index, utilization.gpu [%], power.draw [W], memory.used [MiB]\n"

func summary(s string) error { _, err := ReadAIPerfSummary(strings.NewReader(s), "s.json"); return err }
func records(s string) error {
	_, err := ReadAIPerfRecords(strings.NewReader(s), "r.jsonl")
	return err
}
func smi(s string) error        { _, err := ReadNvidiaSmiCSV(strings.NewReader(s), "n.csv"); return err }
func inferscope(s string) error { _, err := ReadInferscope(strings.NewReader(s), "i.json"); return err }

func TestReadNvidiaSmiCSVStatistics(t *testing.T) {
	in := smiHeader +
		"2026/06/05 21:58:30.000, 0, 40 %, 100.00 W, 37714 MiB\n" +
		"2026/06/05 21:58:30.000, 1, 0 %, 60.00 W, 37714 MiB\n" +
		"2026/06/05 21:58:30.100, 0, 60 %, 140.00 W, 37714 MiB\n" +
		"2026/06/05 21:58:30.100, 1, 20 %, 80.00 W, 37714 MiB\n"
	g, err := ReadNvidiaSmiCSV(strings.NewReader(in), "n.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Devices) != 2 || g.Devices[0].UtilMean != 0.5 || g.Devices[0].PowerMeanW != 120 || g.Devices[0].PowerMaxW != 140 {
		t.Errorf("devices %+v", g.Devices)
	}
	if g.UtilMean() != 0.3 || g.WindowS < 0.199 || g.WindowS > 0.201 {
		t.Errorf("util mean %v, window %v s", g.UtilMean(), g.WindowS)
	}
	nounits := "timestamp, index, utilization.gpu, power.draw, memory.used\n2026/06/05 21:58:30.000, 0, 40, 100.5, 1\n"
	if g, err := ReadNvidiaSmiCSV(strings.NewReader(nounits), "n.csv"); err != nil || g.Devices[0].PowerMeanW != 100.5 {
		t.Errorf("--format=csv,nounits: %v %+v", err, g)
	}
}

func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"no runs", `{"name":"x","runs":[]}`, "no measured runs"},
		{"unknown field", `{"name":"x","runs":[],"colour":1}`, "unknown field"},
		{"no files", `{"name":"x","runs":[{"name":"a","arm":"a","setup":{}}]}`, "needs aiperf_summary, aiperf_records, measured, vllm_bench, lmbench or guidellm"},
		{"bad setup", `{"name":"x","runs":[{"name":"a","arm":"a","aiperf_summary":"s","setup":{"gpu":"B300","policy":"psychic"}}]}`, "unknown GPU"},
		{"mixed deployments", `{"name":"x","runs":[{"name":"a","arm":"a","aiperf_summary":"s","setup":{}},{"name":"b","arm":"b","aiperf_summary":"s","setup":{"model":"Llama-3.1-8B"}}]}`, "one profile fits one deployment"},
		{"negative max_evals", `{"name":"x","options":{"max_evals":-1},"runs":[{"name":"a","arm":"a","aiperf_summary":"s","setup":{}}]}`, "options.max_evals: -1 must be in [1, 100000]"},
		{"negative prior weight", `{"name":"x","options":{"prior_weight":-2},"runs":[{"name":"a","arm":"a","aiperf_summary":"s","setup":{}}]}`, "prior_weight"},
		{"unknown option", `{"name":"x","options":{"speed":9},"runs":[{"name":"a","arm":"a","aiperf_summary":"s","setup":{}}]}`, "unknown field"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		os.WriteFile(p, []byte(tc.body), 0o644)
		if _, err := LoadSpec(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A spec's note and options are read as written.
	p := filepath.Join(dir, "options.json")
	os.WriteFile(p, []byte(`{"name":"x","note":"why","options":{"max_evals":7,"fit":["step_base_ns"],"prior_weight":0,"model_error":0.2},"runs":[{"name":"a","arm":"a","aiperf_summary":"s","setup":{}}]}`), 0o644)
	if s, err := LoadSpec(p); err != nil || s.Note != "why" || s.Options.MaxEvals != 7 || len(s.Options.Fit) != 1 ||
		s.Options.PriorWeight == nil || *s.Options.PriorWeight != 0 || s.Options.ModelError != 0.2 {
		t.Errorf("note and options: %+v, %v", s, err)
	}
	p = filepath.Join(dir, "missing-file.json")
	os.WriteFile(p, []byte(`{"name":"x","runs":[{"name":"a","arm":"a","aiperf_summary":"nope.json","setup":{}}]}`), 0o644)
	s, err := LoadSpec(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(s, Options{}); err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing measured file: %v", err)
	}
}

func FuzzAIPerfReader(f *testing.F) {
	f.Add([]byte(goodSummary), false)
	f.Add([]byte(`{"metadata":{"request_start_ns":1,"request_end_ns":9},"metrics":{"time_to_first_token":{"value":3},"request_latency":{"value":8},"input_sequence_length":{"value":10},"output_sequence_length":{"value":2},"inter_token_latency":{"value":5}}}`), true)
	// Units: seconds (converted), furlongs (refused); impossible counts.
	ttft := `"time_to_first_token":{"unit":"ms","avg":451.4`
	for _, s := range []string{
		strings.Replace(goodSummary, ttft, `"time_to_first_token":{"unit":"s","avg":0.4514`, 1),
		strings.Replace(goodSummary, ttft, `"time_to_first_token":{"unit":"furlongs","avg":451.4`, 1),
		strings.Replace(goodSummary, ttft, `"time_to_first_token":{"unit":"ns","avg":451400000`, 1),
		strings.Replace(goodSummary, `"input_config"`, `"request_count":{"unit":"requests","avg":100000},"error_request_count":{"unit":"requests","avg":0.5},"input_config"`, 1),
		strings.Replace(goodSummary, `"input_config"`, `"request_count":{"unit":"requests","avg":10},"good_request_count":{"unit":"requests","avg":11},"input_config"`, 1),
		strings.Replace(goodSummary, `"input_config"`, `"start_time":"2026-06-05T21:58:30.939332","end_time":"2026-06-04T21:58:30","input_config"`, 1),
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"metadata":{"request_start_ns":1,"request_end_ns":9},"metrics":{"time_to_first_token":{"value":0.003,"unit":"sec"},"request_latency":{"value":8,"unit":"furlongs"},"input_sequence_length":{"value":10,"unit":"tokens"},"output_sequence_length":{"value":2}}}`), true)
	f.Fuzz(func(t *testing.T, data []byte, perRequest bool) {
		if perRequest {
			recs, err := ReadAIPerfRecords(strings.NewReader(string(data)), "f")
			if err == nil {
				for _, r := range recs {
					if r.EndNs < r.StartNs || r.TTFTMs < 0 || r.ITLMs < 0 || r.TTFTMs > r.LatencyMs || r.LatencyMs > maxMeasured {
						t.Fatalf("accepted an invalid record %+v", r)
					}
				}
			} else if _, ok := err.(*inputerr.Error); !ok {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		s, err := ReadAIPerfSummary(strings.NewReader(string(data)), "f")
		if err != nil {
			if _, ok := err.(*inputerr.Error); !ok {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		if v, _ := s.Stat("request_throughput", "avg"); v <= 0 {
			t.Fatal("accepted a summary with no throughput")
		}
		for k, q := range summaryQuantities {
			if m, ok := s.Metrics[k]; ok && m.Unit != q.unit {
				t.Fatalf("%s accepted in %q, not converted to %s", k, m.Unit, q.unit)
			}
		}
		if all, ok := s.Stat("request_count", "avg"); ok {
			if good, ok := s.Stat("good_request_count", "avg"); ok && good > all || all != math.Trunc(all) {
				t.Fatalf("accepted counts %g of %g", good, all)
			}
			for _, k := range latencyMetrics {
				if float64(s.Metrics[k].Count) > all {
					t.Fatalf("accepted %d %s samples of %g requests", s.Metrics[k].Count, k, all)
				}
			}
		}
		if !s.Start.IsZero() && !s.End.IsZero() && s.End.Before(s.Start) {
			t.Fatal("accepted an end before the start")
		}
	})
}

func FuzzNvidiaSmiCSV(f *testing.F) {
	f.Add([]byte(smiHeader + "2026/06/05 21:58:30.000, 0, 40 %, 100.00 W, 37714 MiB\n"))
	f.Add([]byte("timestamp, index, utilization.gpu, power.draw, memory.used\n2026/06/05 21:58:30.000, 3, 0, 0, 0\n"))
	// GPU index 99 and 1e300, reversed timestamps, a span of weeks.
	f.Add([]byte(smiHeader + smiRows + "2026/06/05 21:58:31.000, 99, 60 %, 140.00 W, 1 MiB\n"))
	f.Add([]byte(smiHeader + "2026/06/05 21:58:30.000, 1e300, 40 %, 100.00 W, 1 MiB\n"))
	f.Add([]byte(smiHeader + "2026/06/05 21:58:31.000, 0, 40 %, 100.00 W, 1 MiB\n2026/06/05 21:58:30.000, 0, 60 %, 140.00 W, 1 MiB\n"))
	f.Add([]byte(smiHeader + "2026/06/05 21:58:30.000, 0, 40 %, 100.00 W, 1 MiB\n2026/06/25 21:58:30.000, 0, 40 %, 100.00 W, 1 MiB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ReadNvidiaSmiCSV(strings.NewReader(string(data)), "f")
		if err != nil {
			if _, ok := err.(*inputerr.Error); !ok {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		for _, d := range g.Devices {
			if d.UtilMean < 0 || d.UtilMean > 1 || d.PowerMeanW < 0 || d.PowerMaxW < d.PowerMeanW-1e-9 || d.Index < 0 || d.Index > maxGPUIndex {
				t.Fatalf("implausible device %+v", d)
			}
		}
		if g.last.t.Before(g.first.t) || g.last.t.Sub(g.first.t).Seconds() > maxWindowS || !(g.WindowS >= 0) {
			t.Fatalf("accepted samples from %v to %v (window %g s)", g.first.t, g.last.t, g.WindowS)
		}
	})
}

func FuzzReadMeasured(f *testing.F) {
	f.Add([]byte(`{"source":"s","run":"r","stats":{"ttft_ms_avg":3.5,"requests_per_s":1},"gpu":{"devices":[{"index":0,"samples":3,"util_mean":0.5,"power_mean_w":100,"power_max_w":200}],"window_s":30}}`))
	f.Add([]byte(`{"source":"","stats":{}}`))
	f.Add([]byte(`{"source":"s","stats":{"ttft_ms_p50":-1}}`))
	f.Add([]byte(`{"source":"s","stats":{"ttft_ms_avg":1},"gpu":{"devices":[{"index":99},{"index":-1},{"index":99}],"window_s":1e308}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadMeasured(strings.NewReader(string(data)), "f")
		if err != nil {
			if _, ok := err.(*inputerr.Error); !ok {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		if m.Source == "" || len(m.Stats) == 0 {
			t.Fatalf("accepted %+v", m)
		}
		for k, v := range m.Stats {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("accepted %s = %g", k, v)
			}
		}
		if g := m.GPU; g != nil {
			seen := map[int]bool{}
			for _, d := range g.Devices {
				if d.Index < 0 || d.Index > maxGPUIndex || seen[d.Index] {
					t.Fatalf("accepted GPU index %d", d.Index)
				}
				seen[d.Index] = true
			}
			if !(g.WindowS >= 0 && g.WindowS <= maxWindowS) {
				t.Fatalf("accepted window %g s", g.WindowS)
			}
		}
	})
}

func TestReadMeasuredErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"no source", `{"source":"","stats":{"ttft_ms_avg":1}}`, "source"},
		{"unknown stat", `{"source":"s","stats":{"ttft_ms_p42":1}}`, "stats.ttft_ms_p42"},
		{"negative", `{"source":"s","stats":{"ttft_ms_avg":-1}}`, "stats.ttft_ms_avg"},
		{"bad util", `{"source":"s","stats":{"ttft_ms_avg":1},"gpu":{"devices":[{"util_mean":2}]}}`, "gpu.devices[0]"},
		{"completeness over 1", `{"source":"s","stats":{"completeness":1.5}}`, "stats.completeness"},
		{"unknown field", `{"source":"s","stats":{"ttft_ms_avg":1},"extra":1}`, "unknown field"},
	} {
		_, err := ReadMeasured(strings.NewReader(tc.body), "m.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "m.json") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
