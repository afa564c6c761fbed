package calib

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// MLEnergyRow is one ML.ENERGY Benchmark v3 configuration: a vLLM server
// at one --max-num-seqs, loaded closed-loop (every request sent at t = 0)
// and measured over its steady state. Field meanings follow the
// leaderboard's configurations[] (ml-energy/data records/runs.py): the
// batch is the mean of vllm:num_requests_running, power is per GPU, the
// ITL percentiles are client-side over the whole run.
type MLEnergyRow struct {
	Line        int // line of the CSV file, or 1-based configuration index of a JSON file
	Task        string
	ModelID     string // Hugging Face id, e.g. Qwen/Qwen3-8B
	GPU         string
	NumGPUs     int
	TP          int
	MaxNumSeqs  int
	AvgBatch    float64
	PowerW      float64 // per GPU
	MedianITLMs float64
	P90ITLMs    float64
	P99ITLMs    float64
	TokensPerS  float64 // output tokens per second
	AvgOutput   float64 // output tokens per completed request
	Precision   string  // weight_precision: bfloat16, fp8
	// Requests is how many requests the run sent (optional column
	// num_requests; 0 = the benchmark's default 1,024).
	Requests int
}

// requests is the run's request count.
func (r *MLEnergyRow) requests() int {
	if r.Requests > 0 {
		return r.Requests
	}
	return 1024
}

// mlenergyFields are the columns (CSV) or keys (JSON) a row needs.
var mlenergyFields = []string{"task", "model_id", "gpu_model", "num_gpus", "tensor_parallel", "max_num_seqs",
	"avg_batch_size", "avg_power_watts", "median_itl_ms", "p90_itl_ms", "p99_itl_ms",
	"output_throughput_tokens_per_sec", "avg_output_len", "weight_precision"}

// ReadMLEnergy reads ML.ENERGY rows from the flat CSV (llm_runs_flat.csv:
// one row per configuration) or a leaderboard task file
// (tasks/<task>.json, {"task": …, "configurations": [...]}); the format is
// told by the first non-space byte. Every error names the file, line (or
// configuration) and field; a file over inputerr.MaxDataFile is refused.
func ReadMLEnergy(r io.Reader, name string) ([]MLEnergyRow, error) {
	b, err := inputerr.ReadAll(r, name, inputerr.MaxDataFile)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return readMLEnergyJSON(b, name)
	}
	return readMLEnergyCSV(b, name)
}

func readMLEnergyCSV(b []byte, name string) ([]MLEnergyRow, error) {
	cr := csv.NewReader(bytes.NewReader(b))
	header, err := cr.Read()
	if err != nil {
		return nil, errf(name, 1, "", "no header: %v", err)
	}
	col, err := headerColumns(name, 1, header, mlenergyFields, "an ML.ENERGY llm_runs_flat.csv needs")
	if err != nil {
		return nil, err
	}
	var rows []MLEnergyRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errf(name, line, "", "%v", err)
		}
		get := func(f string) string {
			if i, ok := col[f]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		row, err := parseMLEnergy(get, name, line)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, errf(name, 1, "", "no rows")
	}
	return rows, nil
}

