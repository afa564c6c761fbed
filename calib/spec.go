package calib

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/workload"
)

// Run is one measured run: how to re-simulate it and where its files are.
// Paths are relative to the spec file. Runs sharing an Arm are repetitions
// of one setup; their statistics are averaged and their spread sets the
// noise σ.
type Run struct {
	Name          string        `json:"name"`
	Arm           string        `json:"arm"`
	Setup         scenario.Spec `json:"setup"`
	AIPerfSummary string        `json:"aiperf_summary,omitempty"`
	// Measured is a derived-statistics file (MeasuredFile): the figures a
	// fit compares, with their citation, instead of the original exports.
	Measured string `json:"measured,omitempty"`
	// VLLMLog is a vLLM start-up log; its "GPU KV cache size" sets the
	// run's KV capacity (--kv-cache-tokens).
	VLLMLog       string `json:"vllm_log,omitempty"`
	AIPerfRecords string `json:"aiperf_records,omitempty"`
	NvidiaSmi     string `json:"nvidia_smi,omitempty"`
	Inferscope    string `json:"inferscope,omitempty"`
	// VLLMBench is a `vllm bench serve --save-result` file: one load
	// point whose client settings (prompts, rate, burstiness, concurrency
	// bound, lengths) replace the setup's workload; the setup gives the
	// deployment and engine.
	VLLMBench string `json:"vllm_bench,omitempty"`
	// LMBench is an LMBench multi-round QA summary CSV: one load point,
	// re-simulated as VLLMBench is (its users' conversations replayed).
	LMBench string `json:"lmbench,omitempty"`
	// GuideLLM is a GuideLLM JSON report and GuideLLMBenchmark the index
	// of the benchmark (the load point) in it, re-simulated as its
	// strategy ran.
	GuideLLM          string `json:"guidellm,omitempty"`
	GuideLLMBenchmark int    `json:"guidellm_benchmark,omitempty"`
	// NVMLWindowS is how long the GPU sampler ran from the first request
	// (0 = the sampler's own window, or the run's length).
	NVMLWindowS float64 `json:"nvml_window_s,omitempty"`
}

// Spec is a calibration: measured runs of one deployment.
type Spec struct {
	Name string `json:"name"`
	// Base is a profile file to start from and regularise toward; empty
	// means the deployment's built-in profile or its roofline estimate.
	Base string `json:"base_profile,omitempty"`
	// Note is written into the fitted profile's note: what the fit rests
	// on and what it leaves unpinned, for readers of the profile.
	Note string `json:"note,omitempty"`
	// Options are the fit's settings, so that the spec alone reproduces
	// the profile (calibrate's flags override them).
	Options SpecOptions `json:"options,omitempty"`
	Runs    []Run       `json:"runs"`
	dir     string
	// file and lines place problems found after reading (a setup that
	// does not build) at the spec's line for the field.
	file  string
	lines map[string]int
}

// SpecOptions are the fit settings a spec may fix; zero values mean the
// defaults (calibrate's flag defaults).
type SpecOptions struct {
	MaxEvals    int      `json:"max_evals,omitempty"`
	Fit         []string `json:"fit,omitempty"`
	PriorWeight *float64 `json:"prior_weight,omitempty"`
	ModelError  float64  `json:"model_error,omitempty"`
}

// LoadSpec reads a spec (at most inputerr.MaxSmallFile bytes); each
// run's setup starts from scenario.Defaults(). Every problem is reported
// at once, each as file:line: field: problem.
func LoadSpec(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := inputerr.ReadAll(f, path, inputerr.MaxSmallFile)
	if err != nil {
		return nil, err
	}
	return parseSpec(b, path)
}

// parseSpec decodes and validates a spec read from path.
func parseSpec(b []byte, path string) (*Spec, error) {
	var shape struct {
		Name    string            `json:"name"`
		Base    string            `json:"base_profile"`
		Note    string            `json:"note"`
		Options SpecOptions       `json:"options"`
		Runs    []json.RawMessage `json:"runs"`
	}
	lines := keyLines(b)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&shape); err != nil {
		return nil, decodeError(path, b, lines, "", err)
	}
	s := &Spec{Name: shape.Name, Base: shape.Base, Note: shape.Note, Options: shape.Options, dir: filepath.Dir(path), file: path, lines: lines}
	for i, raw := range shape.Runs {
		r := Run{Setup: scenario.Defaults()}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&r); err != nil {
			return nil, decodeError(path, b, lines, fmt.Sprintf("runs[%d]", i), err)
		}
		// A trace file, like the run's other files, is relative to the spec.
		if t := r.Setup.Trace; t != "" && !slices.Contains(workload.EmbeddedNames(), t) {
			r.Setup.Trace = s.path(t)
		}
		s.Runs = append(s.Runs, r)
	}
	if err := s.Validate(); err != nil {
		return nil, positioned(path, lines, err)
	}
	return s, nil
}

