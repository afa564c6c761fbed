package explore

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// Request is what the page asks for: the curves over Ns for each policy
// and seed, and the detail views at N. Every value is a routesim run
// flag's text, validated by the command's own code (Build).
type Request struct {
	// Client identifies the page: a newer request from the same client
	// cancels the work of the older one.
	Client string `json:"client"`
	// Flags are run flags every point shares (SharedFlags names those the
	// page may set): GPU, model, load, Dynamo release.
	Flags map[string]string `json:"flags"`
	// Knobs are policy parameter flags; each point gets those its
	// policy reads.
	Knobs map[string]string `json:"knobs"`
	// N is the cluster the detail views show; Ns the curves' sizes in
	// routesim sweep's syntax (2..16, 2..16:2, 2,4,8).
	N        int      `json:"n"`
	Ns       string   `json:"ns"`
	Policies []string `json:"policies"`
	Seed     uint64   `json:"seed"`
	Seeds    int      `json:"seeds"`
}

// SharedFlags are the run flags the page may set for every point: the
// deployment (catalogue names only: the page reads no files), the load,
// and the Dynamo and vLLM releases.
var SharedFlags = []string{"gpu", "model", "tp", "rate-scale", "concurrency", "dynamo-version", "vllm-version"}

// Bounds on one request, so that a page (or anything else that reaches
// the port) cannot ask for unbounded work.
const (
	MaxSeeds    = 32
	MaxPolicies = 8
	MaxPoints   = 2048
)

// point is one simulation: a cluster size, a policy and a seed.
type point struct {
	N      int
	Policy string
	Seed   uint64
	// Args are the routesim run arguments that simulate it; their
	// joined text is the cache key.
	Args []string
	// Detail says the page shows this point's per-request views.
	Detail bool
}

func (p point) key() string { return strings.Join(p.Args, "\x00") }

// plan checks the request's shape (the settings themselves are checked
// by Build) and lists its points, the detail views' first: those the
// page waits for. base are the arguments every point starts with.
func (r *Request) plan(base []string) ([]point, error) {
	var errs []error
	ns, err := sweep.ParseRange(r.Ns, sim.MaxWorkers)
	if err != nil {
		errs = append(errs, fmt.Errorf("curves' N %q: %w", r.Ns, err))
	}
	if r.N < 1 || r.N > sim.MaxWorkers {
		errs = append(errs, fmt.Errorf("--n %d must be in [1, %d]", r.N, sim.MaxWorkers))
	}
	if len(r.Policies) == 0 {
		errs = append(errs, errors.New("choose at least one policy"))
	}
	if len(r.Policies) > MaxPolicies {
		errs = append(errs, fmt.Errorf("%d policies: at most %d at once", len(r.Policies), MaxPolicies))
	}
	for i, p := range r.Policies {
		if slices.Contains(r.Policies[:i], p) {
			errs = append(errs, fmt.Errorf("--policy %s is listed twice", p))
		}
		if err := plainValue("policy", p); err != nil {
			errs = append(errs, err)
		}
	}
	if r.Seeds < 1 || r.Seeds > MaxSeeds {
		errs = append(errs, fmt.Errorf("seeds %d must be in [1, %d]", r.Seeds, MaxSeeds))
	} else if r.Seed > ^uint64(0)-uint64(r.Seeds-1) {
		errs = append(errs, fmt.Errorf("--seed %d with %d seeds runs past the largest seed, 2^64−1", r.Seed, r.Seeds))
	}
	shared, err := r.sharedArgs()
	if err != nil {
		errs = append(errs, err)
	}
	if err := r.checkKnobs(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !slices.Contains(ns, r.N) {
		ns = append(ns, r.N)
		sort.Ints(ns)
	}
	if total := len(ns) * len(r.Policies) * r.Seeds; total > MaxPoints {
		return nil, fmt.Errorf("%d simulations (%d sizes × %d policies × %d seeds): at most %d per view", total, len(ns), len(r.Policies), r.Seeds, MaxPoints)
	}
	var detail, rest []point
	for s := 0; s < r.Seeds; s++ {
		for _, pol := range r.Policies {
			for _, n := range ns {
				p := point{N: n, Policy: pol, Seed: r.Seed + uint64(s), Detail: n == r.N && s == 0}
				p.Args = slices.Concat(base, shared, r.knobArgs(pol),
					[]string{"--n", fmt.Sprint(n), "--policy", pol, "--seed", fmt.Sprint(p.Seed)})
				if p.Detail {
					detail = append(detail, p)
				} else {
					rest = append(rest, p)
				}
			}
		}
	}
	// Each seed's points after the detail views: the selected N's other
	// seeds first, then nearest N outwards, so curves fill in from the
	// selection.
	sort.SliceStable(rest, func(i, j int) bool {
		di, dj := abs(rest[i].N-r.N), abs(rest[j].N-r.N)
		if di != dj {
			return di < dj
		}
		return rest[i].Seed < rest[j].Seed
	})
	return append(detail, rest...), nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// sharedArgs are the Flags as run arguments, in SharedFlags order. A GPU
// or model must be a catalogue name: the page is not a way to read files.
func (r *Request) sharedArgs() ([]string, error) {
	var out []string
	var errs []error
	for name := range r.Flags {
		if !slices.Contains(SharedFlags, name) {
			errs = append(errs, fmt.Errorf("unknown setting %q (the page sets %s)", name, strings.Join(SharedFlags, ", ")))
		}
	}
	for _, name := range SharedFlags {
		v, ok := r.Flags[name]
		if !ok || v == "" {
			continue
		}
		if err := plainValue(name, v); err != nil {
			errs = append(errs, err)
			continue
		}
		if (name == "gpu" || name == "model") && model.IsFileArg(v) {
			errs = append(errs, fmt.Errorf("--%s %q: the explorer takes catalogue names only (see routesim profiles)", name, v))
			continue
		}
		out = append(out, "--"+name, v)
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return out, errors.Join(errs...)
}

// checkKnobs refuses knobs that are no policy's parameter.
func (r *Request) checkKnobs() error {
	var errs []error
	for name, v := range r.Knobs {
		if _, ok := param(name); !ok {
			errs = append(errs, fmt.Errorf("unknown policy parameter --%s (routesim policies lists them)", name))
		} else if err := plainValue(name, v); err != nil {
			errs = append(errs, err)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// knobArgs are the knobs policy pol reads, as run arguments in the
// registry's order (a knob another policy reads is left out, as a run of
// pol would refuse it).
func (r *Request) knobArgs(pol string) []string {
	e, err := policy.Lookup(pol)
	if err != nil {
		return nil // Build reports the unknown policy
	}
	var out []string
	for _, d := range policy.ParamList {
		v, ok := r.Knobs[d.Flag]
		if ok && v != "" && slices.Contains(e.Uses, d.Flag) {
			out = append(out, "--"+d.Flag, v)
		}
	}
	return out
}

// param finds a policy parameter by flag name.
func param(flag string) (policy.Param, bool) {
	for _, d := range policy.ParamList {
		if d.Flag == flag {
			return d, true
		}
	}
	return policy.Param{}, false
}

// plainValue refuses a value that a command line would read as a flag
// (it starts with "-" and is not a number, e.g. --scenario=FILE): the
// page sets values, never flags.
func plainValue(name, v string) error {
	if strings.HasPrefix(v, "-") {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("--%s %q: a value, not a flag", name, v)
		}
	}
	return nil
}
