package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

// TestProfilesLists: the built-in listing names every embedded profile and
// the fallbacks; --profile lists the given files only, with their implied
// figures; bad files and stray arguments are errors naming them.
func TestProfilesLists(t *testing.T) {
	out, _, err := runCLI("profiles")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range model.BuiltinProfiles() {
		if !strings.Contains(out, p.Name) {
			t.Errorf("built-in profile %s not listed", p.Name)
		}
	}
	if !strings.Contains(out, "runs uncalibrated") {
		t.Error("fallback section missing")
	}
	// The TensorRT-LLM fit serves --engine trtllm only: vLLM on its
	// deployment still falls back, and the listing says so.
	if !strings.Contains(out, "H100-SXM5-80GB/Llama-3.1-70B/tp2/fp8") || !strings.Contains(out, "--engine trtllm") {
		t.Error("the TensorRT-LLM profile hid its deployment's vLLM fallback, or is not explained")
	}

	const noisy = "../../testdata/profiles/noisy.json"
	out, _, err = runCLI("profiles", "--profile", noisy)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rows []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "A100") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 1 || !strings.Contains(rows[0], "test.noisy") || !strings.Contains(rows[0], "%") {
		t.Errorf("--profile listing rows %q, want one row for test.noisy with implied percentages", rows)
	}
	if strings.Contains(out, "runs uncalibrated") || strings.Contains(out, model.BuiltinProfiles()[0].Name) {
		t.Error("--profile also listed the built-in profiles or the fallbacks")
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"profiles", "--profile", "/no/such/profile.json"}, 1, "/no/such/profile.json"},
		{[]string{"profiles", "--profile", bad}, 1, "bad.json"},
		{[]string{"profiles", "stray"}, 2, `"stray"`},
		{[]string{"profiles", "--profile"}, 2, "profile"},
	} {
		_, _, err := runCLI(tc.args...)
		if err == nil || exitCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v (exit %d), want exit %d naming %s", tc.args, err, exitCode(err), tc.code, tc.want)
		}
	}
}
