package policy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// Params carries everything a policy may be built from; each policy reads
// the fields its registry entry lists in Uses. DefaultParams holds the
// Dynamo v1.2-era defaults.
type Params struct {
	// Rand is the policy's own random stream (tie-breaks, sampling).
	Rand *rand.Rand `json:"-"`

	OverlapScoreCredit float64 `json:"overlap_score_credit"` // --overlap-score-credit
	PrefillLoadScale   float64 `json:"prefill_load_scale"`   // --prefill-load-scale
	RouterTemperature  float64 `json:"router_temperature"`   // --router-temperature

	ActiveDecodeBlocksThreshold      float64 `json:"active_decode_blocks_threshold"`       // 0 = off
	ActivePrefillTokensThreshold     int     `json:"active_prefill_tokens_threshold"`      // 0 = off
	ActivePrefillTokensThresholdFrac float64 `json:"active_prefill_tokens_threshold_frac"` // 0 = off
	BusySignal                       string  `json:"busy_signal"`                          // router or engine

	RouterQueueThreshold float64 `json:"router_queue_threshold"` // θ
	MaxQueuedISLTokens   int     `json:"max_queued_isl_tokens"`  // 0 = unbounded
}

// DefaultParams returns the defaults (router-notes: the v1.2-era preset),
// as ParamList declares them.
func DefaultParams() Params {
	var p Params
	for _, d := range ParamList {
		switch {
		case d.Float != nil:
			*d.Float(&p) = d.Default
		case d.Int != nil:
			*d.Int(&p) = int(d.Default)
		default:
			*d.String(&p) = d.DefaultString
		}
	}
	return p
}

// Param is one policy parameter, declared once: its flag (the JSON name
// is the same with underscores), its meaning, its default, the Params
// field it binds (exactly one of Float, Int, String) and, for a string,
// its allowed values. Numbers must be finite and ≥ 0. The CLI's flags,
// `routesim policies`, DefaultParams and Validate all read this list.
type Param struct {
	Flag          string
	Help          string
	Default       float64 // Float and Int parameters
	DefaultString string  // String parameters
	Choices       []string
	Float         func(*Params) *float64
	Int           func(*Params) *int
	String        func(*Params) *string
}

// Field is the parameter's name in a run description: policy_params.NAME,
// NAME being the flag with underscores.
func (d Param) Field() string { return "policy_params." + strings.ReplaceAll(d.Flag, "-", "_") }

// DefaultText is the parameter's default as the CLI prints it.
func (d Param) DefaultText() string {
	if d.String != nil {
		return d.DefaultString
	}
	return strconv.FormatFloat(d.Default, 'g', -1, 64)
}

// ParamList is the one list of policy parameters.
var ParamList = []Param{
	{Flag: "overlap-score-credit", Default: 1, Float: func(p *Params) *float64 { return &p.OverlapScoreCredit },
		Help: "prefill blocks credited per cached prefix block (Dynamo overlap_score_credit)"},
	{Flag: "prefill-load-scale", Default: 1, Float: func(p *Params) *float64 { return &p.PrefillLoadScale },
		Help: "weight of the prefill term in the KV cost (Dynamo prefill_load_scale)"},
	{Flag: "router-temperature", Default: 0, Float: func(p *Params) *float64 { return &p.RouterTemperature },
		Help: "0 = cheapest worker (uniform tie-break); > 0 = softmax sampling over range-normalised costs"},
	{Flag: "active-decode-blocks-threshold", Default: 1, Float: func(p *Params) *float64 { return &p.ActiveDecodeBlocksThreshold },
		Help: "busy when active KV blocks ≥ this × KV capacity (0 = off)"},
	{Flag: "active-prefill-tokens-threshold", Default: 0, Int: func(p *Params) *int { return &p.ActivePrefillTokensThreshold },
		Help: "busy when router-tracked prefill tokens exceed this (0 = off)"},
	{Flag: "active-prefill-tokens-threshold-frac", Default: 0, Float: func(p *Params) *float64 { return &p.ActivePrefillTokensThresholdFrac },
		Help: "busy when prefill tokens exceed this × max-num-batched-tokens (0 = off)"},
	{Flag: "busy-signal", DefaultString: "router", Choices: []string{"router", "engine"}, String: func(p *Params) *string { return &p.BusySignal },
		Help: "active blocks for the busy check: router (own bookkeeping) or engine (published KV usage, see --metrics-lag)"},
	{Flag: "router-queue-threshold", Default: 16, Float: func(p *Params) *float64 { return &p.RouterQueueThreshold },
		Help: "park requests while every worker has more than this × max-num-batched-tokens prefill tokens"},
	{Flag: "max-queued-isl-tokens", Default: 0, Int: func(p *Params) *int { return &p.MaxQueuedISLTokens },
		Help: "reject instead of parking once this many input tokens are queued (0 = unbounded)"},
}

