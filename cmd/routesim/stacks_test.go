package main

import (
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

// TestStacksLists: routesim stacks lists every stack with every term, its
// value (or that it is not charged) and its source; profiles -v shows each
// profile's stack and fixed costs; a stray argument is a usage error.
func TestStacksLists(t *testing.T) {
	out, _, err := runCLI("stacks")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range model.Stacks {
		if !strings.Contains(out, s.Name+" (") || !strings.Contains(out, s.Doc) {
			t.Errorf("stack %s not listed with its description", s.Name)
		}
		for _, term := range s.Terms {
			if !strings.Contains(out, "  "+term.Name()+": "+term.Source) {
				t.Errorf("%s/%s: source not listed", s.Name, term.Name())
			}
		}
	}
	for _, want := range []string{"580 µs/iteration (own)", "5 ms/request (prior)", "1 µs/token (prior)", "not charged", "--engine trtllm runs it", "reference: no run selects it"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCLI("profiles", "-v")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "stack vLLM (unnamed): frontend 5.12 ms/request + 1 µs/prompt token before routing (routesim stacks)") {
		t.Errorf("profiles -v does not show the calibrated profile's fixed costs:\n%.2000s", out)
	}
	if _, _, err := runCLI("stacks", "stray"); err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), `"stray"`) {
		t.Errorf("stray argument: %v", err)
	}
}

// TestFixedCost: times are written in the unit that reads best.
func TestFixedCost(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		unit string
		want string
	}{
		{0, "ns/iteration", "0"},
		{580e3, "ns/iteration", "580 µs/iteration"},
		{4.4928e6, "ns/request", "4.49 ms/request"},
		{1000, "ns/token", "1 µs/token"},
		{12, "ns/token", "12 ns/token"},
	} {
		if got := fixedCost(tc.ns, tc.unit); got != tc.want {
			t.Errorf("fixedCost(%g, %q) = %q, want %q", tc.ns, tc.unit, got, tc.want)
		}
	}
}
