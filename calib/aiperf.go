package calib

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"time"

	"github.com/routesim/routesim/internal/inputerr"
)

// Metric is one statistic block of an AIPerf summary export.
type Metric struct {
	// Unit is the unit of Stats: for the metrics routesim reads, the one
	// it compares in (ms, requests/sec, requests), whatever the file used.
	Unit  string
	Count int
	Stats map[string]float64 // avg, min, max, std, p1 … p99, as present
}

// AIPerfSummary is AIPerf's profile_export_aiperf.json: metrics by name.
type AIPerfSummary struct {
	Metrics map[string]Metric
	// Start and End are the run's start_time and end_time (AIPerf writes
	// them without a zone; they are read as UTC); zero when absent.
	Start, End time.Time
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

// ReadAIPerfSummary parses a summary export (at most
// inputerr.MaxDataFile bytes). It requires the latency and throughput
// metrics a fit uses and finite numbers everywhere; it converts the units
// of the metrics routesim reads (summaryQuantities) and refuses units it
// does not know, and counts that are not whole or exceed their whole.
func ReadAIPerfSummary(r io.Reader, name string) (*AIPerfSummary, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(inputerr.Reader(r, name, inputerr.MaxDataFile))
	if err := dec.Decode(&raw); err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return nil, ie
		}
		return nil, errf(name, 0, "", "not a JSON object: %v", err)
	}
	s := &AIPerfSummary{Metrics: map[string]Metric{}}
	for _, k := range sortedKeys(raw) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw[k], &obj) != nil {
			continue // scalars, lists: not metrics
		}
		unitRaw, ok := obj["unit"]
		if !ok {
			continue // input_config, telemetry and the like
		}
		m, err := readMetric(name, k, unitRaw, obj)
		if err != nil {
			return nil, err
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
	if err := s.checkCounts(name); err != nil {
		return nil, err
	}
	if err := s.readTimes(name, raw); err != nil {
		return nil, err
	}
	return s, nil
}

// readMetric reads one statistic block, converting a metric routesim
// reads to the unit it compares in.
func readMetric(name, k string, unitRaw json.RawMessage, obj map[string]json.RawMessage) (Metric, error) {
	m := Metric{Stats: map[string]float64{}}
	if err := json.Unmarshal(unitRaw, &m.Unit); err != nil {
		return m, errf(name, 0, k+".unit", "not a string")
	}
	factor, q := 1.0, summaryQuantities[k]
	if q != nil {
		f, ok := q.factor(m.Unit)
		if !ok {
			return m, errf(name, 0, k+".unit", "%s", q.refuse(m.Unit))
		}
		factor = f
	}
	for _, stat := range sortedKeys(obj) {
		if stat == "unit" {
			continue
		}
		v := obj[stat]
		var f *float64
		if err := json.Unmarshal(v, &f); err != nil {
			return m, errf(name, 0, k+"."+stat, "%s is not a number", bytes.TrimSpace(v))
		}
		if f == nil {
			continue
		}
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			return m, errf(name, 0, k+"."+stat, "not finite")
		}
		if stat == "count" {
			if *f < 0 || *f > maxMeasured || *f != math.Trunc(*f) {
				return m, errf(name, 0, k+".count", "%g is not a whole number in [0, %g]", *f, maxMeasured)
			}
			m.Count = int(*f)
			continue
		}
		x := *f * factor
		if *f < 0 || x > maxMeasured {
			if q != nil && factor != 1 {
				return m, errf(name, 0, k+"."+stat, "%g %s is outside [0, %g %s]", *f, m.Unit, maxMeasured/factor, m.Unit)
			}
			return m, errf(name, 0, k+"."+stat, "%g is outside [0, %g]", *f, maxMeasured)
		}
		m.Stats[stat] = x
	}
	if q != nil {
		m.Unit = q.unit
	}
	return m, nil
}

// checkCounts refuses counts that are not whole numbers and parts that
// exceed their whole: good requests over all requests, a latency's
// samples over the requests that completed.
func (s *AIPerfSummary) checkCounts(name string) error {
	for _, k := range []string{"request_count", "error_request_count", "good_request_count"} {
		if v, ok := s.Stat(k, "avg"); ok && v != math.Trunc(v) {
			return errf(name, 0, k+".avg", "%g is not a whole number", v)
		}
	}
	all, ok := s.Stat("request_count", "avg")
	if !ok {
		return nil
	}
	if good, ok := s.Stat("good_request_count", "avg"); ok && good > all {
		return errf(name, 0, "good_request_count.avg", "%g exceeds request_count.avg %g", good, all)
	}
	for _, k := range latencyMetrics {
		if c := s.Metrics[k].Count; float64(c) > all {
			return errf(name, 0, k+".count", "%d exceeds request_count.avg %g: more samples than completed requests", c, all)
		}
	}
	return nil
}

// latencyMetrics are the per-request distributions a summary gives; each
// has at most one sample per completed request.
var latencyMetrics = []string{"request_latency", "time_to_first_token", "time_to_second_token", "inter_token_latency"}

// aiperfTimeLayouts are how AIPerf writes start_time and end_time
// (Python's isoformat: microseconds when nonzero, a zone when aware).
var aiperfTimeLayouts = []string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano}

