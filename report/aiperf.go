package report

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strconv"

	"github.com/routesim/routesim/sim"
)

// AIPerfSchemaVersion is the AIPerf summary schema the export follows
// (AIPerf 0.8.0 writes "1.1").
const AIPerfSchemaVersion = "1.1"

// WriteAIPerf writes the run in the shape of AIPerf 0.8's
// profile_export_aiperf.json: the same metric names, units, statistics
// (avg, p1…p99, min, max, std, count, sum) and error_summary. As in AIPerf,
// latency metrics cover successful requests only; failures are counted in
// error_request_count and error_summary. generator names routesim.
func WriteAIPerf(w io.Writer, recs []sim.Record, s *sim.Summary, generator string) error {
	var ttft, ttst, itl, perUser, e2e, isl, osl []float64
	totalISL, totalOSL := 0, 0
	errs := map[[3]string]int{}
	for i := range recs {
		r := &recs[i]
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
		if r.OutputTokens >= 2 {
			ms := r.ITL() / 1e6
			itl = append(itl, ms)
			ttst = append(ttst, (r.SecondToken - r.FirstToken).Ms())
			if ms > 0 {
				perUser = append(perUser, 1000/ms)
			}
		}
	}
	var o object
	o.raw("schema_version", strconv.Quote(AIPerfSchemaVersion))
	o.raw("generator", strconv.Quote(generator))
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
	o.scalar("total_output_tokens", "tokens", float64(totalOSL))
	o.scalar("benchmark_duration", "sec", s.DurationS)
	o.scalar("total_isl", "tokens", float64(totalISL))
	o.scalar("total_osl", "tokens", float64(totalOSL))
	o.raw("error_summary", errorSummary(errs))
	o.raw("was_cancelled", "false")
	b := o.bytes()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, b, "", "  "); err != nil {
		return err
	}
	pretty.WriteByte('\n')
	_, err := w.Write(pretty.Bytes())
	return err
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
	o.buf = sim.AppendJSONFloat(o.buf, v)
	o.buf = append(o.buf, '}')
}

func (o *object) dist(k, unit string, x []float64) {
	d := sim.NewDist(x)
	inner, _ := d.MarshalJSON()
	o.key(k)
	o.buf = append(o.buf, `{"unit":`...)
	o.buf = strconv.AppendQuote(o.buf, unit)
	o.buf = append(o.buf, ',')
	o.buf = append(o.buf, inner[1:]...)
}

func (o *object) bytes() []byte {
	if len(o.buf) == 0 {
		return []byte("{}")
	}
	return append(o.buf, '}')
}

// WriteAIPerfRecords writes AIPerf's per-request profile_export.jsonl: one
// line per request with metadata (request_start_ns, request_end_ns,
// benchmark_phase) and metrics ({value, unit}); a rejected request carries
// an error instead of metrics.
func WriteAIPerfRecords(w io.Writer, recs []sim.Record) error {
	var b []byte
	for i := range recs {
		r := &recs[i]
		b = append(b[:0], `{"metadata":{"x_request_id":"`...)
		b = strconv.AppendInt(b, int64(r.ID), 10)
		b = append(b, `","turn_index":0,"request_start_ns":`...)
		b = strconv.AppendInt(b, int64(r.Arrival), 10)
		b = append(b, `,"request_end_ns":`...)
		b = strconv.AppendInt(b, int64(r.End), 10)
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
				b = sim.AppendJSONFloat(b, v)
				b = append(b, `,"unit":"`...)
				b = append(b, unit...)
				b = append(b, `"}`...)
				if !last {
					b = append(b, ',')
				}
			}
			b = append(b, `"metrics":{`...)
			m("input_sequence_length", "tokens", float64(r.InputTokens), false)
			m("output_sequence_length", "tokens", float64(r.OutputTokens), false)
			m("output_token_count", "tokens", float64(r.OutputTokens), false)
			m("time_to_first_token", "ms", r.TTFT().Ms(), false)
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
