package report

import "github.com/routesim/routesim/sim"

// ColumnKind is a per-request column's type.
type ColumnKind uint8

// Column types: an integer, a float that may be undefined, a string.
const (
	ColInt ColumnKind = iota
	ColFloat
	ColString
)

// RequestColumn is one per-request column, declared once for requests.csv
// and a sweep's requests.parquet: its name, unit, type and how to read it
// from a record (Int, Float or Str, by Kind). Float's second result is
// false when the value is undefined (empty in CSV, null in Parquet).
type RequestColumn struct {
	Name  string
	Unit  string
	Kind  ColumnKind
	Int   func(*sim.Record) int64
	Float func(*sim.Record) (float64, bool)
	Str   func(*sim.Record) string
	// Sweep: also a column of a sweep's requests.parquet (which keeps
	// the columns an analysis across points needs).
	Sweep bool
}

func ms(t sim.Time) (float64, bool) { return t.Ms(), t >= 0 }

// RequestSchema is the one list of per-request columns, in output order.
var RequestSchema = []RequestColumn{
	{Name: "id", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.ID) }, Sweep: true},
	{Name: "line", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.Line) }},
	{Name: "status", Kind: ColString, Str: func(r *sim.Record) string { return r.Status.String() }, Sweep: true},
	{Name: "http_code", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.HTTPCode) }},
	{Name: "worker", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.Worker) }, Sweep: true},
	{Name: "input_tokens", Unit: "tokens", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.InputTokens) }, Sweep: true},
	{Name: "output_tokens", Unit: "tokens", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.OutputTokens) }, Sweep: true},
	{Name: "cached_tokens", Unit: "tokens", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.CachedTokens) }, Sweep: true},
	{Name: "preemptions", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.Preemptions) }},
	{Name: "arrival_ns", Unit: "ns", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.Arrival) }, Sweep: true},
	{Name: "routed_ns", Unit: "ns", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.Routed) }},
	{Name: "dispatched_ns", Unit: "ns", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.Dispatched) }},
	{Name: "first_token_ns", Unit: "ns", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.FirstToken) }, Sweep: true},
	{Name: "second_token_ns", Unit: "ns", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.SecondToken) }},
	{Name: "end_ns", Unit: "ns", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(r.End) }, Sweep: true},
	{Name: "ttft_ms", Unit: "ms", Kind: ColFloat, Float: func(r *sim.Record) (float64, bool) { return ms(r.TTFT()) }, Sweep: true},
	{Name: "itl_ms", Unit: "ms", Kind: ColFloat, Float: func(r *sim.Record) (float64, bool) { v := r.ITL(); return v / 1e6, v >= 0 }},
	{Name: "e2e_ms", Unit: "ms", Kind: ColFloat, Float: func(r *sim.Record) (float64, bool) { return ms(r.E2E()) }},
	{Name: "router_queue_ms", Unit: "ms", Kind: ColFloat, Float: func(r *sim.Record) (float64, bool) { return ms(r.QueueNs) }, Sweep: true},
	{Name: "attempts", Kind: ColInt, Int: func(r *sim.Record) int64 { return int64(len(r.Attempts) + 1) }},
	{Name: "reason", Kind: ColString, Str: func(r *sim.Record) string { return r.Reason }},
	{Name: "rejected_attempts", Kind: ColString, Str: func(r *sim.Record) string { return attemptLog(r.Attempts) }},
}