// readTimes reads start_time and end_time, if present.
func (s *AIPerfSummary) readTimes(name string, raw map[string]json.RawMessage) error {
	for _, f := range []struct {
		key string
		dst *time.Time
	}{{"start_time", &s.Start}, {"end_time", &s.End}} {
		v, ok := raw[f.key]
		if !ok || string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		var text string
		if err := json.Unmarshal(v, &text); err != nil {
			return errf(name, 0, f.key, "%s is not a time", bytes.TrimSpace(v))
		}
		var err error
		for _, layout := range aiperfTimeLayouts {
			if *f.dst, err = time.Parse(layout, text); err == nil {
				break
			}
		}
		if err != nil {
			return errf(name, 0, f.key, "%q is not an ISO 8601 time", text)
		}
	}
	if !s.Start.IsZero() && !s.End.IsZero() && s.End.Before(s.Start) {
		return errf(name, 0, "end_time", "%s is before start_time %s", s.End.Format(time.RFC3339Nano), s.Start.Format(time.RFC3339Nano))
	}
	return nil
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
		Unit  *string  `json:"unit"`
	} `json:"metrics"`
	Error *struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
		Type    string `json:"type"`
	} `json:"error"`
}

// ReadAIPerfRecords parses AIPerf's profile_export.jsonl (at most
// inputerr.MaxDataFile bytes), keeping the profiling phase (warm-up
// records are skipped). Latencies are converted to ms from the unit each
// metric carries (AIPerf's when it carries none); an unknown unit is an
// error at its line. Records come back sorted by start time.
func ReadAIPerfRecords(r io.Reader, name string) ([]Record, error) {
	in := &stickyReader{r: inputerr.Reader(r, name, inputerr.MaxDataFile)}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	var out []Record
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, keep, err := parseRecord(b, name, line)
		if err != nil {
			if in.err != nil {
				return nil, in.err // the line is the part read before the failure
			}
			return nil, err
		}
		if keep {
			out = append(out, rec)
		}
	}
	if err := sc.Err(); err != nil {
		if in.err != nil {
			return nil, in.err
		}
		return nil, errf(name, line, "", "%v", err)
	}
	if len(out) == 0 {
		return nil, errf(name, 0, "", "no profiling records")
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartNs < out[j].StartNs })
	return out, nil
}

// parseRecord reads one line of a per-request export; keep is false for
// a warm-up record.
func parseRecord(b []byte, name string, line int) (rec Record, keep bool, err error) {
	var l recordLine
	if err := json.Unmarshal(b, &l); err != nil {
		return rec, false, errf(name, line, "", "malformed JSON: %v", err)
	}
	if l.Metadata == nil || l.Metadata.RequestStartNs == nil || l.Metadata.RequestEndNs == nil {
		return rec, false, errf(name, line, "metadata.request_start_ns", "missing (not an AIPerf per-request export?)")
	}
	if l.Metadata.Phase != nil && *l.Metadata.Phase == "warmup" {
		return rec, false, nil
	}
	rec = Record{Line: line, StartNs: *l.Metadata.RequestStartNs, EndNs: *l.Metadata.RequestEndNs}
	if rec.EndNs < rec.StartNs {
		return rec, false, errf(name, line, "metadata.request_end_ns", "%d is before request_start_ns %d", rec.EndNs, rec.StartNs)
	}
	if l.Error != nil {
		rec.Error = l.Error.Message
		if rec.Error == "" {
			rec.Error = l.Error.Type
		}
		return rec, true, nil
	}
	get := func(metric string, required bool) (float64, error) {
		m, ok := l.Metrics[metric]
		if !ok || m.Value == nil {
			if required {
				return 0, errf(name, line, "metrics."+metric, "missing")
			}
			return 0, nil
		}
		q, factor := &timeQuantity, 1.0
		if metric == "input_sequence_length" || metric == "output_sequence_length" {
			q = &tokenQuantity
		}
		if m.Unit != nil {
			if factor, ok = q.factor(*m.Unit); !ok {
				return 0, errf(name, line, "metrics."+metric+".unit", "%s", q.refuse(*m.Unit))
			}
		}
		if v := *m.Value * factor; *m.Value < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > maxMeasured {
			return 0, errf(name, line, "metrics."+metric, "%g is not a valid value (want 0–%g %s)", *m.Value, maxMeasured/factor, q.unit)
		}
		return *m.Value * factor, nil
	}
	var isl, osl float64
	for _, f := range []struct {
		metric   string
		required bool
		dst      *float64
	}{
		{"time_to_first_token", true, &rec.TTFTMs}, {"request_latency", true, &rec.LatencyMs},
		{"time_to_second_token", false, &rec.TTSTMs}, {"inter_token_latency", false, &rec.ITLMs},
		{"input_sequence_length", true, &isl}, {"output_sequence_length", true, &osl},
	} {
		if *f.dst, err = get(f.metric, f.required); err != nil {
			return rec, false, err
		}
	}
	for _, c := range []struct {
		field string
		v     float64
	}{{"input_sequence_length", isl}, {"output_sequence_length", osl}} {
		if c.v != math.Trunc(c.v) || c.v > maxTokens {
			return rec, false, errf(name, line, "metrics."+c.field, "%g is not a token count (an integer ≤ %g)", c.v, float64(maxTokens))
		}
	}
	if rec.TTFTMs > rec.LatencyMs {
		return rec, false, errf(name, line, "metrics.time_to_first_token", "%g ms exceeds request_latency %g ms: impossible", rec.TTFTMs, rec.LatencyMs)
	}
	rec.ISL, rec.OSL = int(isl), int(osl)
	return rec, true, nil
}

// stickyReader keeps its reader's first failure (other than io.EOF): a
// bufio.Scanner hands over the part line read before it, which is not
// the file's fault.
type stickyReader struct {
	r   io.Reader
	err error
}

func (s *stickyReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}
