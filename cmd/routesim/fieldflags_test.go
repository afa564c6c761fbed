package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/scenario"
)

// TestFieldErrorsNameRealFlags: library errors name run-description
// fields; the CLI prints them as flags, and every flag it prints exists.
func TestFieldErrorsNameRealFlags(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	spec := scenario.Defaults()
	registerSim(fs, &spec) // registers the session and synthetic flags too
	flagRE := regexp.MustCompile(`--[a-z0-9-]+`)
	for _, args := range [][]string{
		{"run", "--workload", "sessions", "--concurrency", "0", "--think-time", "-1", "--new-cv", "nan", "--turns", "3..2"},
		{"run", "--workload", "synthetic", "--requests", "0", "--rate", "0", "--arrival", "x", "--isl-cv", "-1", "--prefix-groups", "2"},
		{"run", "--max-num-seqs", "0", "--warmup", "-1", "--request-timeout-seconds", "-1", "--router-temperature", "-1", "--policy", "kv", "--router-queue-threshold", "-2"},
		{"run", "--max-model-len", "99999999", "--vllm-version", "x", "--kv-cache-tokens", "-1"},
		{"run", "--skip", "-1", "--first", "-1", "--max-isl", "-1", "--kv-cache-dtype", "int3", "--quant", "int3"},
		{"run", "--kv-offloading-size", "NaN"},
		{"run", "--lmcache-max-local-cpu-size", "NaN"},
		{"run", "--lmcache-max-local-cpu-size", "8", "--lmcache-chunk-size", "100"},
		{"run", "--lmcache-max-local-cpu-size", "8", "--kv-offloading-size", "8"},
		{"run", "--lmcache-warm"},
		{"run", "--kvbm-cpu-cache-gb", "-1"},
		{"run", "--kvbm-disk-cache-gb", "NaN"},
		{"run", "--kvbm-cpu-cache-gb", "10", "--kv-offloading-size", "10"},
		{"run", "--kvbm-disk-cache-gb", "100"},
		{"run", "--kvbm-cpu-cache-gb", "10", "--kvbm-disk-read-gb-s", "5"},
		{"run", "--kvbm-cpu-cache-gb", "10", "--kvbm-disk-cache-gb", "10", "--kvbm-disk-write-gb-s", "1e300"},
		{"run", "--kvbm-kv-events", "merged"},
		{"run", "--kvbm-kv-events", "passthrough"},
	} {
		_, _, err := runCLI(args...)
		if err == nil {
			t.Errorf("%v: accepted", args)
			continue
		}
		text := err.Error()
		if m := regexp.MustCompile(`\b[a-z]+_[a-z_]+\b`).FindAllString(text, -1); len(m) > 0 && !(len(m) == 1 && m[0] == "max_position_embeddings") {
			t.Errorf("%v: a field name leaked into the CLI's message: %s", args, text)
		}
		for _, f := range flagRE.FindAllString(text, -1) {
			if fs.Lookup(strings.TrimPrefix(f, "--")) == nil {
				t.Errorf("%v: names %s, which is no flag:\n%s", args, f, text)
			}
		}
		if exitCode(err) != 2 {
			t.Errorf("%v: exit %d, want 2", args, exitCode(err))
		}
	}
}
