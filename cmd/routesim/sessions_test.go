package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunSessions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, _, err := runCLI("run", "--workload", "sessions", "--concurrency", "8", "--sessions", "16", "--turns", "2..3",
		"--n", "2", "--policy", "kv", "--max-batch-size", "32", "--block-size", "32", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "closed-loop sessions") || !strings.Contains(out, "sessions: 16 started, 16 completed") {
		t.Errorf("summary:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "requests.csv")); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "sessions", "--concurrency", "4"}, "stopping rule"},
		{[]string{"--workload", "sessions", "--sessions", "4"}, "--concurrency 0"},
		{[]string{"--workload", "sessions", "--concurrency", "2", "--sessions", "2", "--turns", "5..2"}, "MIN..MAX"},
		{[]string{"--workload", "chats"}, "--workload \"chats\""},
	} {
		_, _, err := runCLI(append([]string{"run"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v, want %q (exit 2)", tc.args, err, tc.want)
		}
	}
}
