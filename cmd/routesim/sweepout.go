package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/routesim/routesim/internal/atomicfile"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/routesim/routesim/plots"
	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/report/parquet"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sweep"
)

// sweepManifest is everything that determines a sweep's results; it
// leaves out how the work was split (jobs, shards), so any split of the
// same sweep writes the same bytes.
type sweepManifest struct {
	Tool       string        `json:"tool"`
	Version    string        `json:"version"`
	Command    string        `json:"command"`
	Base       scenario.Spec `json:"base"`
	Grid       sweep.Grid    `json:"grid"`
	Metric     string        `json:"metric"`
	SLOTTFTMs  float64       `json:"slo_ttft_ms"`
	Bootstrap  int           `json:"bootstrap"`
	PerRequest bool          `json:"per_request"`
	// Uncertainty is --uncertainty (coefficient draws per point).
	Uncertainty int        `json:"uncertainty,omitempty"`
	Profile     string     `json:"profile"`
	Meta        plots.Meta `json:"meta"`
}

func readManifest(dir string) (*sweepManifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a sweep output directory: %w", dir, err)
	}
	var m sweepManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s/manifest.json: %w", dir, err)
	}
	if m.Command != "sweep" {
		return nil, fmt.Errorf("%s/manifest.json: not a sweep manifest", dir)
	}
	return &m, nil
}

// writeSweepOutputs writes summary.csv/.parquet, requests.parquet (with
// per-request records), crossover.json, manifest.json and plots/ from the
// results, each file atomically. It returns the crossover tables.
func writeSweepOutputs(dir string, m *sweepManifest, results []sweep.Result) ([]sweep.Crossover, []sweep.Crossover, error) {
	metric, err := sweep.MetricByName(m.Metric, m.SLOTTFTMs)
	if err != nil {
		return nil, nil, err
	}
	cross := sweep.Crossovers(results, m.Grid, metric, m.Bootstrap, m.Grid.BaseSeed)
	var comp []sweep.Crossover
	if m.Metric != "completeness" {
		cm, _ := sweep.MetricByName("completeness", 0)
		comp = sweep.Crossovers(results, m.Grid, cm, m.Bootstrap, m.Grid.BaseSeed)
	}
	d, err := atomicfile.NewDir(dir)
	if err != nil {
		return nil, nil, err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"summary.csv", func(w io.Writer) error { return writeSummaryCSV(w, results) }},
		{"summary.parquet", func(w io.Writer) error { return parquet.Write(w, summaryColumns(results)) }},
		{"crossover.json", func(w io.Writer) error {
			return writeJSON(w, map[string]any{"metric": m.Metric, "crossovers": cross, "completeness": comp})
		}},
		{"manifest.json", func(w io.Writer) error { return writeJSON(w, m) }},
	}
	if m.PerRequest {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{"requests.parquet", func(w io.Writer) error { return parquet.Write(w, requestColumns(results)) }})
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
	figs, err := plots.All(results, m.Grid, metric, m.Meta)
	if err != nil {
		return nil, nil, err
	}
	return cross, comp, plots.Save(filepath.Join(dir, "plots"), figs)
}

var pointColumns = []string{"n", "policy", "seed", "rate_scale"}

func writeSummaryCSV(w io.Writer, results []sweep.Result) error {
	cw := csv.NewWriter(w)
	for i, r := range results {
		fields := report.SummaryFields(&r.Summary)
		if i == 0 {
			head := append([]string{}, pointColumns...)
			for _, f := range fields {
				head = append(head, f.Name)
			}
			cw.Write(head)
		}
		row := []string{strconv.Itoa(r.Point.N), r.Point.Policy, strconv.FormatUint(r.Point.Seed, 10), strconv.FormatFloat(r.Point.RateScale, 'g', -1, 64)}
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
func summaryColumns(results []sweep.Result) []parquet.Column {
	cols := []parquet.Column{{Name: "n", Kind: parquet.Int64}, {Name: "policy", Kind: parquet.String},
		{Name: "seed", Kind: parquet.Int64}, {Name: "rate_scale", Kind: parquet.Float64}}
	for ri, r := range results {
		cols[0].Ints = append(cols[0].Ints, int64(r.Point.N))
		cols[1].Strings = append(cols[1].Strings, r.Point.Policy)
		cols[2].Ints = append(cols[2].Ints, int64(r.Point.Seed))
		cols[3].Floats = append(cols[3].Floats, r.Point.RateScale)
		for fi, f := range report.SummaryFields(&r.Summary) {
			if ri == 0 {
				kind := parquet.Float64
				if f.Int {
					kind = parquet.Int64
				}
				cols = append(cols, parquet.Column{Name: f.Name, Unit: f.Unit, Kind: kind, Null: make([]bool, 0, len(results))})
			}
			c := &cols[4+fi]
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

// requestColumns: one row per request of every point — the point's axes,
// then report.RequestSchema's sweep columns.
func requestColumns(results []sweep.Result) []parquet.Column {
	c := []parquet.Column{
		{Name: "n", Kind: parquet.Int64}, {Name: "policy", Kind: parquet.String}, {Name: "seed", Kind: parquet.Int64},
		{Name: "rate_scale", Kind: parquet.Float64},
	}
	var schema []report.RequestColumn
	for _, rc := range report.RequestSchema {
		if !rc.Sweep {
			continue
		}
		schema = append(schema, rc)
		col := parquet.Column{Name: rc.Name, Unit: rc.Unit}
		switch rc.Kind {
		case report.ColInt:
			col.Kind = parquet.Int64
		case report.ColFloat:
			col.Kind, col.Null = parquet.Float64, []bool{}
		default:
			col.Kind = parquet.String
		}
		c = append(c, col)
	}
	for _, r := range results {
		for i := range r.Records {
			rec := &r.Records[i]
			c[0].Ints = append(c[0].Ints, int64(r.Point.N))
			c[1].Strings = append(c[1].Strings, r.Point.Policy)
			c[2].Ints = append(c[2].Ints, int64(r.Point.Seed))
			c[3].Floats = append(c[3].Floats, r.Point.RateScale)
			for k, rc := range schema {
				col := &c[4+k]
				switch rc.Kind {
				case report.ColInt:
					col.Ints = append(col.Ints, rc.Int(rec))
				case report.ColFloat:
					v, ok := rc.Float(rec)
					col.Floats = append(col.Floats, v)
					col.Null = append(col.Null, !ok)
				default:
					col.Strings = append(col.Strings, rc.Str(rec))
				}
			}
		}
	}
	return c
}
