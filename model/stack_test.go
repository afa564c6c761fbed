package model

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestStacksAreWellFormed: every stack runs a known engine, every charged
// term is a coefficient within its bound with a source and a moment, every
// term that is not charged says why, and an owned term is one a profile
// can carry.
func TestStacksAreWellFormed(t *testing.T) {
	if Stacks[0].Name != StackDynamoVLLM || StackFor("vllm") != StackDynamoVLLM || StackFor("trtllm") != StackDynamoTRTLLM {
		t.Fatalf("default stacks: %v, vllm → %s, trtllm → %s", StackNames(), StackFor("vllm"), StackFor("trtllm"))
	}
	seen := map[string]bool{}
	for _, s := range Stacks {
		if seen[s.Name] {
			t.Errorf("stack %s listed twice", s.Name)
		}
		seen[s.Name] = true
		if s.Engine != "vllm" && s.Engine != "trtllm" || s.Doc == "" {
			t.Errorf("%s: engine %q, doc %q", s.Name, s.Engine, s.Doc)
		}
		for _, term := range s.Terms {
			name := s.Name + "/" + term.Name()
			if term.Source == "" || term.Component == "" {
				t.Errorf("%s: no source or component", name)
			}
			if !term.Modelled() {
				if term.What == "" || !math.IsNaN(term.Value) || !strings.HasPrefix(term.Source, "not charged") {
					t.Errorf("%s: a term that is not charged needs a name, no value and the reason (%q)", name, term.Source)
				}
				continue
			}
			c, ok := CoefficientByName(term.Coef)
			if !ok {
				t.Errorf("%s: no such coefficient", name)
				continue
			}
			if !(term.Value >= 0 && term.Value <= c.Max/10) || term.Applies == "" {
				t.Errorf("%s: value %g (bound %g), applies %q", name, term.Value, c.Max, term.Applies)
			}
			if term.Value > 0 && !(term.LogSD > 0) {
				t.Errorf("%s: a non-zero term needs a prior spread", name)
			}
		}
	}
}

// TestForStack: a profile measured on another stack takes the run's
// stack's own terms and keeps the shared ones (Dynamo's frontend); one
// measured on the run's stack is used as it is.
func TestForStack(t *testing.T) {
	vllm := kernelProfileForTest(t)
	if vllm.Stack != "" || vllm.ExecutorHostNs != 0 {
		t.Fatalf("built-in profile %s carries stack %q, executor_host_ns %g", vllm.Name, vllm.Stack, vllm.ExecutorHostNs)
	}
	trt := *vllm
	trt.Stack, trt.ExecutorHostNs, trt.FrontendNs = StackDynamoTRTLLM, 1.2e6, 7e6
	tests := []struct {
		name      string
		p         *Profile
		stack     string
		same      bool
		executor  float64
		frontend  float64
		noteAdded string
	}{
		{"vllm profile on trtllm", vllm, StackDynamoTRTLLM, false, 580e3, vllm.FrontendNs, "run on dynamo-trtllm: executor_host_ns = 580000 ns/iteration"},
		{"vllm profile on its own stack", vllm, StackDynamoVLLM, false, 0, vllm.FrontendNs, "run on dynamo-vllm: executor_host_ns = 0"},
		{"trtllm calibration on trtllm", &trt, StackDynamoTRTLLM, true, 1.2e6, 7e6, ""},
		{"trtllm calibration on vllm", &trt, StackDynamoVLLM, false, 0, 7e6, "Measured on dynamo-trtllm, run on dynamo-vllm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := *tc.p
			q := ForStack(tc.p, tc.stack)
			if (q == tc.p) != tc.same {
				t.Errorf("returned the profile itself: %v, want %v", q == tc.p, tc.same)
			}
			if q.Stack != tc.stack || q.ExecutorHostNs != tc.executor || q.FrontendNs != tc.frontend || q.StepBaseNs != tc.p.StepBaseNs {
				t.Errorf("stack %q executor %g frontend %g step base %g, want %q %g %g %g", q.Stack, q.ExecutorHostNs, q.FrontendNs, q.StepBaseNs,
					tc.stack, tc.executor, tc.frontend, tc.p.StepBaseNs)
			}
			if !strings.Contains(q.Note, tc.noteAdded) {
				t.Errorf("note %q does not say %q", q.Note, tc.noteAdded)
			}
			if *tc.p != before {
				t.Error("ForStack changed its argument")
			}
			if err := q.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestStackFieldsInJSON: a profile without the stack terms serialises
// without their keys (profiles written before them stay byte-identical),
// one with them round-trips, and an unknown stack is refused with its
// field's name.
func TestStackFieldsInJSON(t *testing.T) {
	p := kernelProfileForTest(t)
	if s := profileJSON(t, p); strings.Contains(s, `"stack"`) || strings.Contains(s, "executor_host_ns") {
		t.Errorf("a vLLM profile writes the stack terms: %.300s", s)
	}
	q := ForStack(p, StackDynamoTRTLLM)
	r, err := ReadProfile(strings.NewReader(profileJSON(t, q)), "trt.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.Stack != StackDynamoTRTLLM || r.ExecutorHostNs != 580e3 {
		t.Errorf("round trip: stack %q executor_host_ns %g", r.Stack, r.ExecutorHostNs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(profileJSON(t, q)), &m); err != nil {
		t.Fatal(err)
	}
	m["stack"] = "sglang"
	b, _ := json.Marshal(m)
	if _, err := ReadProfile(strings.NewReader(string(b)), "bad.json"); err == nil || !strings.Contains(err.Error(), `stack: "sglang" must be one of dynamo-vllm, dynamo-trtllm, vllm-serve`) {
		t.Errorf("unknown stack: %v", err)
	}
}

// TestStackPrior: the prior of an owned term is centred on its source's
// value; a term no stack owns with a value has none.
func TestStackPrior(t *testing.T) {
	pr, ok := StackPrior("executor_host_ns")
	if !ok || pr.Centre != 580e3 || pr.LogSD != 1 || !strings.Contains(pr.Source, "#13957") {
		t.Errorf("executor_host_ns prior %+v, %v", pr, ok)
	}
	if _, ok := StackPrior("frontend_ns"); ok {
		t.Error("frontend_ns is a shared term: its prior is the profile's own")
	}
}
