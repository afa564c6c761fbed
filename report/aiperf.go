package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/routesim/routesim/sim"
)

// AIPerfSchemaVersion is the AIPerf summary schema the export follows
// (AIPerf 0.8.0 writes "1.1").
const AIPerfSchemaVersion = "1.1"

// AIPerfTimeLayout is how AIPerf writes start_time and end_time (Python's
// datetime.isoformat of a naive UTC time).
const AIPerfTimeLayout = "2006-01-02T15:04:05.000000"

// AIPerfRun is what the summary export needs besides the records: who made
// it, when simulated time 0 is on the wall clock, and the run's settings.
type AIPerfRun struct {
	// Generator names the producer ("routesim v…"), where AIPerf writes
	// aiperf_version.
	Generator string
	// Start is the wall-clock instant of simulated time 0.
	Start time.Time
	// Model is the served model's name as clients send it (its Hugging
	// Face id where known).
	Model string
	// Dataset names the workload (a trace name or "sessions"); FixedSchedule
	// says requests were sent at the trace's timestamps (open loop).
	Dataset       string
	FixedSchedule bool
	// Seed is the run's seed; Command the command line that made it;
	// ArtifactDir the output directory.
	Seed        uint64
	Command     string
	ArtifactDir string
	// Settings is the run's full specification, written under
	// input_config.routesim.
	Settings any
	// NVML is the simulated GPU trace for telemetry_data; nil leaves
	// telemetry_data out.
	NVML *NVML
}

// WriteAIPerf writes the run in the shape of AIPerf 0.8's
// profile_export_aiperf.json: the same metric names, units, statistics
// (avg, p1…p99, min, max, std, count, sum) and number types (floats;
// counts are integers), error_summary, start/end times, input_config and
// telemetry_data. As in AIPerf, latency metrics cover successful requests
// only; failures are counted in error_request_count and error_summary.
// Keys AIPerf writes that routesim leaves out are listed, with the
// reason, in AIPerfOmitted.
func WriteAIPerf(w io.Writer, recs []sim.Record, s *sim.Summary, run AIPerfRun) error {
	var ttft, ttst, itl, perUser, e2e, isl, osl, e2eTput, prefillTput []float64
	totalISL, totalOSL := 0, 0
	var end sim.Time
	errs := map[[3]string]int{}
	for i := range recs {
		r := &recs[i]
		end = max(end, r.End)
		if r.Status != sim.StatusOK {
			errs[[3]string{strconv.Itoa(r.HTTPCode), r.Status.String(), r.Reason}]++
			continue
		}
		ttft = append(ttft, r.TTFT().Ms())
		e2e = append(e2e, r.E2E().Ms())
		isl = append(isl, float64(r.InputTokens))
		osl = append(osl, float64(r.OutputTokens))
		totalISL += r.InputTokens
		totalOSL += r.OutputTokens
		if sec := r.E2E().Seconds(); sec > 0 {
			e2eTput = append(e2eTput, float64(r.OutputTokens)/sec)
		}
		if sec := r.TTFT().Seconds(); sec > 0 {
			prefillTput = append(prefillTput, float64(r.InputTokens)/sec)
		}
		if r.OutputTokens >= 2 {
			ms := r.ITL() / 1e6
			itl = append(itl, ms)
			ttst = append(ttst, (r.SecondToken - r.FirstToken).Ms())
			if ms > 0 {
				perUser = append(perUser, 1000/ms)
			}
		}
	}
	settings, err := json.Marshal(run.Settings)
	if err != nil {
		return err
	}
	id := benchmarkID(run, settings)
	var o object
	o.raw("schema_version", strconv.Quote(AIPerfSchemaVersion))
	o.raw("generator", strconv.Quote(run.Generator))
	o.raw("benchmark_id", strconv.Quote(id))
	o.scalar("request_throughput", "requests/sec", s.RequestsPerS)
	o.dist("request_latency", "ms", e2e)
	o.scalar("request_count", "requests", float64(s.Completed))
	if failed := s.Offered - s.Completed; failed > 0 {
		o.scalar("error_request_count", "requests", float64(failed))
	}
	o.dist("time_to_first_token", "ms", ttft)
	o.dist("time_to_second_token", "ms", ttst)
	o.dist("inter_token_latency", "ms", itl)
	o.scalar("output_token_throughput", "tokens/sec", s.OutputTokensPerS)
	o.dist("output_token_throughput_per_user", "tokens/sec/user", perUser)
	o.dist("output_sequence_length", "tokens", osl)
	o.dist("input_sequence_length", "tokens", isl)
	o.dist("output_token_count", "tokens", osl)
	o.scalar("total_output_tokens", "tokens", float64(totalOSL))
	o.scalar("benchmark_duration", "sec", s.DurationS)
	o.scalar("total_isl", "tokens", float64(totalISL))
	o.scalar("total_osl", "tokens", float64(totalOSL))
	if run.NVML != nil {
		o.raw("telemetry_data", run.NVML.aiperfTelemetry(run.Start))
	}
	o.raw("input_config", inputConfig(run, id, settings))
	o.raw("was_cancelled", "false")
	o.raw("error_summary", errorSummary(errs))
	o.raw("start_time", strconv.Quote(run.Start.UTC().Format(AIPerfTimeLayout)))
	o.raw("end_time", strconv.Quote(run.Start.Add(time.Duration(end)).UTC().Format(AIPerfTimeLayout)))
	// AIPerf 0.8 defines TTFOT apart from TTFT for reasoning models (the
	// first non-reasoning token); the trace carries no reasoning split, so
	// they coincide, as in the study's export.
	o.dist("time_to_first_output_token", "ms", ttft)
	o.dist("e2e_output_token_throughput", "tokens/sec/user", e2eTput)
	o.dist("prefill_throughput_per_user", "tokens/sec/user", prefillTput)
	tokensPerS := 0.0
	if s.DurationS > 0 {
		tokensPerS = float64(totalISL+totalOSL) / s.DurationS
	}
	o.scalar("total_token_throughput", "tokens/sec", tokensPerS)
	b := o.bytes()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, b, "", "  "); err != nil {
		return err
	}
	pretty.WriteByte('\n')
	_, err = w.Write(pretty.Bytes())
	return err
}

