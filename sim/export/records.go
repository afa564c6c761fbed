package export

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/routesim/routesim/sim"
)

// RequestColumns are requests.csv's columns. Times are integer ns since the
// trace start (-1 = never reached); latencies are float ms ("" = undefined).
var RequestColumns = []string{
	"id", "line", "status", "http_code", "worker", "input_tokens", "output_tokens", "cached_tokens",
	"preemptions", "arrival_ns", "routed_ns", "dispatched_ns", "first_token_ns", "second_token_ns", "end_ns",
	"ttft_ms", "itl_ms", "e2e_ms", "router_queue_ms", "attempts", "reason", "rejected_attempts",
}

// WriteRequestsCSV writes one row per record.
func WriteRequestsCSV(w io.Writer, recs []sim.Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(RequestColumns); err != nil {
		return err
	}
	row := make([]string, len(RequestColumns))
	for i := range recs {
		r := &recs[i]
		itl := ""
		if v := r.ITL(); v >= 0 {
			itl = fmtFloat(v / 1e6)
		}
		row = append(row[:0],
			strconv.Itoa(r.ID), strconv.Itoa(r.Line), r.Status.String(), strconv.Itoa(r.Status.HTTPCode()),
			strconv.Itoa(r.Worker), strconv.Itoa(r.InputTokens), strconv.Itoa(r.OutputTokens),
			strconv.Itoa(r.CachedTokens), strconv.Itoa(r.Preemptions),
			fmtTime(r.Arrival), fmtTime(r.Routed), fmtTime(r.Dispatched), fmtTime(r.FirstToken), fmtTime(r.SecondToken), fmtTime(r.End),
			msOrEmpty(r.TTFT()), itl, msOrEmpty(r.E2E()), msOrEmpty(r.QueueNs), strconv.Itoa(len(r.Attempts)+1), r.Reason, attemptLog(r.Attempts))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// attemptLog renders retried rejections as "t_ns:status" joined by ";".
func attemptLog(as []sim.Attempt) string {
	var b []byte
	for i, a := range as {
		if i > 0 {
			b = append(b, ';')
		}
		b = strconv.AppendInt(b, int64(a.At), 10)
		b = append(b, ':')
		b = append(b, a.Status.String()...)
	}
	return string(b)
}

// SummaryRow flattens a summary into ordered column names and values, the
// one row of summary.csv (and of a sweep's summary table).
func SummaryRow(s *sim.Summary) (cols, vals []string) {
	add := func(name, v string) { cols, vals = append(cols, name), append(vals, v) }
	add("offered", strconv.Itoa(s.Offered))
	add("completed", strconv.Itoa(s.Completed))
	add("completeness", fmtFloat(s.Completeness))
	for _, st := range []sim.Status{sim.StatusRejectedTooLong, sim.StatusRejectedBusy, sim.StatusRejectedBackpressure} {
		add(st.String(), strconv.Itoa(s.Rejected[st.String()]))
	}
	for _, m := range []struct {
		name string
		d    sim.Dist
	}{{"ttft_ms", s.TTFTMs}, {"ttst_ms", s.TTSTMs}, {"itl_ms", s.ITLMs}, {"e2e_ms", s.E2EMs}} {
		add(m.name+"_avg", fmtFloat(m.d.Avg))
		for i, p := range sim.Percentiles {
			add(m.name+"_"+p.Key, fmtFloat(m.d.P[i]))
		}
		add(m.name+"_max", fmtFloat(m.d.Max))
	}
	for _, key := range []string{"p50", "p90", "p99"} {
		v := ""
		if p := s.TTFTOfferedMs[key]; p != nil {
			v = fmtFloat(*p)
		}
		add("ttft_offered_ms_"+key, v)
	}
	add("duration_s", fmtFloat(s.DurationS))
	add("requests_per_s", fmtFloat(s.RequestsPerS))
	add("output_tokens_per_s", fmtFloat(s.OutputTokensPerS))
	add("prefix_cache_hit_rate", fmtFloat(s.PrefixHitRate))
	add("preemptions", strconv.Itoa(s.Preemptions))
	add("retries", strconv.Itoa(s.Retries))
	add("parked", strconv.Itoa(s.Parked))
	add("router_queue_ms_avg", fmtFloat(s.RouterQueueMs.Avg))
	add("router_queue_ms_p50", fmtFloat(s.RouterQueueMs.Pct("p50")))
	add("router_queue_ms_p99", fmtFloat(s.RouterQueueMs.Pct("p99")))
	lo, hi, mean := 1.0, 0.0, 0.0
	for _, w := range s.Workers {
		lo, hi = min(lo, w.BusyFraction), max(hi, w.BusyFraction)
		mean += w.BusyFraction / float64(len(s.Workers))
	}
	add("gpu_util_mean", fmtFloat(s.GPU.UtilMean))
	add("gpu_util_skew", fmtFloat(s.GPU.UtilSkew))
	add("gpu_power_mean_w", fmtFloat(s.GPU.PowerMeanW))
	add("gpu_power_max_w", fmtFloat(s.GPU.PowerMaxW))
	add("busy_mean", fmtFloat(mean))
	add("busy_min", fmtFloat(lo))
	add("busy_max", fmtFloat(hi))
	return cols, vals
}

// WriteSummaryCSV writes the header and one summary row.
func WriteSummaryCSV(w io.Writer, s *sim.Summary) error {
	cols, vals := SummaryRow(s)
	cw := csv.NewWriter(w)
	cw.Write(cols)
	cw.Write(vals)
	cw.Flush()
	return cw.Error()
}

func fmtTime(t sim.Time) string { return strconv.FormatInt(int64(t), 10) }

func msOrEmpty(t sim.Time) string {
	if t < 0 {
		return ""
	}
	return fmtFloat(t.Ms())
}

// fmtFloat formats v exactly and compactly; NaN (undefined) is "".
func fmtFloat(v float64) string {
	if v != v {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
