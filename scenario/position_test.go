package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScenarioErrorsPointAtTheField: an error names the line of the
// field it is about, even when the key's text occurs earlier (in a
// string, as another object's key, in another case), and a nested field
// by its dotted path.
func TestScenarioErrorsPointAtTheField(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"key in a string", "{\"description\": \"n\",\n \"n\": 0}", "key in a string.json:2: n: 0 must be in [1, 4096]"},
		{"escaped key in a string", "{\"description\": \"see \\\"n\\\"\",\n \"n\": 0}", "escaped key in a string.json:2: n: 0 must be in"},
		{"key of an outer value", "{\"workload\": \"sessions\",\n \"sessions\": {\n  \"concurrency\": 2,\n  \"sessions\": -1\n }\n}",
			"key of an outer value.json:4: sessions.sessions: -1 must be ≥ 0"},
		{"nested after a string", "{\"description\": \"concurrency\", \"workload\": \"sessions\",\n \"sessions\": {\"concurrency\": 0}}",
			"nested after a string.json:2: sessions.concurrency: 0 must be in"},
		{"engine check", "{\"description\": \"block_size\",\n \"block_size\": 7}", "engine check.json:2: block_size: 7 must divide 512"},
		{"other case", "{\"description\": \"x\",\n \"N\": 0}", "other case.json:2: n: 0 must be in"},
		{"policy parameter", "{\"description\": \"refresh_metrics_interval\",\n \"policy_params\": {\n  \"refresh_metrics_interval\": \"x\"}}",
			"policy parameter.json:3: policy_params.refresh_metrics_interval: \"x\" is not a duration"},
		{"unknown", "{\n \"n\": 2,\n \"gpus\": \"H100\"\n}", "unknown.json:3: gpus: unknown field"},
		{"nested unknown", "{\"n\": 2,\n \"policy_params\": {\n  \"n\": 3}}", "nested unknown.json:3: policy_params.n: unknown field"},
		{"duplicate in another case", "{\"n\": 2,\n \"N\": 3}", "duplicate in another case.json:2: N: given twice"},
		{"null value", "{\"n\": 2,\n \"gpu\":\n null}", "null value.json:3: gpu: null is not a value here"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		os.WriteFile(p, []byte(tc.body), 0o644)
		_, err := Load(p, Defaults())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.want)
		}
	}
}

// TestScenarioPathsInAnyCase: "Trace" sets the trace as "trace" does
// (encoding/json matches keys in any case), so its path is relative to
// the file's folder too.
func TestScenarioPathsInAnyCase(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, []byte(`{"Trace": "t.jsonl"}`), 0o644)
	s, err := Load(p, Defaults())
	if err != nil || s.Trace != filepath.Join(dir, "t.jsonl") {
		t.Errorf("trace %q (%v), want it beside the scenario file", s.Trace, err)
	}
}
