package calib

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
}

// SpecOptions are the fit settings a spec may fix; zero values mean the
// defaults (calibrate's flag defaults).
type SpecOptions struct {
	MaxEvals    int      `json:"max_evals,omitempty"`
	Fit         []string `json:"fit,omitempty"`
	PriorWeight *float64 `json:"prior_weight,omitempty"`
	ModelError  float64  `json:"model_error,omitempty"`
}

// LoadSpec reads a spec; each run's setup starts from scenario.Defaults().
func LoadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var shape struct {
		Name    string            `json:"name"`
		Base    string            `json:"base_profile"`
		Note    string            `json:"note"`
		Options SpecOptions       `json:"options"`
		Runs    []json.RawMessage `json:"runs"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&shape); err != nil {
		return nil, errf(path, 0, "", "%v", err)
	}
	s := &Spec{Name: shape.Name, Base: shape.Base, Note: shape.Note, Options: shape.Options, dir: filepath.Dir(path)}
	for i, raw := range shape.Runs {
		r := Run{Setup: scenario.Defaults()}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&r); err != nil {
			return nil, errf(path, 0, fmt.Sprintf("runs[%d]", i), "%v", err)
		}
		// A trace file, like the run's other files, is relative to the spec.
		if t := r.Setup.Trace; t != "" && !slices.Contains(workload.EmbeddedNames(), t) {
			r.Setup.Trace = s.path(t)
		}
		s.Runs = append(s.Runs, r)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Validate reports every problem at once.
func (s *Spec) Validate() error {
	var errs []error
	if len(s.Runs) == 0 {
		errs = append(errs, errors.New("runs: no measured runs"))
	}
	if o := s.Options; o.MaxEvals < 0 || o.ModelError < 0 || math.IsNaN(o.ModelError) || math.IsInf(o.ModelError, 0) ||
		o.PriorWeight != nil && !(*o.PriorWeight >= 0 && !math.IsInf(*o.PriorWeight, 0)) {
		errs = append(errs, fmt.Errorf("options: max_evals, model_error and prior_weight must be finite and ≥ 0 (%+v)", o))
	}
	names := map[string]bool{}
	for i, r := range s.Runs {
		at := fmt.Sprintf("runs[%d] (%s)", i, r.Name)
		if r.Name == "" || names[r.Name] {
			errs = append(errs, fmt.Errorf("%s: every run needs a distinct name", at))
		}
		names[r.Name] = true
		if r.Arm == "" {
			errs = append(errs, fmt.Errorf("%s: arm is empty", at))
		}
		if r.AIPerfSummary == "" && r.AIPerfRecords == "" && r.Measured == "" {
			errs = append(errs, fmt.Errorf("%s: needs aiperf_summary, aiperf_records or measured", at))
		}
		if r.Measured != "" && (r.AIPerfSummary != "" || r.AIPerfRecords != "" || r.NvidiaSmi != "" || r.Inferscope != "") {
			errs = append(errs, fmt.Errorf("%s: measured replaces the AIPerf and NVML files; give one or the other", at))
		}
		if r.NVMLWindowS < 0 {
			errs = append(errs, fmt.Errorf("%s: nvml_window_s %g < 0", at, r.NVMLWindowS))
		}
		if err := r.Setup.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: setup: %w", at, err))
		}
		if i > 0 {
			a, b := s.Runs[0].Setup, r.Setup
			if !strings.EqualFold(a.GPU, b.GPU) || !strings.EqualFold(a.Model, b.Model) || a.TP != b.TP || a.Quant != b.Quant {
				errs = append(errs, fmt.Errorf("%s: deployment %s/%s/tp%d differs from the first run's %s/%s/tp%d; one profile fits one deployment",
					at, b.GPU, b.Model, b.TP, a.GPU, a.Model, a.TP))
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
		if err := readFile(s.path(r.VLLMLog), func(f *os.File, name string) error {
			b, err := io.ReadAll(io.LimitReader(f, 256<<20))
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
