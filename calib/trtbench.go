package calib

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// TRTBenchRow is one row of NVIDIA's published TensorRT-LLM throughput
// tables (docs/source/performance/perf-overview.md): a trtllm-bench
// throughput run of one model on one TP group at one ISL/OSL.
type TRTBenchRow struct {
	Line  int    // line of the CSV file
	Table string // which published table (e.g. v1.0), for reports
	GPU   string
	Model string // catalogue name of the architecture
	// HFModel is the checkpoint the table names (e.g.
	// nvidia/Llama-3.3-70B-Instruct-FP8).
	HFModel   string
	Precision string // fp8 or bf16 weights (and KV: FP8 checkpoints quantise it)
	TP        int
	ISL, OSL  int
	// Requests is the dataset's size ($num_requests for this ISL/OSL).
	Requests int
	// TokensPerS is the table's "Total Output Throughput (tokens/sec)",
	// per system (the TP group), not per GPU.
	TokensPerS float64
	// KVFraction is --kv_cache_free_gpu_mem_fraction (0.95 "in many
	// cases", else 0.90).
	KVFraction float64
	Source     string
}

// Arm names the row as reports show it: "ISL/OSL".
func (r TRTBenchRow) Arm() string { return strconv.Itoa(r.ISL) + "/" + strconv.Itoa(r.OSL) }

// trtbenchFields are the columns a table file needs.
var trtbenchFields = []string{"table", "gpu", "model", "hf_model", "precision", "tp", "isl", "osl",
	"num_requests", "output_tok_s", "kv_cache_free_gpu_mem_fraction", "source"}

// ReadTRTBench reads a CSV of published trtllm-bench rows (one row per
// GPU, model, TP and ISL/OSL; columns trtbenchFields, in any order). A
// file over inputerr.MaxDataFile is refused; every error names the file,
// line and field.
func ReadTRTBench(r io.Reader, name string) ([]TRTBenchRow, error) {
	b, err := inputerr.ReadAll(r, name, inputerr.MaxDataFile)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.Comment = '#'
	header, err := cr.Read()
	if err != nil {
		return nil, errf(name, 1, "", "no header: %v", err)
	}
	hline, _ := cr.FieldPos(0)
	col, err := headerColumns(name, hline, header, trtbenchFields, "a trtllm-bench table needs")
	if err != nil {
		return nil, err
	}
	var rows []TRTBenchRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, errf(name, pe.Line, "", "%v", pe.Err)
			}
			return nil, errf(name, 0, "", "%v", err)
		}
		line, _ := cr.FieldPos(0)
		get := func(f string) string {
			if i, ok := col[f]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		row, err := parseTRTBench(get, name, line)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, errf(name, hline, "", "no rows")
	}
	return rows, nil
}

// parseTRTBench checks one row.
func parseTRTBench(get func(string) string, name string, line int) (TRTBenchRow, error) {
	r := TRTBenchRow{Line: line, Table: get("table"), GPU: get("gpu"), Model: get("model"), HFModel: get("hf_model"),
		Precision: strings.ToLower(get("precision")), Source: get("source")}
	for _, f := range []struct{ key, s string }{{"table", r.Table}, {"gpu", r.GPU}, {"model", r.Model}, {"hf_model", r.HFModel}, {"source", r.Source}} {
		if f.s == "" {
			return r, errf(name, line, f.key, "empty")
		}
	}
	if r.Precision != "fp8" && r.Precision != "bf16" {
		return r, errf(name, line, "precision", "%q: want fp8 or bf16", r.Precision)
	}
	ints := []struct {
		key    string
		v      *int
		lo, hi int
	}{{"tp", &r.TP, 1, 64}, {"isl", &r.ISL, 1, 1 << 20}, {"osl", &r.OSL, 1, 1 << 20}, {"num_requests", &r.Requests, 1, 1_000_000}}
	for _, f := range ints {
		s := get(f.key)
		v, err := strconv.Atoi(s)
		if err != nil {
			return r, errf(name, line, f.key, "%q is not an integer", s)
		}
		if v < f.lo || v > f.hi {
			return r, errf(name, line, f.key, "%d must be in [%d, %d]", v, f.lo, f.hi)
		}
		*f.v = v
	}
	s := strings.ReplaceAll(get("output_tok_s"), ",", "")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) || v > 1e9 {
		return r, errf(name, line, "output_tok_s", "%q must be a finite number in (0, 1e9]", get("output_tok_s"))
	}
	r.TokensPerS = v
	s = get("kv_cache_free_gpu_mem_fraction")
	v, err = strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0 && v <= 1) {
		return r, errf(name, line, "kv_cache_free_gpu_mem_fraction", "%q must be a number in (0, 1]", s)
	}
	r.KVFraction = v
	return r, nil
}
