package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/internal/sealed"
	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/report/parquet"
	"github.com/routesim/routesim/sim"
)

// The tables of a sweep's directory: summary.csv and summary.parquet (one
// row per point), requests.parquet (one row per request of every point,
// with per-request records), crossover.json and the manifest. The figures
// (plots/) are drawn by package plots from the same results.

// WriteOutputs writes dir's tables from results, in grid order: every
// file atomically and all of them at once (atomicfile.Dir). It returns
// the crossovers on the sweep's metric and, unless that is completeness,
// on completeness (the tables crossover.json holds).
func WriteOutputs(dir string, m *Manifest, results []Result) (cross, comp []Crossover, err error) {
	metric, err := MetricByName(m.Metric, m.SLOTTFTMs)
	if err != nil {
		return nil, nil, err
	}
	cross = Crossovers(results, m.Grid, metric, m.Bootstrap, m.Grid.BaseSeed)
	if m.Metric != "completeness" {
		cm, _ := MetricByName("completeness", 0)
		comp = Crossovers(results, m.Grid, cm, m.Bootstrap, m.Grid.BaseSeed)
	}
	d, err := atomicfile.NewDir(dir)
	if err != nil {
		return nil, nil, err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"summary.csv", func(w io.Writer) error { return writeSummaryCSV(w, m, results) }},
		{"summary.parquet", func(w io.Writer) error {
			meta := tableMeta("summary", "one row per point: its coordinates, then the summary columns of routesim run")
			if m.Uncertainty > 0 {
				meta = append(meta, parquet.KeyValue{Key: "routesim.bands", Value: bandsNote})
			}
			return parquet.Write(w, summaryColumns(m, results), meta...)
		}},
		{"crossover.json", func(w io.Writer) error {
			return report.WriteJSON(w, map[string]any{"metric": m.Metric, "crossovers": cross, "completeness": comp})
		}},
		{"manifest.json", func(w io.Writer) error {
			b, err := sealed.MarshalIndent(m)
			if err == nil {
				_, err = w.Write(b)
			}
			return err
		}},
	}
	if m.PerRequest {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{"requests.parquet", func(w io.Writer) error {
			return parquet.Write(w, requestColumns(m, results), tableMeta("requests", "one row per request of every point: its coordinates, then the columns of routesim run's requests.csv")...)
		}})
	}
	for _, f := range files {
		w, err := d.Create(f.name)
		if err == nil {
			err = f.write(w)
		}
		if err != nil {
			d.Abort()
			return nil, nil, fmt.Errorf("%s/%s: %w", dir, f.name, err)
		}
	}
	if err := d.Commit(); err != nil {
		return nil, nil, err
	}
	return cross, comp, nil
}

// AxisNames are the point's coordinate columns, the first columns of
// every sweep table, in order.
func AxisNames() []string {
	out := make([]string, len(pointAxes))
	for i, a := range pointAxes {
		out[i] = a.name
	}
	return out
}

// pointAxis is one coordinate of a point, a column of every sweep table.
// Every axis is a column whether or not it was swept (constant then, null
// where the workload has no such setting), so tables of different sweeps
// concatenate.
type pointAxis struct {
	name, unit string
	kind       parquet.Kind
	// value returns the coordinate as an integer, a float or a string
	// (by kind); ok is false for null.
	value func(m *Manifest, p Point) (i int64, f float64, s string, ok bool)
}

var pointAxes = []pointAxis{
	{"n", "", parquet.Int64, func(_ *Manifest, p Point) (int64, float64, string, bool) { return int64(p.N), 0, "", true }},
	{"policy", "", parquet.String, func(_ *Manifest, p Point) (int64, float64, string, bool) { return 0, 0, p.Policy, true }},
	{"seed", "", parquet.Int64, func(_ *Manifest, p Point) (int64, float64, string, bool) {
		return int64(p.Seed), 0, "", true
	}},
	{"rate_scale", "", parquet.Float64, func(_ *Manifest, p Point) (int64, float64, string, bool) { return 0, p.RateScale, "", true }},
	{"concurrency", "users", parquet.Int64, func(m *Manifest, p Point) (int64, float64, string, bool) {
		if p.Concurrency > 0 {
			return int64(p.Concurrency), 0, "", true
		}
		return int64(m.Base.Sessions.Concurrency), 0, "", m.Base.Workload == "sessions"
	}},
	{"rate_per_s", "requests/s", parquet.Float64, func(m *Manifest, p Point) (int64, float64, string, bool) {
		if p.Rate > 0 {
			return 0, float64(p.Rate), "", true
		}
		return 0, m.Base.Synthetic.RatePerS, "", m.Base.Workload == "synthetic"
	}},
}

// axisColumns are the empty coordinate columns of a table.
func axisColumns() []parquet.Column {
	cols := make([]parquet.Column, len(pointAxes))
	for i, a := range pointAxes {
		cols[i] = parquet.Column{Name: a.name, Unit: a.unit, Kind: a.kind, Null: []bool{}}
	}
	return cols
}