// Validate reports every problem at once, naming each parameter by its
// flag.
func (p Params) Validate() error {
	var errs []error
	for _, d := range ParamList {
		switch {
		case d.Float != nil, d.Int != nil:
			v := 0.0
			if d.Float != nil {
				v = *d.Float(&p)
			} else {
				v = float64(*d.Int(&p))
			}
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				errs = append(errs, inputerr.Fieldf(d.Field(), "%g must be a finite number ≥ 0", v))
			}
		default:
			if v := *d.String(&p); !slices.Contains(d.Choices, v) {
				errs = append(errs, inputerr.Fieldf(d.Field(), "%q: want %s", v, strings.Join(d.Choices, " or ")))
			}
		}
	}
	return errors.Join(errs...)
}

// RouterFlags are the router settings (not policy parameters) that only
// some policies observe: the KV-event lag matters to a KV-aware policy, the
// published-usage lag to one with a busy signal.
var RouterFlags = []string{"kv-event-lag", "metrics-lag"}

// Reads lists every tunable flag the policy's behaviour depends on: its
// parameters (Uses), then the router settings it observes.
func (e Entry) Reads() []string {
	out := append([]string(nil), e.Uses...)
	if slices.Contains(e.Uses, "busy-signal") {
		out = append(out, "metrics-lag")
	}
	if e.KVAware {
		out = append(out, "kv-event-lag")
	}
	return out
}

// Factory builds a fresh policy for one run.
type Factory func(p Params) Policy

// Entry describes one registered policy.
type Entry struct {
	Summary string
	// Uses lists the ParamList flags the policy reads.
	Uses []string
	// KVAware policies need the router's block bookkeeping and KV events.
	KVAware bool
	New     Factory
}

var kvParams = []string{"overlap-score-credit", "prefill-load-scale", "router-temperature"}

func newKV(p Params) *KV {
	return &KV{Rand: p.Rand, Credit: p.OverlapScoreCredit, Scale: p.PrefillLoadScale, Temperature: p.RouterTemperature}
}

// registry is the one list of policies; nothing else names them.
var registry = map[string]Entry{
	"round-robin": {
		Summary: "next worker in rotation; never rejects, never consults load (Dynamo --router-mode round-robin)",
		New:     func(Params) Policy { return &RoundRobin{} },
	},
	"random": {
		Summary: "uniformly random worker",
		New:     func(p Params) Policy { return &Random{Rand: p.Rand} },
	},
	"least-loaded": {
		Summary: "worker with the fewest requests in flight (random tie-break)",
		New:     func(p Params) Policy { return &LeastLoaded{Rand: p.Rand} },
	},
	"power-of-two": {
		Summary: "fewer in flight of two workers drawn at random",
		New:     func(p Params) Policy { return &PowerOfTwo{Rand: p.Rand} },
	},
	"kv": {
		Summary: "Dynamo's KV cost (prefill blocks after prefix credit + decode blocks), no admission control",
		Uses:    kvParams, KVAware: true,
		New: func(p Params) Policy { return newKV(p) },
	},
	"kv-admission": {
		Summary: "kv + busy monitor: busy workers excluded; all busy → 503 \"" + MsgAllBusy + "\" (Dynamo v1.2 --router-mode kv)",
		Uses: append(kvParams[:len(kvParams):len(kvParams)], "active-decode-blocks-threshold", "active-prefill-tokens-threshold",
			"active-prefill-tokens-threshold-frac", "busy-signal"),
		KVAware: true,
		New: func(p Params) Policy {
			k := newKV(p)
			k.Busy = &BusyMonitor{
				DecodeBlocksThreshold: p.ActiveDecodeBlocksThreshold, PrefillTokensThreshold: p.ActivePrefillTokensThreshold,
				PrefillTokensThresholdFrac: p.ActivePrefillTokensThresholdFrac, EngineSignal: p.BusySignal == "engine",
			}
			return k
		},
	},
	"kv-backpressure": {
		Summary: "kv + router queue: park while every worker is prefill-busy, FCFS with head-of-line blocking; over --max-queued-isl-tokens → 503",
		Uses:    append(kvParams[:len(kvParams):len(kvParams)], "router-queue-threshold", "max-queued-isl-tokens"),
		KVAware: true,
		New: func(p Params) Policy {
			k := newKV(p)
			k.Queue = &QueueGate{Threshold: p.RouterQueueThreshold, MaxQueuedISLTokens: p.MaxQueuedISLTokens}
			return k
		},
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

// New validates p and builds the named policy.
func New(name string, p Params) (Policy, error) {
	e, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Rand == nil {
		return nil, errors.New("policy: Params.Rand is nil; every policy gets an explicit random stream")
	}
	return e.New(p), nil
}
