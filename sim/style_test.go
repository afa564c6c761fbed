package sim

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCoreHasNoHiddenNondeterminism enforces the house rules that keep runs
// reproducible: no top-level math/rand calls, no wall clock, no goroutines
// in the simulation core.
func TestCoreHasNoHiddenNondeterminism(t *testing.T) {
	banned := regexp.MustCompile(`\brand\.(Int|IntN|Int64|Int64N|Uint64|Uint32|Float64|Float32|NormFloat64|ExpFloat64|Perm|Shuffle|N)\(|\btime\.Now\(|\bgo func\(`)
	for _, dir := range []string{".", "../workload", "../workload/session", "../report", "../policy", "../model", "../calib", "../plan"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) == 0 {
			t.Errorf("%s: no Go files (moved? update this list)", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if banned.MatchString(line) {
					t.Errorf("%s:%d: %s", f, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}
