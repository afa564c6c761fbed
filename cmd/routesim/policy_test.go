package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/policy"
)

func TestRunEveryPolicy(t *testing.T) {
	for _, name := range policy.Names() {
		out, _, err := runCLI("run", "--trace", smallTrace, "--n", "2", "--rate-scale", "4", "--policy", name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(out, "policy "+name) || !strings.Contains(out, "completeness") {
			t.Errorf("%s: summary\n%s", name, out)
		}
	}
}

func TestPoliciesListsParametersAndDefaults(t *testing.T) {
	out, _, err := runCLI("policies")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range policy.Names() {
		if !strings.Contains(out, "\n"+name+"\n") {
			t.Errorf("policies output lacks %s", name)
		}
	}
	for _, want := range []string{"--router-queue-threshold", "default -1", "--active-decode-blocks-threshold", "--active-prefill-tokens-threshold-frac"} {
		if !strings.Contains(out, want) {
			t.Errorf("policies output lacks %q", want)
		}
	}
	// Every router that follows an upstream project names its source, and
	// every parameter it reads appears with its default under its name.
	docs := map[string]policy.Param{}
	for _, d := range policy.ParamList {
		docs[d.Flag] = d
	}
	for _, name := range policy.Names() {
		e, _ := policy.Lookup(name)
		block := out[strings.Index(out, "\n"+name+"\n"):]
		if next := strings.Index(block[1:], "\n\n"); next >= 0 {
			block = block[:next+1]
		}
		if e.Source != "" && !strings.Contains(block, "source: "+e.Source) {
			t.Errorf("%s: source %q not listed", name, e.Source)
		}
		for _, u := range e.Uses {
			if !strings.Contains(block, "--"+u) || !strings.Contains(block, "default "+docs[u].DefaultText()) {
				t.Errorf("%s: parameter --%s or its default %s not listed:\n%s", name, u, docs[u].DefaultText(), block)
			}
		}
	}
	for _, name := range []string{"sglang-cache-aware", "llm-d", "session-affinity", "prefix-aware", "prefix-hash", "ray-prefix-affinity", "aibrix-least-request", "aibrix-prefix-cache"} {
		if e, err := policy.Lookup(name); err != nil || e.Source == "" {
			t.Errorf("%s: registered without an upstream source (%v)", name, err)
		}
	}
}

func TestTraceDecisions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	if _, _, err := runCLI("run", "--trace", smallTrace, "--n", "3", "--policy", "kv", "--dynamo-version", "1.4.0", "--trace-decisions", path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d struct {
			TNs     int64      `json:"t_ns"`
			Outcome string     `json:"outcome"`
			Worker  *int       `json:"worker"`
			Reason  string     `json:"reason"`
			Scores  []*float64 `json:"scores"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		if d.Outcome != "dispatch" || d.Worker == nil || len(d.Scores) != 3 || d.Reason == "" {
			t.Errorf("line %d: %s", lines+1, sc.Text())
		}
		lines++
	}
	if lines != 56 { // 60 requests, 4 longer than max-model-len never reach the router
		t.Errorf("%d decisions, want 56", lines)
	}
}

// TestTraceDecisionsShowsTheRouterQueueAndMonitor: under Dynamo 1.2's
// defaults at twice the rate on three workers, --trace-decisions records
// parked requests, their dispatch from the queue, and the busy monitor's
// changes (a worker entering and leaving the busy set).
func TestTraceDecisionsShowsTheRouterQueueAndMonitor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	if _, _, err := runCLI("run", "--trace", smallTrace, "--n", "3", "--policy", "kv", "--rate-scale", "8", "--trace-decisions", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parked := map[int]bool{}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d struct {
			Request *int   `json:"request"`
			Outcome string `json:"outcome"`
			Monitor string `json:"monitor"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		switch {
		case d.Monitor != "":
			counts["monitor "+d.Monitor]++
		case d.Outcome == "park":
			parked[*d.Request] = true
			counts["park"]++
		case d.Outcome == "dispatch" && parked[*d.Request]:
			counts["dispatch from the queue"]++
		}
	}
	for _, k := range []string{"park", "dispatch from the queue", "monitor busy", "monitor free"} {
		if counts[k] == 0 {
			t.Errorf("no %q line in the trace (%v)", k, counts)
		}
	}
}

func TestPolicyFlagValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "round-robin", "--router-queue-threshold", "4"}, "--router-queue-threshold has no effect with --policy round-robin"},
		{[]string{"--policy", "kv-backpressure", "--active-decode-blocks-threshold", "0.5"}, "--active-decode-blocks-threshold has no effect with --policy kv-backpressure"},
		{[]string{"--policy", "kv", "--router-queue-threshold", "-3"}, "--router-queue-threshold -3"},
		{[]string{"--policy", "round-robin", "--event-plane-delay", "1ms"}, "--event-plane-delay has no effect"},
		{[]string{"--policy", "kv", "--router-temperature", "-1"}, "--router-temperature -1"},
		{[]string{"--retry", "2", "--retry-backoff", "0s"}, "--retry-backoff must be > 0"},
		{[]string{"--policy", "round-robin", "--kv-event-lag", "1ms"}, "--kv-event-lag has no effect"},
	} {
		_, _, err := runCLI(append([]string{"run", "--trace", smallTrace}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: error %v, want %q (exit 2)", tc.args, err, tc.want)
		}
	}
}
