package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/sim"
)

// TestTierOutputs: sessions on two workers whose GPUs hold few blocks, so
// a conversation's blocks leave the GPU before its next turn and, with
// --kv-offloading-size, come back from the CPU tier. requests.csv then
// splits every row's cached_tokens into cached_gpu_tokens +
// cached_host_tokens + cached_disk_tokens, some turns load from the host,
// and summary.json's kv_tiers adds them up: hit tokens over the completed
// requests, bytes = blocks × block bytes. Without the flag the run has
// neither the columns nor kv_tiers.
func TestTierOutputs(t *testing.T) {
	base := []string{"run", "--workload", "sessions", "--n", "2", "--concurrency", "24", "--sessions", "60", "--policy", "round-robin",
		"--num-gpu-blocks-override", "400", "--max-model-len", "16384"}
	tier := []string{"cached_gpu_tokens", "cached_host_tokens", "cached_disk_tokens"}
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"no tier", nil},
		{"host tier", []string{"--kv-offloading-size", "64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			args := append(append(slices.Clone(base), tc.extra...), "--out", dir)
			if _, stderr, err := runCLI(args...); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			var sum sim.Summary
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			head := readCSVRows(t, filepath.Join(dir, "requests.csv"))[0]
			if tc.extra == nil {
				for _, c := range tier {
					if slices.Contains(head, c) {
						t.Errorf("column %s in a run without a tier", c)
					}
				}
				if sum.KVTiers != nil {
					t.Errorf("kv_tiers in a run without a tier: %+v", sum.KVTiers)
				}
				if _, err := os.Stat(filepath.Join(dir, report.ServerMetricsFile)); err == nil {
					t.Errorf("%s in a run without a tier", report.ServerMetricsFile)
				}
				return
			}
			num := func(r map[string]string, c string) int64 {
				v, err := strconv.ParseInt(r[c], 10, 64)
				if err != nil || v < 0 {
					t.Fatalf("request %s: %s = %q", r["id"], c, r[c])
				}
				return v
			}
			var fromHost, okPrompt, okHost, okGPU int64
			for _, r := range readCSV(t, filepath.Join(dir, "requests.csv")) {
				gpu, host, disk := num(r, "cached_gpu_tokens"), num(r, "cached_host_tokens"), num(r, "cached_disk_tokens")
				if gpu+host+disk != num(r, "cached_tokens") {
					t.Errorf("request %s: gpu %d + host %d + disk %d ≠ cached %s", r["id"], gpu, host, disk, r["cached_tokens"])
				}
				if disk != 0 {
					t.Errorf("request %s: %d disk tokens without a disk tier", r["id"], disk)
				}
				if host > 0 {
					fromHost++
				}
				if r["status"] == "ok" {
					okPrompt += num(r, "input_tokens")
					okHost += host
					okGPU += gpu
				}
			}
			if fromHost == 0 {
				t.Fatal("no turn loaded from the host tier: the test exercises nothing")
			}
			k := sum.KVTiers
			if k == nil || len(k.Tiers) != 1 || k.Tiers[0].Medium != "CPU" {
				t.Fatalf("kv_tiers = %+v, want one CPU tier", k)
			}
			c := k.Tiers[0]
			h := sum.HostTier
			if k.PromptTokens != okPrompt || c.HitTokens != okHost || k.GPUHitTokens != okGPU {
				t.Errorf("kv_tiers prompt %d, CPU %d, GPU %d tokens; the completed rows give %d, %d, %d", k.PromptTokens, c.HitTokens, k.GPUHitTokens, okPrompt, okHost, okGPU)
			}
			if c.HitRate != float64(okHost)/float64(okPrompt) || k.GPUHitRate != float64(okGPU)/float64(okPrompt) {
				t.Errorf("hit rates CPU %g GPU %g, want %g and %g", c.HitRate, k.GPUHitRate, float64(okHost)/float64(okPrompt), float64(okGPU)/float64(okPrompt))
			}
			if c.BytesLoaded != float64(c.LoadedBlocks)*float64(c.BlockBytes) || c.BytesStored != float64(c.StoredBlocks)*float64(c.BlockBytes) {
				t.Errorf("bytes %g loaded, %g stored ≠ blocks %d, %d × %d bytes", c.BytesLoaded, c.BytesStored, c.LoadedBlocks, c.StoredBlocks, c.BlockBytes)
			}
			if c.LoadedBlocks != h.LoadedBlocks || c.StoredBlocks != h.StoredBlocks || c.BytesLoaded != h.BytesFromHost || c.BytesStored != h.BytesToHost {
				t.Errorf("kv_tiers CPU %+v disagrees with host_tier %+v", c, *h)
			}
			// A completed request's loaded tokens are whole blocks the tier
			// copied: at most the blocks loaded (some loads serve requests
			// sent back to the queue, or that never complete).
			if block := int64(64); c.HitTokens%block != 0 || c.HitTokens > int64(c.LoadedBlocks)*block {
				t.Errorf("%d host hit tokens from %d blocks of %d tokens", c.HitTokens, c.LoadedBlocks, block)
			}
			// server_metrics_export.json: vLLM's transfer-size histograms
			// add up, over the workers, to the bytes kv_tiers reports.
			var sm struct {
				Metrics map[string]struct {
					Series []struct{ Stats map[string]float64 }
				}
			}
			if b, err = os.ReadFile(filepath.Join(dir, report.ServerMetricsFile)); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &sm); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]float64{"vllm:kv_offload_size_cpu_to_gpu": c.BytesLoaded, "vllm:kv_offload_size_gpu_to_cpu": c.BytesStored} {
				got := 0.0
				for _, se := range sm.Metrics[name].Series {
					got += se.Stats["sum"]
				}
				if len(sm.Metrics[name].Series) != 2 || got != want {
					t.Errorf("%s: %d series summing to %g bytes, want 2 and %g", name, len(sm.Metrics[name].Series), got, want)
				}
			}
			row := readCSV(t, filepath.Join(dir, "summary.csv"))[0]
			if row["kv_cpu_bytes_loaded"] != strconv.FormatFloat(c.BytesLoaded, 'g', -1, 64) || row["kv_cpu_hit_rate"] == "" || row["kv_gpu_hit_rate"] == "" {
				t.Errorf("summary.csv tier columns: %v", row)
			}
		})
	}
}
