package main

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDirOwner: no manifest.json makes dirOwner panic, and what it
// accepts is a kind it knows. Seeds: a sweep's, a plan's and a run's
// manifest, one routesim did not write, truncated and empty files.
func FuzzDirOwner(f *testing.F) {
	f.Add([]byte(`{"content_digest":"sha256:00","tool":"routesim","version":"0.1.0-dev","command":"sweep"}`))
	f.Add([]byte(`{"tool":"routesim","command":"plan"}`))
	f.Add([]byte(`{"tool":"routesim","version":"0.1.0-dev","command":"routesim run --out x"}`))
	f.Add([]byte(`{"tool":"other","command":"sweep"}`))
	f.Add([]byte(`{"tool":"routesim","comm`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, manifest []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		k, err := dirOwner(dir)
		if err == nil && k != kindRun && k != kindSweep && k != kindPlan {
			t.Fatalf("accepted an owner %q", k)
		}
	})
}
