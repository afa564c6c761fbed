package calib

import (
	"errors"
	"os"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
)

// FuzzReadSpec: the calibration spec reader never panics; what it refuses
// it refuses with positioned errors (file:line: field: problem), and what
// it accepts holds the invariants a fit relies on.
func FuzzReadSpec(f *testing.F) {
	for _, p := range []string{"../validate/data/a100-qwen3-8b-n8/calib.json", "../validate/data/h100-llama3.1-8b-inferencesim/calib.json",
		"../validate/data/llmd-llama3.1-8b-lmbench/fit.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	const run = `{"name":"a","arm":"a","aiperf_summary":"s.json","setup":{}}`
	for _, s := range []string{
		`{"name":"x","runs":[` + run + `]}`,
		`{"name":"x","runs":[{"name":"a","arm":"a","aiperf_summary":"s","nvml_window_s":1e308,"setup":{}}]}`,
		`{"name":"x","options":{"prior_weight":-2,"fit":["bogus","bogus"],"max_evals":-1,"model_error":1e9},"runs":[` + run + `]}`,
		`{"name":"x","options":{"max_evals":"many"},"runs":[` + run + `]}`,
		`{"name":"x","runs":[` + run + `,` + run + `]}`,
		`{"name":"x","runs":[{"name":"b","arm":"b","measured":"m.json","nvidia_smi":"n.csv","setup":{"gpu":"B300"}}]}`,
		"{\n\"runs\": [\n{}, []]}",
		`{"name":"x","runs":[{"name":"a","arm":"a","vllm_bench":"v.json","aiperf_summary":"s.json","setup":{}}]}`,
		`{"name":"x","runs":[{"name":"a","arm":"a","lmbench":"l.csv","guidellm":"g.json","guidellm_benchmark":-1,"setup":{}}]}`,
		`{"name":"x","runs":[{"name":"a","arm":"a","guidellm_benchmark":2,"setup":{}}]}`,
		`{"runs":{}}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		keyLines(b) // must not panic on any input
		s, err := parseSpec(b, "spec.json")
		if err != nil {
			for _, e := range flatten(err) {
				var pe *inputerr.Error
				if !errors.As(e, &pe) || pe.File != "spec.json" {
					t.Fatalf("unpositioned error %T: %v", e, e)
				}
			}
			return
		}
		if len(s.Runs) == 0 {
			t.Fatal("accepted a spec with no runs")
		}
		names := map[string]bool{}
		for _, r := range s.Runs {
			if r.Name == "" || names[r.Name] || r.Arm == "" {
				t.Fatalf("accepted run %q (arm %q)", r.Name, r.Arm)
			}
			names[r.Name] = true
			if !(r.NVMLWindowS >= 0 && r.NVMLWindowS <= maxWindowS) {
				t.Fatalf("accepted nvml_window_s %g", r.NVMLWindowS)
			}
		}
		if o := s.Options; o.MaxEvals < 0 || o.MaxEvals > MaxEvalsLimit || checkFit(o.Fit) != nil ||
			o.PriorWeight != nil && checkPriorWeight(*o.PriorWeight) != nil || o.ModelError != 0 && checkModelError(o.ModelError) != nil {
			t.Fatalf("accepted options %+v", o)
		}
	})
}