func readMLEnergyJSON(b []byte, name string) ([]MLEnergyRow, error) {
	var doc struct {
		Task           string                       `json:"task"`
		Configurations []map[string]json.RawMessage `json:"configurations"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, errf(name, 0, "", "%v", err)
	}
	if len(doc.Configurations) == 0 {
		return nil, errf(name, 0, "configurations", "no configurations")
	}
	var rows []MLEnergyRow
	for i, c := range doc.Configurations {
		get := func(f string) string {
			if f == "task" && c[f] == nil {
				return doc.Task
			}
			raw, ok := c[f]
			if !ok {
				return ""
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
			return strings.TrimSpace(string(raw))
		}
		row, err := parseMLEnergy(get, name, i+1)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// parseMLEnergy checks one configuration; at is its line or index.
func parseMLEnergy(get func(string) string, name string, at int) (MLEnergyRow, error) {
	r := MLEnergyRow{Line: at, Task: get("task"), ModelID: get("model_id"), GPU: get("gpu_model"), Precision: get("weight_precision")}
	for _, f := range []struct {
		key string
		s   string
	}{{"task", r.Task}, {"model_id", r.ModelID}, {"gpu_model", r.GPU}} {
		if f.s == "" || f.s == "null" {
			return r, errf(name, at, f.key, "empty")
		}
	}
	ints := []struct {
		key    string
		v      *int
		lo, hi int
	}{{"num_gpus", &r.NumGPUs, 1, 1024}, {"tensor_parallel", &r.TP, 1, 1024}, {"max_num_seqs", &r.MaxNumSeqs, 1, 1 << 20}}
	for _, f := range ints {
		s := get(f.key)
		v, err := strconv.Atoi(s)
		if err != nil {
			// JSON numbers may be written 8.0.
			x, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || x != math.Trunc(x) || math.Abs(x) > 1<<30 {
				return r, errf(name, at, f.key, "%q is not an integer", s)
			}
			v = int(x)
		}
		if v < f.lo || v > f.hi {
			return r, errf(name, at, f.key, "%d must be in [%d, %d]", v, f.lo, f.hi)
		}
		*f.v = v
	}
	if s := get("num_requests"); s != "" && s != "null" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 1_000_000 {
			return r, errf(name, at, "num_requests", "%q must be an integer in [1, 1000000]", s)
		}
		r.Requests = v
	}
	floats := []struct {
		key string
		v   *float64
	}{{"avg_batch_size", &r.AvgBatch}, {"avg_power_watts", &r.PowerW}, {"median_itl_ms", &r.MedianITLMs},
		{"p90_itl_ms", &r.P90ITLMs}, {"p99_itl_ms", &r.P99ITLMs}, {"output_throughput_tokens_per_sec", &r.TokensPerS},
		{"avg_output_len", &r.AvgOutput}}
	for _, f := range floats {
		s := get(f.key)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) || v > 1e9 {
			return r, errf(name, at, f.key, "%q must be a finite number in (0, 1e9]", s)
		}
		*f.v = v
	}
	if r.AvgBatch > float64(r.MaxNumSeqs)*1.001 {
		return r, errf(name, at, "avg_batch_size", "%g exceeds max_num_seqs %d", r.AvgBatch, r.MaxNumSeqs)
	}
	if r.TP > r.NumGPUs {
		return r, errf(name, at, "tensor_parallel", "%d exceeds num_gpus %d", r.TP, r.NumGPUs)
	}
	// avg_power_watts is the total over the configuration's GPUs.
	r.PowerW /= float64(r.NumGPUs)
	return r, nil
}

// OSLHistogram is an output-length distribution as the leaderboard's
// model files give it: Bins are the 51 edges, Counts the 50 bins.
type OSLHistogram struct {
	Bins   []float64 `json:"bins"`
	Counts []float64 `json:"counts"`
}

// ReadOSLHistogram reads output_length_distribution from a leaderboard
// model file (models/<org>__<model>__<task>.json), or a file holding just
// {"bins": …, "counts": …}; at most inputerr.MaxDataFile bytes.
func ReadOSLHistogram(r io.Reader, name string) (*OSLHistogram, error) {
	var doc struct {
		OSLHistogram
		Dist *OSLHistogram `json:"output_length_distribution"`
	}
	dec := json.NewDecoder(inputerr.Reader(r, name, inputerr.MaxDataFile))
	if err := dec.Decode(&doc); err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return nil, ie
		}
		return nil, errf(name, 0, "", "%v", err)
	}
	h := &doc.OSLHistogram
	if doc.Dist != nil {
		h = doc.Dist
	}
	if err := h.validate(); err != nil {
		return nil, errf(name, 0, "output_length_distribution", "%v", err)
	}
	return h, nil
}

func (h *OSLHistogram) validate() error {
	if len(h.Counts) == 0 || len(h.Bins) != len(h.Counts)+1 {
		return fmt.Errorf("need n counts and n+1 bin edges (have %d and %d)", len(h.Counts), len(h.Bins))
	}
	total := 0.0
	for i, e := range h.Bins {
		if !(e >= 0) || math.IsInf(e, 0) || e > 1e7 || (i > 0 && e <= h.Bins[i-1]) {
			return fmt.Errorf("bins[%d] = %g: edges must be finite, ≥ 0 and increasing", i, e)
		}
	}
	for i, c := range h.Counts {
		if !(c >= 0) || math.IsInf(c, 0) {
			return fmt.Errorf("counts[%d] = %g must be a finite number ≥ 0", i, c)
		}
		total += c
	}
	if total <= 0 {
		return fmt.Errorf("counts are all 0")
	}
	return nil
}

// Mean is the histogram's mean (bin midpoints).
func (h *OSLHistogram) Mean() float64 {
	s, n := 0.0, 0.0
	for i, c := range h.Counts {
		s += c * (h.Bins[i] + h.Bins[i+1]) / 2
		n += c
	}
	return s / n
}