// decodeError positions a JSON decoding error of the document (at "") or
// of one of its parts (at "runs[2]"): at the field it names, else at its
// byte offset in the document, else at the part.
func decodeError(path string, b []byte, lines map[string]int, at string, err error) error {
	join := func(f string) string {
		switch {
		case at == "":
			return f
		case f == "":
			return at
		}
		return at + "." + f
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && at == "": // a part's offsets are not the document's
		return inputerr.Errorf(path, lineAt(b, se.Offset), "", "%v", err)
	case errors.As(err, &te):
		field := join(te.Field)
		line := lineOf(lines, field)
		if line == 0 && at == "" {
			line = lineAt(b, te.Offset)
		}
		return inputerr.Errorf(path, line, field, "%v", err)
	}
	if _, name, ok := strings.Cut(err.Error(), `unknown field "`); ok {
		field := join(strings.TrimSuffix(name, `"`))
		return inputerr.Errorf(path, lineOf(lines, field), field, "%v", err)
	}
	return inputerr.Errorf(path, lineOf(lines, at), at, "%v", err)
}

// lineAt is the line of byte offset off of b.
func lineAt(b []byte, off int64) int {
	return 1 + bytes.Count(b[:min(max(off, 0), int64(len(b)))], []byte("\n"))
}

// Validate reports every problem at once, each an inputerr.FieldError
// naming the spec's field ("runs[0].nvml_window_s", "options.fit").
func (s *Spec) Validate() error {
	var errs []error
	if len(s.Runs) == 0 {
		errs = append(errs, inputerr.Fieldf("runs", ": no measured runs"))
	}
	errs = append(errs, s.Options.validate()...)
	names := map[string]bool{}
	for i, r := range s.Runs {
		at := fmt.Sprintf("runs[%d]", i)
		if r.Name == "" || names[r.Name] {
			errs = append(errs, inputerr.Fieldf(at+".name", ": %q: every run needs a distinct name", r.Name))
		}
		names[r.Name] = true
		if r.Arm == "" {
			errs = append(errs, inputerr.Fieldf(at+".arm", ": empty (runs repeating one setup share an arm)"))
		}
		if r.AIPerfSummary == "" && r.AIPerfRecords == "" && r.Measured == "" && r.benchFile() == "" {
			errs = append(errs, inputerr.Fieldf(at, ": needs aiperf_summary, aiperf_records, measured, vllm_bench, lmbench or guidellm"))
		}
		given := 0
		for _, f := range []string{r.VLLMBench, r.LMBench, r.GuideLLM} {
			if f != "" {
				given++
			}
		}
		for _, b := range []struct{ field, v string }{{"vllm_bench", r.VLLMBench}, {"lmbench", r.LMBench}, {"guidellm", r.GuideLLM}} {
			if b.v != "" && (r.AIPerfSummary != "" || r.AIPerfRecords != "" || r.Measured != "" || given > 1) {
				errs = append(errs, inputerr.Fieldf(at+"."+b.field, ": is a load point's measurements; give one of aiperf_summary/aiperf_records, measured, vllm_bench, lmbench and guidellm"))
				break
			}
		}
		if r.GuideLLMBenchmark < 0 || (r.GuideLLMBenchmark > 0 && r.GuideLLM == "") {
			errs = append(errs, inputerr.Fieldf(at+".guidellm_benchmark", "%d: the index (from 0) of a benchmark in the guidellm report", r.GuideLLMBenchmark))
		}
		if r.Measured != "" && (r.AIPerfSummary != "" || r.AIPerfRecords != "" || r.NvidiaSmi != "" || r.Inferscope != "") {
			errs = append(errs, inputerr.Fieldf(at+".measured", ": replaces the AIPerf and NVML files; give one or the other"))
		}
		if r.NvidiaSmi != "" && r.Inferscope != "" {
			errs = append(errs, inputerr.Fieldf(at+".inferscope", ": and nvidia_smi are two GPU samplers; give one"))
		}
		if !(r.NVMLWindowS >= 0 && r.NVMLWindowS <= maxWindowS) {
			errs = append(errs, inputerr.Fieldf(at+".nvml_window_s", "%g must be in [0, %d] seconds (a week; 0 = the sampler's own window)", r.NVMLWindowS, maxWindowS))
		}
		if err := r.Setup.Validate(); err != nil {
			errs = append(errs, under(at+".setup.", err)...)
		}
		if i > 0 {
			a, b := s.Runs[0].Setup, r.Setup
			if !strings.EqualFold(a.GPU, b.GPU) || !strings.EqualFold(a.Model, b.Model) || a.TP != b.TP || a.Quant != b.Quant {
				errs = append(errs, inputerr.Fieldf(at+".setup", ": deployment %s/%s/tp%d differs from the first run's %s/%s/tp%d; one profile fits one deployment",
					b.GPU, b.Model, b.TP, a.GPU, a.Model, a.TP))
			}
		}
	}
	return errors.Join(errs...)
}

