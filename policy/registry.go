package policy

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Params carries everything a policy may be built from. Fields a policy
// does not use are ignored.
type Params struct {
	// Rand is the policy's own random stream (tie-breaks, sampling).
	Rand *rand.Rand
}

// Factory builds a fresh policy for one run.
type Factory func(p Params) (Policy, error)

// Entry describes one registered policy.
type Entry struct {
	Summary string
	New     Factory
}

// registry is the one list of policies; nothing else names them.
var registry = map[string]Entry{
	"round-robin": {
		Summary: "next worker in rotation; never rejects, never consults load (Dynamo --router-mode round-robin)",
		New:     func(Params) (Policy, error) { return &RoundRobin{}, nil },
	},
}

// Names lists the registered policies, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the entry for name or an error listing the known names.
func Lookup(name string) (Entry, error) {
	e, ok := registry[name]
	if !ok {
		return Entry{}, fmt.Errorf("policy: unknown policy %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return e, nil
}

// New builds the named policy.
func New(name string, p Params) (Policy, error) {
	e, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return e.New(p)
}
