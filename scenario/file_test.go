package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

func TestShippedScenariosLoadAndBuild(t *testing.T) {
	files, _ := filepath.Glob("../testdata/scenarios/*.json")
	if len(files) < 2 {
		t.Fatalf("found %d scenario files", len(files))
	}
	for _, f := range files {
		s, err := Load(f, Defaults())
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if s.Description == "" || s.Workload != "sessions" {
			t.Errorf("%s: %+v", f, s)
		}
		b, err := s.Build(nil)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		// The description says what the profile is: the measured profile
		// a transfer comes from, the measured profile itself, else the
		// kernel prior.
		want := "kernel prior"
		if src, ok := model.TransferredFrom(b.Profile); ok {
			want = "transfer of " + src
		} else if b.Profile.Kind == "measured" {
			want = "Profile: " + b.Profile.Name
		}
		if !b.Profile.IsKernel() || !strings.Contains(s.Description, want) {
			t.Errorf("%s: profile %s is %s (kernel=%v); the description must say which (%q)", f, b.Profile.Name, b.Profile.Kind, b.Profile.IsKernel(), want)
		}
	}
}

// TestScenarioFilePathsAndBOM: a UTF-8 byte-order mark is skipped, and a
// trace path is relative to the scenario file's folder, not the working
// directory (an embedded trace name stays a name).
func TestScenarioFilePathsAndBOM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scen")
	os.MkdirAll(dir, 0o755)
	tr, _ := os.ReadFile("../testdata/traces/arxiv_head60.jsonl")
	os.WriteFile(filepath.Join(dir, "t.jsonl"), tr, 0o644)
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, append([]byte("\xef\xbb\xbf"), `{"trace": "t.jsonl", "n": 2}`...), 0o644)
	s, err := Load(p, Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if s.Trace != filepath.Join(dir, "t.jsonl") {
		t.Errorf("trace %q, want it beside the scenario file", s.Trace)
	}
	if _, err := s.Build(nil); err != nil {
		t.Errorf("build: %v", err)
	}
	os.WriteFile(p, []byte(`{"trace": "conversation"}`), 0o644)
	if s, err := Load(p, Defaults()); err != nil || s.Trace != "conversation" {
		t.Errorf("embedded name: %q, %v", s.Trace, err)
	}
}

func TestBadScenarioFilesArePositioned(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"syntax", "{\n  \"n\": 4,\n  \"gpu\": \n}\n", "syntax.json:4: malformed JSON"},
		{"unknown", "{\n  \"n\": 4,\n  \"gpus\": \"H100\"\n}\n", "unknown.json:3: gpus: unknown field"},
		{"type", "{\n  \"n\": \"four\"\n}\n", "type.json:2: n: string is not a valid int"},
		{"nested type", "{\n  \"sessions\": {\n    \"concurrency\": 1.5\n  }\n}\n", "nested type.json:3: sessions.concurrency: number 1.5 is not a valid int"},
		{"invalid", "{\"workload\": \"sessions\", \"sessions\": {\"concurrency\": 0}}", "invalid.json:1: sessions.concurrency: 0 must be in [1, 100000]"},
		{"engine", "{\n  \"n\": 2,\n  \"block_size\": 7\n}\n", "engine.json:3: block_size: 7 must divide 512"},
		{"memory", "{\n  \"gpu_memory_utilization\": 1.5\n}\n", "memory.json:2: gpu_memory_utilization: 1.5 must be in (0, 1]"},
		{"null", "{\n  \"n\": null\n}\n", "null.json:2: n: null is not a value here"},
		{"duplicate", "{\n  \"n\": 2,\n  \"n\": 4\n}\n", "duplicate.json:3: n: given twice"},
		{"nested duplicate", "{\"sessions\": {\"concurrency\": 2,\n \"concurrency\": 3}}", "nested duplicate.json:2: sessions.concurrency: given twice"},
		{"two values", "{}\n{}\n", "more than one JSON value"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		os.WriteFile(p, []byte(tc.body), 0o644)
		_, err := Load(p, Defaults())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