func (s *Spec) path(p string) string {
	if p == "" || p == model.KernelPriorName || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, p)
}

// Observed is one run's measurements.
type Observed struct {
	Run     *Run
	Summary *AIPerfSummary
	Records []Record
	GPU     *GPUObservation
	// Derived holds the statistics of a Measured file.
	Derived Stats
	// Bench is a benchmark client's load point (vllm_bench): its
	// statistics are in Derived, its per-request measurements, if saved,
	// in Records.
	Bench *BenchPoint
}

// Load reads every run's files.
func (s *Spec) Load() ([]Observed, error) {
	var out []Observed
	for i := range s.Runs {
		r := &s.Runs[i]
		o := Observed{Run: r}
		if err := readFile(s.path(r.AIPerfSummary), func(f *os.File, name string) (err error) {
			o.Summary, err = ReadAIPerfSummary(f, name)
			return err
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.AIPerfRecords), func(f *os.File, name string) (err error) {
			o.Records, err = ReadAIPerfRecords(f, name)
			return err
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.NvidiaSmi), func(f *os.File, name string) (err error) {
			o.GPU, err = ReadNvidiaSmiCSV(f, name)
			return err
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.Inferscope), func(f *os.File, name string) (err error) {
			o.GPU, err = ReadInferscope(f, name)
			return err
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.Measured), func(f *os.File, name string) error {
			m, err := ReadMeasured(f, name)
			if err == nil {
				o.Derived, o.GPU = m.Stats, m.GPU
			}
			return err
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.VLLMBench), func(f *os.File, name string) (err error) {
			o.Bench, err = ReadVLLMBench(f, name)
			if err == nil {
				o.Derived, o.Records = o.Bench.Stats, o.Bench.Records
			}
			return err
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.LMBench), func(f *os.File, name string) (err error) {
			o.Bench, err = ReadLMBench(f, name)
			if err == nil {
				o.Derived = o.Bench.Stats
			}
			return err
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.GuideLLM), func(f *os.File, name string) error {
			points, err := ReadGuideLLM(f, name)
			if err != nil {
				return err
			}
			if k := r.GuideLLMBenchmark; k >= len(points) {
				return errf(name, 0, "benchmarks", "%d benchmarks, but run %s asks for benchmark %d (guidellm_benchmark counts from 0)", len(points), r.Name, k)
			}
			o.Bench = points[r.GuideLLMBenchmark].Point
			o.Derived = o.Bench.Stats
			return nil
		}); err != nil {
			return nil, err
		}
		if err := readFile(s.path(r.VLLMLog), func(f *os.File, name string) error {
			b, err := inputerr.ReadAll(f, name, inputerr.MaxDataFile)
			if err != nil {
				return err
			}
			n, err := model.KVTokensFromLog(string(b))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			r.Setup.KVCacheTokens = n
			return nil
		}); err != nil {
			return nil, err
		}
		if err := o.checkGPU(s); err != nil {
			return nil, err
		}
		if o.GPU != nil && r.NVMLWindowS > 0 {
			o.GPU.WindowS = r.NVMLWindowS
		}
		out = append(out, o)
	}
	return out, nil
}

func readFile(path string, read func(*os.File, string) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f, path)
}

// Split divides the spec's runs into those named (the fit set: a bench
// sweep's light points) and the rest (to be predicted); each part keeps
// the spec's base, options and directory. Every name must be a run's,
// and both parts must be non-empty unless rest may be (all named).
func (s *Spec) Split(names []string) (fit, rest *Spec, err error) {
	want := map[string]bool{}
	known := make([]string, len(s.Runs))
	for i, r := range s.Runs {
		known[i] = r.Name
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, nil, fmt.Errorf("calib: no run %q to fit on (runs: %s)", n, strings.Join(known, ", "))
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil, nil, errors.New("calib: no runs named to fit on")
	}
	fit, rest = s.shallow(), s.shallow()
	for _, r := range s.Runs {
		if want[r.Name] {
			fit.Runs = append(fit.Runs, r)
		} else {
			rest.Runs = append(rest.Runs, r)
		}
	}
	return fit, rest, nil
}

// shallow is s without its runs.
func (s *Spec) shallow() *Spec {
	c := *s
	c.Runs = nil
	return &c
}
