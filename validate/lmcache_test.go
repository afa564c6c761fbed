package validate

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/sim"
)

const lmcacheCase, lmcacheBase = "llmd-llama3.1-8b-lmbench-lmcache", "llmd-llama3.1-8b-lmbench"

// TestLMCacheCaseFitsWithoutLMCache: the case with LMCache calibrates
// exactly as the case without it (its fit spec and the runs it names are
// byte-identical copies), and predicts the runs with LMCache with the
// fitted setup plus LMCache's tier alone: each predicted run's setup is
// the fit's but for its trace and the three LMCache fields, the same in
// every run, as the deployment file gives them (40 GiB, chunk_size 256,
// warm) — nothing chosen per run, nothing fitted to them.
func TestLMCacheCaseFitsWithoutLMCache(t *testing.T) {
	for _, f := range []string{"fit.json", "trace-0.1.jsonl", "trace-0.3.jsonl", "measured-0.1.json", "measured-0.3.json", "LICENSE"} {
		a, err := dataFS.ReadFile(path.Join("data", lmcacheCase, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := dataFS.ReadFile(path.Join("data", lmcacheBase, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s's: the case must calibrate exactly as the one without LMCache", f, lmcacheBase)
		}
	}
	dir, err := extract(lmcacheCase)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fit, err := calib.LoadSpec(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := calib.LoadSpec(filepath.Join(dir, "predict.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pred.Runs) != 6 {
		t.Fatalf("%d runs predicted, want the 6 QPS points with LMCache", len(pred.Runs))
	}
	for _, r := range pred.Runs {
		s := r.Setup
		if s.LMCacheMaxLocalCPUSize != 40 || s.LMCacheChunkSize != sim.LMCacheDefaultChunkSize || !s.LMCacheWarm {
			t.Errorf("%s: LMCache %g GiB, chunk %d, warm %v; want the deployment's 40 GiB, 256, warm", r.Arm, s.LMCacheMaxLocalCPUSize, s.LMCacheChunkSize, s.LMCacheWarm)
		}
		s.LMCacheMaxLocalCPUSize, s.LMCacheChunkSize, s.LMCacheWarm = 0, 0, false
		s.Trace = fit.Runs[0].Setup.Trace
		if !reflect.DeepEqual(s, fit.Runs[0].Setup) {
			t.Errorf("%s: setup %+v differs from the fit's %+v beyond its trace and LMCache", r.Arm, s, fit.Runs[0].Setup)
		}
	}
}

// TestLMCacheCaseLoadsFromTheTier: the prediction of the lightest run with
// LMCache comes from the tier: every request starts with its 20,992-token
// shared context loaded (82 chunks of 256), and TTFT falls from the
// ≈ 1.8 s of a full prefill to a fraction of it.
func TestLMCacheCaseLoadsFromTheTier(t *testing.T) {
	dir, err := extract(lmcacheCase)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pred, err := calib.LoadSpec(filepath.Join(dir, "predict.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := pred.Runs[0]
	off := run.Setup
	off.LMCacheMaxLocalCPUSize, off.LMCacheChunkSize, off.LMCacheWarm = 0, 0, false
	ttft := func(s calib.Run) (float64, []sim.Record) {
		b, err := s.Setup.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := b.Run(1).Exec()
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, r := range res.Records {
			sum += float64(r.TTFT())
		}
		return sum / float64(len(res.Records)), res.Records
	}
	with, recs := ttft(run)
	run.Setup = off
	without, _ := ttft(run)
	for _, r := range recs {
		if r.CachedTokens != 82*256 {
			t.Errorf("request %d starts with %d cached tokens, want 20,992 (82 chunks)", r.ID, r.CachedTokens)
		}
	}
	if !(with < without/4) {
		t.Errorf("mean TTFT %.0f ms with LMCache, %.0f ms without: the tier should cut it several-fold", with/1e6, without/1e6)
	}
}