// AIPerfOmitted lists the keys of AIPerf 0.8's summary export that
// routesim does not write, with the reason.
var AIPerfOmitted = map[string]string{
	"aiperf_version":        "routesim is not AIPerf: generator names the producer and its version",
	"inter_chunk_latency":   "per-chunk gaps need every token's time; the engine keeps first, second and last (inter_token_latency has the per-request mean)",
	"osl_mismatch_count":    "the simulated engine emits exactly the trace's output length, so there is no mismatch to count",
	"osl_mismatch_diff_pct": "as osl_mismatch_count",
	"http_req_":             "the http_req_* transport timings (DNS, connect, send, receive, chunks) need a network, which routesim does not simulate",
}

func benchmarkID(run AIPerfRun, settings []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", run.Generator, run.Command, run.Start.UTC().Format(time.RFC3339Nano))
	h.Write(settings)
	s := h.Sum(nil)
	// A UUID of version 8 (custom) in RFC 9562's layout: the same run
	// gets the same id.
	s[6] = s[6]&0x0f | 0x80
	s[8] = s[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

func inputConfig(run AIPerfRun, id string, settings []byte) string {
	var endpoint, input, output object
	endpoint.raw("model_names", "["+strconv.Quote(run.Model)+"]")
	endpoint.raw("type", `"chat"`)
	endpoint.raw("streaming", "true")
	input.raw("file", strconv.Quote(run.Dataset))
	input.raw("fixed_schedule", strconv.FormatBool(run.FixedSchedule))
	if run.FixedSchedule {
		input.raw("custom_dataset_type", `"mooncake_trace"`)
	}
	input.raw("random_seed", strconv.FormatUint(run.Seed, 10))
	output.raw("artifact_directory", strconv.Quote(run.ArtifactDir))
	var o object
	o.raw("endpoint", string(endpoint.bytes()))
	o.raw("input", string(input.bytes()))
	o.raw("output", string(output.bytes()))
	o.raw("cli_command", strconv.Quote(run.Command))
	o.raw("benchmark_id", strconv.Quote(id))
	o.raw("routesim", string(settings))
	return string(o.bytes())
}

func errorSummary(errs map[[3]string]int) string {
	keys := make([][3]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		if a[1] != b[1] {
			return a[1] < b[1]
		}
		return a[2] < b[2]
	})
	type details struct {
		Code    int    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	type entry struct {
		ErrorDetails details `json:"error_details"`
		Count        int     `json:"count"`
	}
	out := make([]entry, len(keys))
	for i, k := range keys {
		code, _ := strconv.Atoi(k[0])
		out[i] = entry{details{code, k[1], k[2]}, errs[k]}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// object builds a JSON object with keys in insertion order.
type object struct{ buf []byte }

func (o *object) key(k string) {
	if len(o.buf) == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = strconv.AppendQuote(o.buf, k)
	o.buf = append(o.buf, ':')
}

func (o *object) raw(k, v string) {
	o.key(k)
	o.buf = append(o.buf, v...)
}

func (o *object) scalar(k, unit string, v float64) {
	o.key(k)
	o.buf = append(o.buf, `{"unit":`...)
	o.buf = strconv.AppendQuote(o.buf, unit)
	o.buf = append(o.buf, `,"avg":`...)
	o.buf = appendPyFloat(o.buf, v)
	o.buf = append(o.buf, '}')
}

// dist writes x's statistics in AIPerf's order: unit, avg, p1…p99, min,
// max, std, count, sum.
func (o *object) dist(k, unit string, x []float64) {
	d := sim.NewDist(x)
	o.key(k)
	o.buf = append(o.buf, `{"unit":`...)
	o.buf = strconv.AppendQuote(o.buf, unit)
	num := func(key string, v float64) {
		o.buf = append(o.buf, `,"`...)
		o.buf = append(o.buf, key...)
		o.buf = append(o.buf, `":`...)
		o.buf = appendPyFloat(o.buf, v)
	}
	num("avg", d.Avg)
	for i, p := range sim.Percentiles {
		num(p.Key, d.P[i])
	}
	num("min", d.Min)
	num("max", d.Max)
	num("std", d.Std)
	o.buf = append(o.buf, `,"count":`...)
	o.buf = strconv.AppendInt(o.buf, int64(d.Count), 10)
	num("sum", d.Sum)
	o.buf = append(o.buf, '}')
}

func (o *object) bytes() []byte {
	if len(o.buf) == 0 {
		return []byte("{}")
	}
	return append(o.buf, '}')
}

// appendPyFloat appends v as Python's json module writes a float (so
// readers that type-check AIPerf's export see floats, not integers): a
// fraction or exponent always present, null for NaN and ±Inf.
func appendPyFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	a := math.Abs(v)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return append(b, s...)
}

// WriteAIPerfRecords writes AIPerf's per-request profile_export.jsonl: one
// line per request with metadata (request_start_ns and request_end_ns on
// the wall clock from start, benchmark_phase) and metrics ({value, unit});
// a rejected request carries an error instead of metrics.
func WriteAIPerfRecords(w io.Writer, recs []sim.Record, start time.Time) error {
	var b []byte
	t0 := start.UnixNano()
	for i := range recs {
		r := &recs[i]
		b = append(b[:0], `{"metadata":{"x_request_id":"`...)
		b = strconv.AppendInt(b, int64(r.ID), 10)
		b = append(b, `","turn_index":0,"request_start_ns":`...)
		b = strconv.AppendInt(b, t0+int64(r.Arrival), 10)
		b = append(b, `,"request_end_ns":`...)
		b = strconv.AppendInt(b, t0+int64(r.End), 10)
		b = append(b, `,"benchmark_phase":"profiling","was_cancelled":false},`...)
		if r.Status != sim.StatusOK {
			b = append(b, `"metrics":{},"error":{"code":`...)
			b = strconv.AppendInt(b, int64(r.HTTPCode), 10)
			b = append(b, `,"type":`...)
			b = strconv.AppendQuote(b, r.Status.String())
			b = append(b, `,"message":`...)
			b = strconv.AppendQuote(b, r.Reason)
			b = append(b, "}}\n"...)
		} else {
			m := func(name, unit string, v float64, last bool) {
				b = append(b, '"')
				b = append(b, name...)
				b = append(b, `":{"value":`...)
				b = appendPyFloat(b, v)
				b = append(b, `,"unit":"`...)
				b = append(b, unit...)
				b = append(b, `"}`...)
				if !last {
					b = append(b, ',')
				}
			}
			b = append(b, `"metrics":{`...)
			count := func(name string, v int) {
				b = append(b, '"')
				b = append(b, name...)
				b = append(b, `":{"value":`...)
				b = strconv.AppendInt(b, int64(v), 10)
				b = append(b, `,"unit":"tokens"},`...)
			}
			count("input_sequence_length", r.InputTokens)
			count("output_sequence_length", r.OutputTokens)
			count("output_token_count", r.OutputTokens)
			m("time_to_first_token", "ms", r.TTFT().Ms(), false)
			m("time_to_first_output_token", "ms", r.TTFT().Ms(), false)
			if r.OutputTokens >= 2 {
				m("time_to_second_token", "ms", (r.SecondToken - r.FirstToken).Ms(), false)
				m("inter_token_latency", "ms", r.ITL()/1e6, false)
			}
			m("request_latency", "ms", r.E2E().Ms(), true)
			b = append(b, "},\"error\":null}\n"...)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
