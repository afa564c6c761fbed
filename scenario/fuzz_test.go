package scenario

import (
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
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "s.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(p, Defaults())
		if err != nil {
			var ie *inputerr.Error
			if !errors.As(err, &ie) && !strings.Contains(err.Error(), p) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Build(nil) // an error is fine; a panic fails the fuzz target
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("building %q took over 10 s", b)
		}
	})
}
