package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/routesim/routesim/report/parquet"
	"github.com/routesim/routesim/report/parquet/parquettest"
	"github.com/routesim/routesim/sweep"
)

// smallSweep is a quick grid: 2 sizes × 2 policies × 2 seeds on 200 requests.
var smallSweep = []string{"sweep", "--n", "2,4", "--policy", "round-robin,kv-admission", "--seeds", "2", "--first", "200",
	"--bootstrap", "50", "--quiet"}

func sweepTo(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	out, _, err := runCLI(append(append(append([]string{}, smallSweep...), "--out", dir), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSweepSameBytesForAnyJobsAndShards(t *testing.T) {
	root := t.TempDir()
	one, two := filepath.Join(root, "j1"), filepath.Join(root, "j2")
	stdout := sweepTo(t, one, "--jobs", "1")
	sweepTo(t, two, "--jobs", "2")
	if !strings.Contains(stdout, "crossover on ttft-p50") {
		t.Errorf("no crossover table:\n%s", stdout)
	}
	files := []string{"summary.csv", "summary.parquet", "crossover.json", "manifest.json"}
	for _, f := range files {
		if !bytes.Equal(read(t, filepath.Join(one, f)), read(t, filepath.Join(two, f))) {
			t.Errorf("%s differs between --jobs 1 and --jobs 2", f)
		}
	}
	var shards []string
	for i := 0; i < 3; i++ {
		d := filepath.Join(root, "shard", string(rune('a'+i)))
		sweepTo(t, d, "--shard", string(rune('0'+i))+"/3")
		shards = append(shards, d)
	}
	merged := filepath.Join(root, "merged")
	if _, _, err := runCLI(append([]string{"merge", merged}, shards...)...); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !bytes.Equal(read(t, filepath.Join(one, f)), read(t, filepath.Join(merged, f))) {
			t.Errorf("%s differs between the unsharded sweep and 3 merged shards", f)
		}
	}
	if !bytes.Equal(read(t, filepath.Join(one, "plots", "latency-vs-completeness.png")), read(t, filepath.Join(merged, "plots", "latency-vs-completeness.png"))) {
		t.Error("plots differ after merging")
	}
}

func TestSweepResumesAfterCancel(t *testing.T) {
	root := t.TempDir()
	full := filepath.Join(root, "full")
	sweepTo(t, full)
	cut := filepath.Join(root, "cut")
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	args := append(append([]string{}, smallSweep[1:]...), "--out", cut, "--jobs", "1")
	args = args[:len(args)]
	// Cancel after the first finished point.
	err := sweepWithContext(ctx, removeFlag(args, "--quiet"), io.Discard, &cancelAfter{n: 1, cancel: cancel, calls: &calls})
	if err == nil {
		t.Fatal("a cancelled sweep reported success")
	}
	pts, _ := os.ReadDir(filepath.Join(cut, "points"))
	if len(pts) == 0 || len(pts) >= 8 {
		t.Fatalf("%d points finished before the cancel took effect; want some but not all", len(pts))
	}
	if _, err := os.Stat(filepath.Join(cut, "summary.csv")); !os.IsNotExist(err) {
		t.Error("an interrupted sweep wrote summary.csv")
	}
	// A different sweep must not reuse the interrupted one's points.
	if _, _, err := runCLI(append(append([]string{}, smallSweep...), "--out", cut, "--first", "150")...); err == nil ||
		!strings.Contains(err.Error(), "holds a different sweep") {
		t.Errorf("a different sweep into an interrupted one's directory: %v", err)
	}
	sweepTo(t, cut) // resume
	for _, f := range []string{"summary.csv", "summary.parquet", "crossover.json"} {
		if !bytes.Equal(read(t, filepath.Join(full, f)), read(t, filepath.Join(cut, f))) {
			t.Errorf("%s differs between an uninterrupted and a resumed sweep", f)
		}
	}
}

// cancelAfter is a progress sink (stderr) that cancels after n lines.
type cancelAfter struct {
	n      int
	cancel func()
	calls  *int
}

func (c *cancelAfter) Write(b []byte) (int, error) {
	*c.calls += bytes.Count(b, []byte("\n"))
	if *c.calls >= c.n {
		c.cancel()
	}
	return len(b), nil
}

func removeFlag(args []string, flag string) []string {
	var out []string
	for _, a := range args {
		if a != flag {
			out = append(out, a)
		}
	}
	return out
}

func TestSweepParquetReadsBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	sweepTo(t, dir, "--per-request")
	for name, rows := range map[string]int{"summary.parquet": 8, "requests.parquet": 8 * 200} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquettest.Read(data)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(pf.Columns[0].Ints); n != rows {
			t.Errorf("%s: %d rows, want %d", name, n, rows)
		}
		// Column names are SQL-safe, and the same as the CSV's where
		// the sweep writes one (per-request rows are Parquet only).
		csvHead, csvErr := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, ".parquet")+".csv"))
		var names []string
		for _, c := range pf.Columns {
			names = append(names, c.Name)
			if strings.ContainsAny(c.Name, "-. ") {
				t.Errorf("%s column %q needs quoting in SQL", name, c.Name)
			}
		}
		if h, _, _ := strings.Cut(string(csvHead), "\n"); csvErr == nil && h != strings.Join(names, ",") {
			t.Errorf("%s columns differ from the CSV's:\n%s\n%s", name, strings.Join(names, ","), h)
		}
		if c := pf.Column("ttft_ms"); name == "requests.parquet" && (c == nil || c.Unit != "ms") {
			t.Errorf("%s: no ttft_ms column in ms", name)
		}
		if c := pf.Column("ttft_ms_p50"); name == "summary.parquet" && (c == nil || c.Kind != parquet.Float64 || c.Unit != "ms") {
			t.Errorf("summary.parquet: no float ttft_ms_p50 column in ms")
		}
	}
}

