package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateFlagsRangeChecked: every calibrate flag is checked where it
// is parsed, by name, before any file is read: out-of-range values (NaN,
// Inf, past the bounds), unknown coefficients, and the fit settings of a
// spec fit given to an ML.ENERGY fit, which has no use for them.
func TestCalibrateFlagsRangeChecked(t *testing.T) {
	dir := t.TempDir()
	ml := []string{"--mlenergy", filepath.Join(dir, "nope.csv"), "--osl", "o.json", "--model", "Qwen3-8B"}
	spec := []string{"--spec", filepath.Join(dir, "nope.json")}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"mlenergy model error NaN", with(ml, "--model-error", "NaN"), "--model-error"},
		{"mlenergy prior weight Inf", with(ml, "--prior-weight", "Inf"), "--prior-weight"},
		{"mlenergy fit bogus", with(ml, "--fit", "bogus"), "--fit"},
		{"mlenergy max evals", with(ml, "--max-evals", "5"), "--max-evals"},
		{"mlenergy no posterior", with(ml, "--no-posterior"), "--no-posterior"},
		{"mlenergy jobs 0", with(ml, "--jobs", "0"), "--jobs 0 must be in [1, "},
		{"mlenergy jobs huge", with(ml, "--jobs", "9223372036854775807"), "--jobs 9223372036854775807 must be in [1, "},
		{"spec fit bogus", with(spec, "--fit", "bogus"), `--fit: unknown coefficient "bogus"`},
		{"spec fit twice", with(spec, "--fit", "step_base_ns,step_base_ns"), `--fit: "step_base_ns" is listed twice`},
		{"spec model error NaN", with(spec, "--model-error", "NaN"), "--model-error NaN must be in [0.001, 10]"},
		{"spec model error tiny", with(spec, "--model-error", "1e-300"), "--model-error 1e-300 must be in [0.001, 10]"},
		{"spec prior weight Inf", with(spec, "--prior-weight", "Inf"), "--prior-weight +Inf must be in [0, 1000]"},
		{"spec prior weight huge", with(spec, "--prior-weight", "1e300"), "--prior-weight 1e+300 must be in [0, 1000]"},
		{"spec max evals huge", with(spec, "--max-evals", "9223372036854775807"), "--max-evals 9223372036854775807 must be in [1, 100000]"},
		{"source without derive", with(spec, "--source", "a paper"), "--source needs --derive"},
		{"derive with fit settings", with(spec, "--derive", filepath.Join(dir, "d"), "--source", "a paper", "--max-evals", "5", "--no-posterior"),
			"--max-evals, --no-posterior: settings of a fit; --derive fits nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) { calibrateFails(t, dir, tc.name, tc.args, tc.want, 2) })
	}
}

// TestCalibrateSpecOptionsNamed: a spec's bad options are reported by
// field, line and value — not as a Go struct with a pointer in it.
func TestCalibrateSpecOptionsNamed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "spec.json")
	os.WriteFile(p, []byte("{\"name\": \"x\",\n \"options\": {\"prior_weight\": -2, \"max_evals\": -1},\n \"runs\": [{\"name\": \"a\", \"arm\": \"a\", \"aiperf_summary\": \"s.json\", \"setup\": {}}]}\n"), 0o644)
	_, _, err := runCLI("calibrate", "--spec", p, "--out", filepath.Join(dir, "out"))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"spec.json:2: options.prior_weight: -2 must be in [0, 1000]", "spec.json:2: options.max_evals: -1 must be in [1, 100000]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "0x") {
		t.Errorf("a pointer in %q", err)
	}
}
