package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/policy"
)

// policiesCmd lists every registered policy with the parameters it reads
// and their defaults.
func policiesCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim policies", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("dynamo-version", "", "print this Dynamo release's router defaults, each with the source it was read from (0.9.0, 1.2.0, 1.4.0)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim policies [--dynamo-version V]\n\nList the routing policies, what each does, the parameter flags it reads (with defaults) and the router settings it observes; with --dynamo-version, what --router-mode kv is in that release.\n")
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.Changed("dynamo-version") {
		rel, err := policy.ReleaseOf(*version)
		if err != nil {
			return usageError{fmt.Errorf("--dynamo-version: %w", err)}
		}
		_, err = io.WriteString(stdout, releaseTable(rel))
		return err
	}
	docs := map[string]policy.Param{}
	for _, d := range policy.ParamList {
		docs[d.Flag] = d
	}
	width := 0
	for _, d := range policy.ParamList {
		width = max(width, len(d.Flag))
	}
	var b strings.Builder
	b.WriteString("Policies (routesim run --policy NAME [parameter flags]):\n")
	for _, name := range policy.Names() {
		e, _ := policy.Lookup(name)
		fmt.Fprintf(&b, "\n%s\n    %s\n", name, e.Summary)
		if e.Source != "" {
			fmt.Fprintf(&b, "    source: %s\n", e.Source)
		}
		for _, u := range e.Uses {
			d := docs[u]
			fmt.Fprintf(&b, "    --%-*s  default %-8s  %s\n", width, u, d.DefaultText(), d.Help)
		}
		for _, f := range e.Reads()[len(e.Uses):] {
			d := routerFlagDocs[f]
			fmt.Fprintf(&b, "    --%-*s  default %-8s  %s\n", width, f, d[0], d[1])
		}
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// releaseTable is what --router-mode kv is in release rel: every default
// routesim models, then where each was read.
func releaseTable(rel policy.Release) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Dynamo %s, --router-mode kv (routesim --policy kv --dynamo-version %s):\n\n", rel.Version, rel.Version)
	off := func(v float64, unit string) string {
		if v == 0 {
			return "off"
		}
		return strconv.FormatFloat(v, 'g', -1, 64) + unit
	}
	tie := "uniform among the minimum-cost workers"
	if rel.TreeSizeTieBreak {
		tie = "the minimum-cost worker whose prefix index holds the fewest blocks, then the lowest index"
	}
	rows := [][2]string{
		{"cost", "prefill_load_scale 1 · max((prefill + ISL)/block − overlap_score_credit 1 · overlap, 0) + decode blocks; temperature 0"},
		{"tie-break", tie},
		{"--router-queue-threshold", off(rel.QueueThreshold, " × max-num-batched-tokens (park while every worker's router-tracked prefill tokens exceed it; FCFS, head-of-line)")},
		{"--active-decode-blocks-threshold", off(rel.DecodeBlocksFrac, " × total blocks (the router's booked prompt blocks or the engine's kv_used_blocks, strict >, latched)")},
		{"--active-prefill-tokens-threshold", map[bool]string{true: "off", false: strconv.Itoa(rel.PrefillTokens) + " router-tracked prefill tokens (strict >)"}[rel.PrefillTokens == 0]},
		{"--active-prefill-tokens-threshold-frac", off(rel.PrefillTokensFrac, " × max-num-batched-tokens (strict >)")},
		{"busy workers", rel.Gate.String()},
		{"free-set reset", fmt.Sprintf("every %g s%s", float64(rel.ReconcileNs)/1e9, map[bool]string{true: ", keeping the overloaded workers", false: ""}[rel.KeepOverloaded])},
		{"parked request's overlap", map[bool]string{true: "kept from its arrival", false: "recomputed at dequeue (or no queue)"}[rel.FreezeParkedOverlap]},
		{"refusal", fmt.Sprintf("HTTP %d %q", rel.OverloadCode, rel.OverloadMessage)},
		{"KV tiers below the GPU", tiersText(rel.Tiers)},
	}
	w := 0
	for _, r := range rows {
		w = max(w, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s  %s\n", w, r[0], r[1])
	}
	fmt.Fprintf(&b, "\nRead from ai-dynamo/dynamo main at the release's cut:\n")
	for _, src := range rel.Sources {
		fmt.Fprintf(&b, "  %s: %s\n", src[0], src[1])
	}
	return b.String()
}

// routerFlagDocs describes the router settings policy.Entry.Reads names
// (default, meaning) for the policy list.
var routerFlagDocs = map[string][2]string{
	"metrics-lag":       {"1ms", "delay of the workers' published KV usage and waiting queues (engine metrics)"},
	"kv-event-lag":      {"0s", "delay of KV stored/removed events reaching the router"},
	"event-plane-delay": {"0s", "delay of the router's own load messages (ActiveLoad) reaching its busy monitor"},
}

// tiersText says what a release's router makes of the KV events of the
// tiers below the GPU (policy.TierReading).
func tiersText(t policy.TierReading) string {
	s := "GPU events only"
	switch {
	case t.Lower:
		s = fmt.Sprintf("CPU_PINNED and DISK events (KVBM with --kvbm-kv-events passthrough) in host and disk indexes matched on from each worker's GPU match, credited --router-host-cache-hit-weight %g and --router-disk-cache-hit-weight %g per block; KVBM's dedup consolidator (the default) sends its blocks as GPU events", t.HostWeight, t.DiskWeight)
	case t.MediumIgnored:
		s = "one index, the medium ignored (KVBM's consolidator has only its dedup mode: its blocks come as GPU events)"
	}
	switch t.NativeCPU {
	case policy.CPURemovesDevice:
		s += "; vLLM's own CPU tier (\"CPU\", no token ids): stores dropped, evictions erase the GPU entry"
	case policy.CPURemovesHost:
		s += "; vLLM's own CPU tier (\"CPU\", no token ids): stores dropped, evictions applied to the host index"
	}
	return s
}