func TestSweepBadInput(t *testing.T) {
	ro := filepath.Join(t.TempDir(), "ro")
	os.MkdirAll(ro, 0o555)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "16..2"}, "runs backwards"},
		{[]string{"--n", "0..4"}, "values must be in [1, 4096]"},
		{[]string{"--n", "2..5000"}, "values must be in [1, 4096]"},
		{[]string{"--n", "1..9223372036854775807:2"}, "values must be in [1, 4096]"},
		{[]string{"--workload", "sessions", "--concurrency", "1..2000000"}, "values must be in [1, 100000]"},
		{[]string{"--workload", "synthetic", "--rate", "1..1000000000"}, "values must be in [1, 1000000]"},
		{[]string{"--policy", "round-robin,fastest"}, "unknown policy \"fastest\""},
		{[]string{"--metric", "vibes"}, "unknown metric"},
		{[]string{"--metric", "goodput"}, "--slo-ttft"},
		{[]string{"--shard", "3/3"}, "--shard"},
		{[]string{"--seeds", "0"}, "--seeds 0"},
	} {
		_, _, err := runCLI(append([]string{"sweep", "--out", filepath.Join(t.TempDir(), "x")}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v, want %q with exit 2", tc.args, err, tc.want)
		}
	}
	if os.Geteuid() != 0 { // root writes anywhere
		if _, _, err := runCLI("sweep", "--n", "2", "--out", filepath.Join(ro, "sub")); err == nil || exitCode(err) == 0 {
			t.Errorf("unwritable --out: %v", err)
		}
	}
	if _, _, err := runCLI("sweep", "--n", "2", "--out", "/proc/routesim-cannot-write"); err == nil || exitCode(err) == 0 {
		t.Errorf("unwritable --out: %v", err)
	}
}

// TestSweepUncertainty: --uncertainty K puts the draws and bands into the
// point files, band columns into summary.csv, and model uncertainty into
// the crossover bootstrap; the bytes repeat.
func TestSweepUncertainty(t *testing.T) {
	var outs [2][]byte
	for i := range outs {
		dir := filepath.Join(t.TempDir(), "u")
		_, _, err := runCLI("sweep", "--n", "2,4", "--first", "200", "--seeds", "2", "--uncertainty", "3", "--bootstrap", "50", "--quiet", "--out", dir)
		if err != nil {
			t.Fatal(err)
		}
		csvb, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(csvb), "ttft_ms_p50_band_lo,ttft_ms_p50_band_hi") {
			t.Errorf("summary.csv has no band columns")
		}
		cross, _ := os.ReadFile(filepath.Join(dir, "crossover.json"))
		if !strings.Contains(string(cross), `"model_uncertainty": true`) {
			t.Errorf("crossover.json does not say it drew coefficients")
		}
		outs[i] = append(csvb, cross...)
	}
	if string(outs[0]) != string(outs[1]) {
		t.Error("two identical sweeps with --uncertainty differ")
	}
	if _, _, err := runCLI("sweep", "--n", "2", "--gpu", "A100-SXM4-80GB", "--model", "Llama-3.1-8B", "--profile", "blis", "--uncertainty", "2", "--quiet", "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "posterior") {
		t.Errorf("a profile without a posterior: %v", err)
	}
}

