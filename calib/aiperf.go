package calib

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"sort"
)

// Metric is one statistic block of an AIPerf summary export.
type Metric struct {
	Unit  string
	Count int
	Stats map[string]float64 // avg, min, max, std, p1 … p99, as present
}

// AIPerfSummary is AIPerf's profile_export_aiperf.json: metrics by name.
type AIPerfSummary struct {
	Metrics map[string]Metric
}

// Stat returns metric.stat ("time_to_first_token", "p50").
func (s *AIPerfSummary) Stat(metric, stat string) (float64, bool) {
	m, ok := s.Metrics[metric]
	if !ok {
		return 0, false
	}
	v, ok := m.Stats[stat]
	return v, ok
}

// requiredSummary are the metrics a calibration needs from a summary.
var requiredSummary = []string{"time_to_first_token", "inter_token_latency", "request_throughput", "request_latency"}

// ReadAIPerfSummary parses a summary export. It requires the latency and
// throughput metrics a fit uses, and finite numbers everywhere.
func ReadAIPerfSummary(r io.Reader, name string) (*AIPerfSummary, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(r)
	if err := dec.Decode(&raw); err != nil {
		return nil, errf(name, 0, "", "not a JSON object: %v", err)
	}
	s := &AIPerfSummary{Metrics: map[string]Metric{}}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw[k], &obj) != nil {
			continue // scalars, lists: not metrics
		}
		unitRaw, ok := obj["unit"]
		if !ok {
			continue // input_config, telemetry and the like
		}
		m := Metric{Stats: map[string]float64{}}
		if err := json.Unmarshal(unitRaw, &m.Unit); err != nil {
			return nil, errf(name, 0, k+".unit", "not a string")
		}
		for stat, v := range obj {
			if stat == "unit" {
				continue
			}
			var f *float64
			if err := json.Unmarshal(v, &f); err != nil {
				return nil, errf(name, 0, k+"."+stat, "%s is not a number", bytes.TrimSpace(v))
			}
			if f == nil {
				continue
			}
			if math.IsNaN(*f) || math.IsInf(*f, 0) {
				return nil, errf(name, 0, k+"."+stat, "not finite")
			}
			if *f < 0 || *f > maxMeasured {
				return nil, errf(name, 0, k+"."+stat, "%g is outside [0, %g]", *f, maxMeasured)
			}
			if stat == "count" {
				m.Count = int(*f)
				continue
			}
			m.Stats[stat] = *f
		}
		s.Metrics[k] = m
	}
	for _, k := range requiredSummary {
		m, ok := s.Metrics[k]
		if !ok {
			return nil, errf(name, 0, k, "missing (not an AIPerf summary export?)")
		}
		if _, ok := m.Stats["avg"]; !ok {
			return nil, errf(name, 0, k+".avg", "missing")
		}
	}
	if v, _ := s.Stat("request_throughput", "avg"); v <= 0 {
		return nil, errf(name, 0, "request_throughput.avg", "%g: the run completed nothing", v)
	}
	ttft, _ := s.Stat("time_to_first_token", "avg")
	if e2e, ok := s.Stat("request_latency", "avg"); ok && ttft > e2e {
		return nil, errf(name, 0, "time_to_first_token.avg", "%g ms exceeds request_latency.avg %g ms: impossible", ttft, e2e)
	}
	return s, nil
}

// Bounds on measured values: a latency beyond a million seconds or a
// sequence beyond ten million tokens is a corrupt export, not a run.
const (
	maxMeasured = 1e9 // ms (≈ 11.6 days), and any other statistic's value
	maxTokens   = 1e7
)

// Record is one request of AIPerf's per-request export.
type Record struct {
	Line      int
	StartNs   int64
	EndNs     int64
	ISL, OSL  int
	TTFTMs    float64
	TTSTMs    float64 // 0 when absent
	ITLMs     float64 // 0 when absent (single-token outputs)
	LatencyMs float64
	Error     string // non-empty for a failed request
}

type recordLine struct {
	Metadata *struct {
		RequestStartNs *int64  `json:"request_start_ns"`
		RequestEndNs   *int64  `json:"request_end_ns"`
		Phase          *string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value *float64 `json:"value"`
		Unit  string   `json:"unit"`
	} `json:"metrics"`
	Error *struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
		Type    string `json:"type"`
	} `json:"error"`
}

// ReadAIPerfRecords parses AIPerf's profile_export.jsonl, keeping the
// profiling phase (warm-up records are skipped). Records come back sorted
// by start time.
func ReadAIPerfRecords(r io.Reader, name string) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	var out []Record
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var l recordLine
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, errf(name, line, "", "malformed JSON: %v", err)
		}
		if l.Metadata == nil || l.Metadata.RequestStartNs == nil || l.Metadata.RequestEndNs == nil {
			return nil, errf(name, line, "metadata.request_start_ns", "missing (not an AIPerf per-request export?)")
		}
		if l.Metadata.Phase != nil && *l.Metadata.Phase == "warmup" {
			continue
		}
		rec := Record{Line: line, StartNs: *l.Metadata.RequestStartNs, EndNs: *l.Metadata.RequestEndNs}
		if rec.EndNs < rec.StartNs {
			return nil, errf(name, line, "metadata.request_end_ns", "%d is before request_start_ns %d", rec.EndNs, rec.StartNs)
		}
		if l.Error != nil {
			rec.Error = l.Error.Message
			if rec.Error == "" {
				rec.Error = l.Error.Type
			}
			out = append(out, rec)
			continue
		}
		get := func(metric string, required bool) (float64, error) {
			m, ok := l.Metrics[metric]
			if !ok || m.Value == nil {
				if required {
					return 0, errf(name, line, "metrics."+metric, "missing")
				}
				return 0, nil
			}
			if v := *m.Value; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > maxMeasured {
				return 0, errf(name, line, "metrics."+metric, "%g is not a valid value (want 0–%g)", v, maxMeasured)
			}
			return *m.Value, nil
		}
		var err error
		fields := []struct {
			metric   string
			required bool
			dst      *float64
		}{
			{"time_to_first_token", true, &rec.TTFTMs}, {"request_latency", true, &rec.LatencyMs},
			{"time_to_second_token", false, &rec.TTSTMs}, {"inter_token_latency", false, &rec.ITLMs},
		}
		for _, f := range fields {
			if *f.dst, err = get(f.metric, f.required); err != nil {
				return nil, err
			}
		}
		isl, err := get("input_sequence_length", true)
		if err != nil {
			return nil, err
		}
		osl, err := get("output_sequence_length", true)
		if err != nil {
			return nil, err
		}
		for _, c := range []struct {
			field string
			v     float64
		}{{"input_sequence_length", isl}, {"output_sequence_length", osl}} {
			if c.v != math.Trunc(c.v) || c.v > maxTokens {
				return nil, errf(name, line, "metrics."+c.field, "%g is not a token count (an integer ≤ %g)", c.v, float64(maxTokens))
			}
		}
		if rec.TTFTMs > rec.LatencyMs {
			return nil, errf(name, line, "metrics.time_to_first_token", "%g ms exceeds request_latency %g ms: impossible", rec.TTFTMs, rec.LatencyMs)
		}
		rec.ISL, rec.OSL = int(isl), int(osl)
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, errf(name, line, "", "%v", err)
	}
	if len(out) == 0 {
		return nil, errf(name, 0, "", "no profiling records")
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartNs < out[j].StartNs })
	return out, nil
}
