package report

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/routesim/routesim/sim"
)

// WriteRequestsCSV writes requests.csv: one row per record, the columns
// of RequestColumns(tiered) (tiered: the run has a KV tier below the
// GPU). Times are integer ns since the trace start, latencies
// float ms; a value that does not exist (a stage never reached, the TTFT
// of a refused request) is an empty field.
func WriteRequestsCSV(w io.Writer, recs []sim.Record, tiered bool) error {
	cols := RequestColumns(tiered)
	cw := csv.NewWriter(w)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Name
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	row := make([]string, len(cols))
	for i := range recs {
		r := &recs[i]
		for k := range cols {
			row[k] = cols[k].Value(r)
		}
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

// Field is one typed, unit-carrying column value of a summary row.
type Field struct {
	Name  string
	Unit  string // "" for dimensionless counts and names
	Int   bool   // an integer column (else float64)
	Value float64
	Null  bool // undefined (e.g. a percentile past the completed share)
}

// SummaryFields flattens a summary into typed columns, in a fixed order:
// the one row of summary.csv and of a sweep's summary table.
func SummaryFields(s *sim.Summary) []Field {
	var out []Field
	i := func(name string, v int) { out = append(out, Field{Name: name, Int: true, Value: float64(v)}) }
	f := func(name, unit string, v float64) {
		out = append(out, Field{Name: name, Unit: unit, Value: v, Null: v != v})
	}
	i("offered", s.Offered)
	i("completed", s.Completed)
	f("completeness", "fraction", s.Completeness)
	for _, st := range sim.EndStatuses {
		// Column names use '_' (SQL needs no quoting); the status itself
		// keeps its name in requests.csv.
		i(strings.ReplaceAll(st.String(), "-", "_"), s.Rejected[st.String()])
	}
	for _, m := range []struct {
		name string
		d    sim.Dist
	}{{"ttft_ms", s.TTFTMs}, {"ttst_ms", s.TTSTMs}, {"itl_ms", s.ITLMs}, {"e2e_ms", s.E2EMs}} {
		f(m.name+"_avg", "ms", m.d.Avg)
		for k, p := range sim.Percentiles {
			f(m.name+"_"+p.Key, "ms", m.d.P[k])
		}
		f(m.name+"_max", "ms", m.d.Max)
	}
	for _, key := range []string{"p50", "p90", "p99"} {
		v := math.NaN()
		if p := s.TTFTOfferedMs[key]; p != nil {
			v = *p
		}
		f("ttft_offered_ms_"+key, "ms", v)
	}
	f("duration_s", "s", s.DurationS)
	f("requests_per_s", "requests/s", s.RequestsPerS)
	f("output_tokens_per_s", "tokens/s", s.OutputTokensPerS)
	f("prefix_cache_hit_rate", "fraction", s.PrefixHitRate)
	i("preemptions", s.Preemptions)
	i("retries", s.Retries)
	i("parked", s.Parked)
	f("router_queue_ms_avg", "ms", s.RouterQueueMs.Avg)
	f("router_queue_ms_p50", "ms", s.RouterQueueMs.Pct("p50"))
	f("router_queue_ms_p99", "ms", s.RouterQueueMs.Pct("p99"))
	f("gpu_util_mean", "fraction", s.GPU.UtilMean)
	f("gpu_util_skew", "fraction", s.GPU.UtilSkew)
	f("gpu_power_mean_w", "W", s.GPU.PowerMeanW)
	f("gpu_power_max_w", "W", s.GPU.PowerMaxW)
	lo, hi, mean := math.NaN(), math.NaN(), math.NaN()
	if len(s.Workers) > 0 {
		lo, hi, mean = 1, 0, 0
		for _, w := range s.Workers {
			lo, hi = min(lo, w.BusyFraction), max(hi, w.BusyFraction)
			mean += w.BusyFraction / float64(len(s.Workers))
		}
	}
	f("busy_mean", "fraction", mean)
	f("busy_min", "fraction", lo)
	f("busy_max", "fraction", hi)
	if k := s.KVTiers; k != nil {
		// A run with a KV tier below the GPU: hit rates by tier (the
		// completed requests' prompt tokens each tier served) and the bytes
		// each tier below the GPU moved, its medium in the name.
		f("kv_gpu_hit_rate", "fraction", k.GPUHitRate)
		for _, t := range k.Tiers {
			m := "kv_" + strings.ToLower(t.Medium)
			f(m+"_hit_rate", "fraction", t.HitRate)
			f(m+"_bytes_stored", "bytes", t.BytesStored)
			f(m+"_bytes_loaded", "bytes", t.BytesLoaded)
		}
	}
	if u := s.Uncertainty; u != nil {
		// --uncertainty: each banded statistic's 10th and 90th percentile
		// over the coefficient draws (null where undefined).
		for _, k := range sim.BandKeys {
			b := u.Bands[k]
			for j, end := range []string{"lo", "hi"} {
				v := math.NaN()
				if b[j] != nil {
					v = *b[j]
				}
				f(strings.ReplaceAll(k, ".", "_")+"_band_"+end, bandUnit(k), v)
			}
		}
	}
	return out
}

// String formats the value for CSV: integers plainly, floats exactly,
// undefined as "".
func (f Field) String() string {
	switch {
	case f.Null:
		return ""
	case f.Int:
		return strconv.FormatInt(int64(f.Value), 10)
	}
	return fmtFloat(f.Value)
}

// SummaryRow flattens a summary into ordered column names and values.
func SummaryRow(s *sim.Summary) (cols, vals []string) {
	for _, f := range SummaryFields(s) {
		cols, vals = append(cols, f.Name), append(vals, f.String())
	}
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

// fmtFloat formats v exactly and compactly; NaN (undefined) is "".
func fmtFloat(v float64) string {
	if v != v {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// bandUnit is the unit of a band statistic.
func bandUnit(key string) string {
	switch {
	case strings.Contains(key, "_ms"):
		return "ms"
	case key == "requests_per_s":
		return "requests/s"
	}
	return "fraction"
}
