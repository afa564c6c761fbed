package policy_test

import (
	"fmt"

	"github.com/routesim/routesim/policy"
)

// A policy is one function of the request and the router's view. This one
// sends long prompts to the worker with the fewest prefill tokens pending
// and short ones to worker 0.
func ExampleFunc() {
	split := policy.Func(func(r *policy.Request, v policy.View) policy.Decision {
		if r.InputTokens < 1000 {
			return policy.Decision{Worker: 0, Reason: "short prompt"}
		}
		best := 1
		for _, w := range v.Workers()[2:] {
			if v.PrefillTokens(w) < v.PrefillTokens(best) {
				best = w
			}
		}
		return policy.Decision{Worker: best, Reason: "least prefill backlog"}
	})
	v := exampleView{prefill: []int{0, 9000, 300, 4000}}
	for _, isl := range []int{200, 8000} {
		d := split.Route(&policy.Request{InputTokens: isl}, v)
		fmt.Printf("ISL %d → worker %d (%s)\n", isl, d.Worker, d.Reason)
	}
	// Output:
	// ISL 200 → worker 0 (short prompt)
	// ISL 8000 → worker 2 (least prefill backlog)
}

// exampleView answers only what the example reads.
type exampleView struct {
	policy.View
	prefill []int
}

func (v exampleView) Workers() []int          { return []int{0, 1, 2, 3} }
func (v exampleView) PrefillTokens(w int) int { return v.prefill[w] }
