package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routesim/routesim/internal/inputerr"
)

// FuzzScenarioFile: any bytes as a scenario file either load (and then
// build, or fail to build, with an error) or fail with an error that
// names the file; never a panic, never a build that runs away.
func FuzzScenarioFile(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"n": 4, "policy": "kv"}`, "\xef\xbb\xbf{\"n\": 2}", `{"n": null}`, `{"n": 2, "n": 3}`,
		`{"workload": "sessions", "sessions": {"concurrency": 4, "sessions": 8}}`,
		`{"workload": "synthetic", "synthetic": {"requests": 10, "rate": 1e-300}}`,
		`{"block_size": 7}`, `{"gpu_memory_utilization": 1e300}`, `{"warmup_s": 1e300}`,
		`{"rate_scale": 1e-6}`, `{"sessions": {"think_s": 1e12}}`, `{"trace": "../../etc/passwd"}`,
		// Errors at the field's own line, not the first occurrence of
		// its key's text (in a string, as another object's key).
		"{\"description\": \"n\",\n \"n\": 0}",
		"{\"workload\": \"sessions\",\n \"sessions\": {\n  \"concurrency\": 2,\n  \"sessions\": -1}}",
		"{\"description\": \"concurrency\",\n \"workload\": \"sessions\", \"sessions\": {\"concurrency\": 0}}",
		"{\"description\": \"x\",\n \"N\": 0}", "{\"n\": 2,\n \"N\": 3}", "{\n \"gpus\": 1}",
		"{\"policy_params\": {\n \"n\": 3}}", "{\"Trace\": \"t.jsonl\"}", "{\"\\u006e\": 0}",
		"{\"policy_params\": {\"refresh_metrics_interval\": \"x\"},\n \"refresh_metrics_interval\": 1}",
		// Engine-level settings, refused only when the run is built.
		"{\"description\": \"retry\",\n \"retry\": -1}", "{\"max_model_len\": 10000000}",
		"{\"retry\": 2,\n \"retry_backoff\": 0}", "{\"policy\": \"kv\",\n \"kv_event_lag\": -5}",
		"{\"kvbm_cpu_cache_gb\": 4,\n \"kv_offloading_size_gib\": 4}", "{\"kvbm_disk_cache_gb\": -1}",
		"{\"kvbm_disk_cache_gb\": 100}", "{\"engine\": \"trtllm\", \"kvbm_cpu_cache_gb\": 1e-9}",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "s.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, src, err := LoadSource(p, Defaults())
		if err != nil {
			var ie *inputerr.Error
			if !errors.As(err, &ie) && !strings.Contains(err.Error(), p) {
				t.Fatalf("error does not name the file: %v", err)
			}
			if ie != nil && ie.Line > bytes.Count(b, []byte("\n"))+1 {
				t.Fatalf("error at line %d of a %d-line file: %v", ie.Line, bytes.Count(b, []byte("\n"))+1, err)
			}
			return
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.Build(nil) // an error is fine; a panic fails the fuzz target
			done <- err
		}()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("building %q took over 10 s", b)
		}
		// Every setting the build refuses that the file sets (as
		// encoding/json reads it) has its line, for the CLI to name.
		for _, field := range fieldsOf(err) {
			if setsField(b, field) && src.Line(field) == 0 {
				t.Fatalf("%q sets %s, refused (%v), but its line is unknown", b, field, err)
			}
		}
	})
}

// fieldsOf lists the fields err's field errors name.
func fieldsOf(err error) []string {
	var out []string
	switch e := err.(type) {
	case *inputerr.FieldError:
		out = append(out, e.Field)
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			out = append(out, fieldsOf(x)...)
		}
	case interface{ Unwrap() error }:
		out = append(out, fieldsOf(e.Unwrap())...)
	}
	return out
}

// setsField says whether the JSON object b has the dotted key field,
// spelled exactly.
func setsField(b []byte, field string) bool {
	var v any
	if json.Unmarshal(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), &v) != nil {
		return false
	}
	for _, k := range strings.Split(field, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	return true
}
