package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		if b.Profile.Kind != "transfer" || !b.Profile.IsKernel() || !strings.Contains(s.Description, "kernel prior") {
			t.Errorf("%s: profile %s is %s (kernel=%v); the description must say which (kernel prior)", f, b.Profile.Name, b.Profile.Kind, b.Profile.IsKernel())
		}
	}
}

func TestBadScenarioFilesArePositioned(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"syntax", "{\n  \"n\": 4,\n  \"gpu\": \n}\n", "syntax.json:4: malformed JSON"},
		{"unknown", "{\n  \"n\": 4,\n  \"gpus\": \"H100\"\n}\n", "unknown field \"gpus\""},
		{"type", "{\n  \"n\": \"four\"\n}\n", "type.json:2: n: string is not a valid int"},
		{"nested type", "{\n  \"sessions\": {\n    \"concurrency\": 1.5\n  }\n}\n", "nested type.json:3: sessions.concurrency: number 1.5 is not a valid int"},
		{"invalid", "{\"workload\": \"sessions\", \"sessions\": {\"concurrency\": 0}}", "sessions.concurrency 0"},
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
