package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/routesim/routesim/internal/sealed"
	"github.com/routesim/routesim/scenario"
)

// FuzzReadSweepDir: no manifest.json or shard.json makes the readers of a
// sweep directory (its manifest, its shard record) panic; what
// they accept is a sweep manifest that reads back after re-sealing, and a
// shard i/k with 0 ≤ i < k. Seeds: files as written, edited, unsealed,
// truncated, and a run's manifest.
func FuzzReadSweepDir(f *testing.F) {
	base := scenario.Defaults()
	base.Trace = "arxiv-window"
	m := &Manifest{Tool: "routesim", Version: "0.1.0-dev", Command: Command, Base: base,
		Grid: Grid{Ns: []int{2, 4}, Policies: []string{"round-robin"}, Seeds: 2, RateScales: []float64{1}}, Metric: "ttft-p50", Bootstrap: 20}
	good, err := sealed.MarshalIndent(m)
	if err != nil {
		f.Fatal(err)
	}
	shard, _ := sealed.MarshalIndent(Shard{I: 1, K: 3})
	f.Add(good, shard)
	f.Add(bytes.Replace(good, []byte(`"bootstrap": 20`), []byte(`"bootstrap": 1`), 1), shard)
	f.Add(bytes.Replace(good, []byte(`"command": "sweep"`), []byte(`"command": "routesim run --n 2"`), 1), bytes.Replace(shard, []byte(`"I": 1`), []byte(`"I": 5`), 1))
	f.Add(good[:len(good)/2], shard[:10])
	f.Add([]byte(`{"tool":"routesim","command":"sweep"}`), []byte(`{"I":0,"K":0}`))
	f.Add([]byte(`{"tool":"routesim","version":"0.1.0-dev","command":"routesim run --out x"}`), []byte(`null`))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, manifest, shardFile []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644)
		os.WriteFile(filepath.Join(dir, "shard.json"), shardFile, 0o644)
		if s, ok, err := ReadShard(dir); err == nil && ok && !(s.K >= 2 && s.I >= 0 && s.I < s.K) {
			t.Fatalf("accepted shard %d/%d", s.I, s.K)
		}
		got, err := ReadManifest(dir)
		if err != nil {
			return
		}
		if got.Command != "sweep" {
			t.Fatalf("accepted a %q manifest as a sweep's", got.Command)
		}
		again, err := sealed.MarshalIndent(got)
		if err != nil {
			t.Fatalf("an accepted manifest does not seal: %v", err)
		}
		os.WriteFile(filepath.Join(dir, "manifest.json"), again, 0o644)
		if back, err := ReadManifest(dir); err != nil || !back.Same(got) {
			t.Fatalf("an accepted manifest, re-sealed, reads back as %v, %v", back, err)
		}
	})
}