// appendAxes adds point p's coordinates to the first columns of cols.
func appendAxes(cols []parquet.Column, m *Manifest, p Point) {
	for k, a := range pointAxes {
		i, f, s, ok := a.value(m, p)
		c := &cols[k]
		c.Null = append(c.Null, !ok)
		switch a.kind {
		case parquet.Int64:
			c.Ints = append(c.Ints, i)
		case parquet.Float64:
			c.Floats = append(c.Floats, f)
		default:
			c.Strings = append(c.Strings, s)
		}
	}
}

func writeSummaryCSV(w io.Writer, m *Manifest, results []Result) error {
	cw := csv.NewWriter(w)
	for i, r := range results {
		fields := report.SummaryFields(&r.Summary)
		if i == 0 {
			var head []string
			for _, a := range pointAxes {
				head = append(head, a.name)
			}
			for _, f := range fields {
				head = append(head, f.Name)
			}
			cw.Write(head)
		}
		var row []string
		for _, a := range pointAxes {
			iv, fv, sv, ok := a.value(m, r.Point)
			switch {
			case !ok:
				row = append(row, "")
			case a.kind == parquet.Int64:
				row = append(row, strconv.FormatInt(iv, 10))
			case a.kind == parquet.Float64:
				row = append(row, strconv.FormatFloat(fv, 'g', -1, 64))
			default:
				row = append(row, sv)
			}
		}
		for _, f := range fields {
			row = append(row, f.String())
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// summaryColumns: the point's coordinates, then every summary field with
// its type and unit.
func summaryColumns(m *Manifest, results []Result) []parquet.Column {
	cols := axisColumns()
	na := len(cols)
	for ri, r := range results {
		appendAxes(cols, m, r.Point)
		for fi, f := range report.SummaryFields(&r.Summary) {
			if ri == 0 {
				kind := parquet.Float64
				if f.Int {
					kind = parquet.Int64
				}
				cols = append(cols, parquet.Column{Name: f.Name, Unit: f.Unit, Kind: kind, Null: make([]bool, 0, len(results))})
			}
			c := &cols[na+fi]
			c.Null = append(c.Null, f.Null)
			if c.Kind == parquet.Int64 {
				c.Ints = append(c.Ints, int64(f.Value))
			} else {
				c.Floats = append(c.Floats, f.Value)
			}
		}
	}
	return cols
}

// bandsNote says what a summary's band columns and point estimates are.
const bandsNote = "each *_band_lo and *_band_hi column is the 10th and 90th percentile of that statistic over the point's --uncertainty coefficient draws; " +
	"the statistic's own column is the run at the profile's own coefficients (a calibrated profile's MAP estimate, else the centre of its priors), which can lie outside the band: " + sim.WhyOutside

// tableMeta is a sweep table's key-value metadata: what it is, and the
// null convention (package parquet adds each column's unit).
func tableMeta(table, rows string) []parquet.KeyValue {
	return []parquet.KeyValue{
		{Key: "routesim.table", Value: table},
		{Key: "routesim.rows", Value: rows},
		{Key: "routesim.nulls", Value: report.NullConvention},
	}
}

// requestColumns: one row per request of every point — the point's axes,
// then requests.csv's columns (report.RequestColumns: the tier columns
// when the sweep's runs have a KV tier below the GPU; every point shares
// the engine settings).
func requestColumns(m *Manifest, results []Result) []parquet.Column {
	tiered := false
	for i := range results {
		tiered = tiered || results[i].Summary.KVTiers != nil
	}
	schema := report.RequestColumns(tiered)
	c := axisColumns()
	na := len(c)
	for _, rc := range schema {
		col := parquet.Column{Name: rc.Name, Unit: rc.Unit}
		switch rc.Kind {
		case report.ColInt:
			col.Kind = parquet.Int64
		case report.ColFloat:
			col.Kind = parquet.Float64
		default:
			col.Kind = parquet.String
		}
		if rc.Optional {
			col.Null = []bool{}
		}
		c = append(c, col)
	}
	for _, r := range results {
		for i := range r.Records {
			rec := &r.Records[i]
			appendAxes(c, m, r.Point)
			for k := range schema {
				rc, col := &schema[k], &c[na+k]
				var ok bool
				switch rc.Kind {
				case report.ColInt:
					var v int64
					v, ok = rc.Int(rec)
					col.Ints = append(col.Ints, v)
				case report.ColFloat:
					var v float64
					v, ok = rc.Float(rec)
					col.Floats = append(col.Floats, v)
				default:
					var v string
					v, ok = rc.Str(rec)
					col.Strings = append(col.Strings, v)
				}
				if rc.Optional {
					col.Null = append(col.Null, !ok)
				}
			}
		}
	}
	return c
}
