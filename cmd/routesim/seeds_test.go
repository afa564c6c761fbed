package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedsVaryWhereRunsDo (issue 33, item 23): the default profile
// carries the run-to-run noise the 8×A100 study's repetitions show, so a
// trace replay under round-robin differs from seed to seed; a profile
// without noise, under policies that draw nothing, gives identical seeds,
// and the sweep says so instead of printing intervals.
func TestSeedsVaryWhereRunsDo(t *testing.T) {
	dir := t.TempDir()
	noisy := filepath.Join(dir, "noisy")
	if _, _, err := runCLI("sweep", "--n", "2", "--seeds", "3", "--first", "200", "--policy", "round-robin,prefix-hash", "--out", noisy, "--quiet"); err != nil {
		t.Fatal(err)
	}
	p50 := map[string]bool{}
	for _, row := range readCSV(t, filepath.Join(noisy, "summary.csv")) {
		if row["policy"] == "round-robin" {
			p50[row["ttft_ms_p50"]] = true
		}
	}
	if len(p50) != 3 {
		t.Errorf("round-robin's TTFT p50 over 3 seeds took %d values on the default profile, want 3: %v", len(p50), p50)
	}

	quiet := filepath.Join(dir, "noiseless")
	out, _, err := runCLI("sweep", "--n", "2..3", "--seeds", "5", "--first", "200", "--policy", "round-robin,prefix-hash",
		"--gpu", "H100-SXM5-80GB", "--model", "Llama-3.1-8B", "--out", quiet, "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "seeds: all 5 seeds gave identical results") {
		t.Errorf("a noiseless sweep's stdout does not say its seeds are identical:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " vs ") && (strings.Contains(line, "CI") || strings.Contains(line, "replicates")) {
			t.Errorf("identical seeds, yet an interval: %s", line)
		}
	}
	b, err := os.ReadFile(filepath.Join(quiet, "crossover.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cross struct {
		Crossovers []struct {
			SeedsIdentical bool `json:"seeds_identical"`
		} `json:"crossovers"`
	}
	if err := json.Unmarshal(b, &cross); err != nil {
		t.Fatal(err)
	}
	if len(cross.Crossovers) == 0 {
		t.Fatalf("crossover.json has no crossovers: %s", b)
	}
	for _, c := range cross.Crossovers {
		if !c.SeedsIdentical {
			t.Errorf("crossover.json does not mark identical seeds: %s", b)
			break
		}
	}
}

// readCSVRows reads a CSV file's records, its header first.
func readCSVRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// readCSV reads a CSV file with a header into one map per row.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	rows := readCSVRows(t, path)
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}