// TestSweepDryRun: --dry-run lists exactly the shard's points (every k-th
// of the grid) and writes nothing; a bad flag still fails it.
func TestSweepDryRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out := sweepTo(t, dir, "--shard", "1/3", "--dry-run")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("--dry-run created %s (%v)", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "shard 1/3 would run 3 of the grid's 8 points") {
		t.Errorf("header %q", lines[0])
	}
	want := []string{"n=002.policy=round-robin.seed=1", "n=004.policy=round-robin.seed=0", "n=004.policy=kv-admission.seed=1"}
	if len(lines) != 1+len(want) {
		t.Fatalf("%d point lines, want %d:\n%s", len(lines)-1, len(want), out)
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[1+i], w) {
			t.Errorf("point %d: %q, want …%s", i, lines[1+i], w)
		}
	}
	if _, _, err := runCLI(append(append([]string{}, smallSweep...), "--dry-run", "--n", "0")...); err == nil {
		t.Error("--dry-run accepted --n 0")
	}
}

// TestSweepRequestsMatchRunCSV: one per-request schema. A sweep's
// requests.parquet has the point's axes and then exactly requests.csv's
// columns, and a point's rows hold, cell for cell, what routesim run
// writes for the same settings (NULL where the CSV is empty).
func TestSweepRequestsMatchRunCSV(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	sweepTo(t, dir, "--per-request", "--seed", "5")
	data, err := os.ReadFile(filepath.Join(dir, "requests.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquettest.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	// The same point through routesim run: the sweep's base scenario
	// (its manifest's), at the point's N, policy and seed.
	var m struct{ Base json.RawMessage }
	if err := json.Unmarshal(read(t, filepath.Join(dir, "manifest.json")), &m); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(base, m.Base, 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(t.TempDir(), "r")
	if _, _, err := runCLI("run", "--scenario", base, "--n", "4", "--policy", "kv-admission", "--seed", "6", "--out", run); err != nil {
		t.Fatal(err)
	}
	rows := readCSVRows(t, filepath.Join(run, "requests.csv"))
	names := append(sweep.AxisNames(), rows[0]...)
	var got []string
	for _, c := range pf.Columns {
		got = append(got, c.Name)
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("requests.parquet columns\n%s\nwant the axes, then requests.csv's\n%s", strings.Join(got, ","), strings.Join(names, ","))
	}
	cell := func(c *parquet.Column, r int) string {
		switch {
		case c.Null != nil && c.Null[r]:
			return ""
		case c.Kind == parquet.Int64:
			return strconv.FormatInt(c.Ints[r], 10)
		case c.Kind == parquet.Float64:
			return strconv.FormatFloat(c.Floats[r], 'g', -1, 64)
		}
		return c.Strings[r]
	}
	na := len(sweep.AxisNames())
	k, nulls := 0, 0
	for r := range pf.Columns[0].Ints {
		if cell(pf.Column("n"), r) != "4" || cell(pf.Column("policy"), r) != "kv-admission" || cell(pf.Column("seed"), r) != "6" {
			continue
		}
		k++
		if k >= len(rows) {
			t.Fatalf("the point has more than the run's %d requests", len(rows)-1)
		}
		for j := range rows[0] {
			c := &pf.Columns[na+j]
			if v := cell(c, r); v != rows[k][j] {
				t.Fatalf("request %d, %s: parquet %q, requests.csv %q", k-1, c.Name, v, rows[k][j])
			}
			if rows[k][j] == "" && c.Null != nil {
				nulls++
			}
		}
	}
	if k != len(rows)-1 || k != 200 {
		t.Errorf("the point has %d rows, the run %d requests (want 200)", k, len(rows)-1)
	}
	if nulls == 0 {
		t.Error("no NULL compared: the test saw no request with a missing value")
	}
}
