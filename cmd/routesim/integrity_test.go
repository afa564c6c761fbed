package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/crash"
	"github.com/routesim/routesim/sweep"
)

// tinySweep is a four-point sweep of 60 trace requests (two sizes, two
// seeds), quick enough to run many times.
func tinySweep(out string, extra ...string) []string {
	return append([]string{"sweep", "--trace", smallTrace, "--skip", "0", "--n", "2,4", "--seeds", "2", "--quiet",
		"--policy", "round-robin", "--bootstrap", "20", "--out", out}, extra...)
}

// editPoint rewrites the first point file of dir (in grid order) with
// change applied to its text, and returns its path.
func editPoint(t *testing.T, dir string, change func(string) string) string {
	t.Helper()
	pts, _ := filepath.Glob(filepath.Join(sweep.PointsDir(dir), "*.json"))
	if len(pts) == 0 {
		t.Fatal("no point files")
	}
	b := read(t, pts[0])
	after := change(string(b))
	if after == string(b) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(pts[0], []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
	return pts[0]
}

var p50 = regexp.MustCompile(`("ttft_ms":\{[^}]*"p50":)[0-9.e+-]+`)

// TestEditedPointIsNeverPublished: a finished point edited after the
// sweep (p50 changed, the summary dropped, ttft_ms nulled or cut) is
// refused by a resumed sweep, by plot and by merge, naming the file; none
// of them publishes it or crashes on it.
func TestEditedPointIsNeverPublished(t *testing.T) {
	edits := map[string]func(string) string{
		"p50 1.0": func(s string) string { return p50.ReplaceAllString(s, "${1}1.0") },
		"p50 -5":  func(s string) string { return p50.ReplaceAllString(s, "${1}-5") },
		"summary dropped": func(s string) string {
			return regexp.MustCompile(`"summary":\{.*?"workers":\[[^\]]*\]\},`).ReplaceAllString(s, "")
		},
		"ttft_ms null": func(s string) string {
			return regexp.MustCompile(`"ttft_ms":\[[^\]]*\]`).ReplaceAllString(s, `"ttft_ms":null`)
		},
		"ttft_ms short": func(s string) string {
			return regexp.MustCompile(`"ttft_ms":\[([^\]]*),[^,\]]*\]`).ReplaceAllString(s, `"ttft_ms":[$1]`)
		},
		"ttft_ms missing": func(s string) string { return regexp.MustCompile(`,"ttft_ms":\[[^\]]*\]`).ReplaceAllString(s, ``) },
	}
	for name, change := range edits {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if _, _, err := runCLI(tinySweep(dir)...); err != nil {
				t.Fatal(err)
			}
			want := read(t, filepath.Join(dir, "summary.csv"))
			path := editPoint(t, dir, change)
			for _, args := range [][]string{tinySweep(dir), {"plot", dir}, {"merge", filepath.Join(t.TempDir(), "merged"), dir}} {
				_, _, err := runCLI(args...)
				var in *crash.Internal
				if err == nil || errors.As(err, &in) || !strings.Contains(err.Error(), filepath.Base(path)) {
					t.Errorf("%s: %v; want a clean error naming %s", args[0], err, filepath.Base(path))
				}
			}
			if got := read(t, filepath.Join(dir, "summary.csv")); !bytes.Equal(got, want) {
				t.Error("summary.csv changed: the edited point was published")
			}
		})
	}
}

// TestMergeWritesNothingUnlessEveryShardIsSound: a missing shard, a bad
// point in one or a shard of another sweep fail merge before it writes
// anything; the complete set merges.
func TestMergeWritesNothingUnlessEveryShardIsSound(t *testing.T) {
	root := t.TempDir()
	var shards []string
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		d := filepath.Join(root, "shard"+s[:1])
		if _, _, err := runCLI(tinySweep(d, "--shard", s)...); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, d)
	}
	other := filepath.Join(root, "other")
	if _, _, err := runCLI(tinySweep(other, "--seeds", "1", "--shard", "1/3")...); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "merged")
	for _, c := range []struct {
		name string
		dirs []string
		want string
	}{
		{"missing shard", []string{shards[0], shards[2]}, "shard 1/3"},
		{"another sweep's shard", []string{shards[0], other, shards[2]}, "different sweep"},
		{"a directory twice", []string{shards[0], shards[1], shards[1], shards[2]}, "twice"},
		{"OUT among the shards", append([]string{shards[0]}, shards...), "is also a shard"},
	} {
		args := append([]string{"merge", out}, c.dirs...)
		if c.name == "OUT among the shards" {
			args = append([]string{"merge"}, c.dirs...)
		}
		_, _, err := runCLI(args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%s: merge left %s behind", c.name, out)
		}
	}
	path := editPoint(t, shards[1], func(s string) string { return p50.ReplaceAllString(s, "${1}1.0") })
	if _, _, err := runCLI(append([]string{"merge", out}, shards...)...); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("an edited shard point: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("merge of a bad shard left %s behind", out)
	}
}
