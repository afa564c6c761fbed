package report

import (
	"strconv"

	"github.com/routesim/routesim/sim"
)

// ColumnKind is a per-request column's type.
type ColumnKind uint8

// Column types: an integer, a float, a string.
const (
	ColInt ColumnKind = iota
	ColFloat
	ColString
)

// RequestColumn is one per-request column, declared once for every
// per-request table (run's requests.csv, a sweep's requests.parquet): its
// name, unit, type and how to read it from a record (Int, Float or Str, by
// Kind). The accessor's second result is false when the value does not
// exist for that request (the TTFT of a refused request, the worker of one
// never dispatched): NULL in Parquet, an empty field in CSV, never a
// marker such as -1. Only an Optional column has such values.
type RequestColumn struct {
	Name     string
	Unit     string // "" for counts, indices and labels
	Kind     ColumnKind
	Optional bool
	Int      func(*sim.Record) (int64, bool)
	Float    func(*sim.Record) (float64, bool)
	Str      func(*sim.Record) (string, bool)

	// Tiered columns are in the tables of runs with a KV tier below the
	// GPU only (RequestColumns), so a run without one keeps its columns.
	Tiered bool
}

// ns is a time since the trace start, which does not exist when the
// request never reached that stage (the simulator's -1).
func ns(t sim.Time) (int64, bool) { return int64(t), t >= 0 }

func ms(t sim.Time) (float64, bool) { return t.Ms(), t >= 0 }

func count(v int) (int64, bool) { return int64(v), true }

// RequestSchema is the one list of per-request columns, in output order.
var RequestSchema = []RequestColumn{
	{Name: "id", Kind: ColInt, Int: func(r *sim.Record) (int64, bool) { return count(r.ID) }},
	// line: the request's 1-based line in the trace file; none for
	// generated (synthetic, sessions) workloads.
	{Name: "line", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return int64(r.Line), r.Line > 0 }},
	{Name: "status", Kind: ColString, Str: func(r *sim.Record) (string, bool) { return r.Status.String(), true }},
	// http_code: none when the client gave up before any response.
	{Name: "http_code", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return int64(r.HTTPCode), r.HTTPCode > 0 }},
	{Name: "worker", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return int64(r.Worker), r.Worker >= 0 }},
	{Name: "input_tokens", Unit: "tokens", Kind: ColInt, Int: func(r *sim.Record) (int64, bool) { return count(r.InputTokens) }},
	{Name: "output_tokens", Unit: "tokens", Kind: ColInt, Int: func(r *sim.Record) (int64, bool) { return count(r.OutputTokens) }},
	{Name: "cached_tokens", Unit: "tokens", Kind: ColInt, Int: func(r *sim.Record) (int64, bool) { return count(r.CachedTokens) }},
	// cached_{gpu,host,disk}_tokens split cached_tokens by the tier that
	// served them at the request's first admission (runs with a tier
	// below the GPU only).
	{Name: "cached_gpu_tokens", Unit: "tokens", Kind: ColInt, Tiered: true, Int: func(r *sim.Record) (int64, bool) {
		return count(r.CachedTokens - r.CachedHostTokens - r.CachedDiskTokens)
	}},
	{Name: "cached_host_tokens", Unit: "tokens", Kind: ColInt, Tiered: true, Int: func(r *sim.Record) (int64, bool) { return count(r.CachedHostTokens) }},
	{Name: "cached_disk_tokens", Unit: "tokens", Kind: ColInt, Tiered: true, Int: func(r *sim.Record) (int64, bool) { return count(r.CachedDiskTokens) }},
	{Name: "preemptions", Kind: ColInt, Int: func(r *sim.Record) (int64, bool) { return count(r.Preemptions) }},
	{Name: "arrival_ns", Unit: "ns", Kind: ColInt, Int: func(r *sim.Record) (int64, bool) { return int64(r.Arrival), true }},
	{Name: "routed_ns", Unit: "ns", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return ns(r.Routed) }},
	{Name: "dispatched_ns", Unit: "ns", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return ns(r.Dispatched) }},
	{Name: "first_token_ns", Unit: "ns", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return ns(r.FirstToken) }},
	{Name: "second_token_ns", Unit: "ns", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return ns(r.SecondToken) }},
	{Name: "end_ns", Unit: "ns", Kind: ColInt, Optional: true, Int: func(r *sim.Record) (int64, bool) { return ns(r.End) }},
	{Name: "ttft_ms", Unit: "ms", Kind: ColFloat, Optional: true, Float: func(r *sim.Record) (float64, bool) { return ms(r.TTFT()) }},
	{Name: "itl_ms", Unit: "ms", Kind: ColFloat, Optional: true, Float: func(r *sim.Record) (float64, bool) { v := r.ITL(); return v / 1e6, v >= 0 }},
	{Name: "e2e_ms", Unit: "ms", Kind: ColFloat, Optional: true, Float: func(r *sim.Record) (float64, bool) { return ms(r.E2E()) }},
	{Name: "router_queue_ms", Unit: "ms", Kind: ColFloat, Optional: true, Float: func(r *sim.Record) (float64, bool) { return ms(r.QueueNs) }},
	{Name: "attempts", Kind: ColInt, Int: func(r *sim.Record) (int64, bool) { return count(len(r.Attempts) + 1) }},
	// reason: why the request was refused or failed; none when it completed.
	{Name: "reason", Kind: ColString, Optional: true, Str: func(r *sim.Record) (string, bool) { return r.Reason, r.Reason != "" }},
	// rejected_attempts: the retried rejections, "t_ns:status" joined by
	// ";" — an empty list ("") when there were none.
	{Name: "rejected_attempts", Kind: ColString, Str: func(r *sim.Record) (string, bool) { return attemptLog(r.Attempts), true }},
}

// RequestColumns is RequestSchema for a run with (tiered) or without a
// KV tier below the GPU: without one, the Tiered columns are left out.
func RequestColumns(tiered bool) []RequestColumn {
	if tiered {
		return RequestSchema
	}
	out := make([]RequestColumn, 0, len(RequestSchema))
	for _, c := range RequestSchema {
		if !c.Tiered {
			out = append(out, c)
		}
	}
	return out
}

// Value returns column c of record r as CSV text: "" where the value does
// not exist.
func (c *RequestColumn) Value(r *sim.Record) string {
	switch c.Kind {
	case ColInt:
		if v, ok := c.Int(r); ok {
			return strconv.FormatInt(v, 10)
		}
	case ColFloat:
		if v, ok := c.Float(r); ok {
			return fmtFloat(v)
		}
	default:
		if v, ok := c.Str(r); ok {
			return v
		}
	}
	return ""
}

// NullConvention is the one rule for missing values in every table
// routesim writes (also in each Parquet file's key-value metadata).
const NullConvention = "a value that does not exist (a stage the request never reached, the TTFT of a refused request, a statistic with no data) is NULL in Parquet and an empty field in CSV; no column uses a marker value such as -1"
