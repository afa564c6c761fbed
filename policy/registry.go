package policy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
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

// DefaultParams returns the defaults (router-notes: the v1.2-era preset).
func DefaultParams() Params {
	return Params{
		OverlapScoreCredit: 1, PrefillLoadScale: 1, RouterTemperature: 0,
		ActiveDecodeBlocksThreshold: 1, BusySignal: "router",
		RouterQueueThreshold: 16,
	}
}

// ParamDoc documents one parameter: its flag, default and meaning.
type ParamDoc struct {
	Flag    string
	Default func(Params) string
	Help    string
}

// ParamDocs lists every policy parameter; the CLI's flags and `routesim
// policies` are built from it.
var ParamDocs = []ParamDoc{
	{"overlap-score-credit", func(p Params) string { return fmtF(p.OverlapScoreCredit) }, "prefill blocks credited per cached prefix block (Dynamo overlap_score_credit)"},
	{"prefill-load-scale", func(p Params) string { return fmtF(p.PrefillLoadScale) }, "weight of the prefill term in the KV cost (Dynamo prefill_load_scale)"},
	{"router-temperature", func(p Params) string { return fmtF(p.RouterTemperature) }, "0 = cheapest worker (uniform tie-break); > 0 = softmax sampling over range-normalised costs"},
	{"active-decode-blocks-threshold", func(p Params) string { return fmtF(p.ActiveDecodeBlocksThreshold) }, "busy when active KV blocks ≥ this × KV capacity (0 = off)"},
	{"active-prefill-tokens-threshold", func(p Params) string { return strconv.Itoa(p.ActivePrefillTokensThreshold) }, "busy when router-tracked prefill tokens exceed this (0 = off)"},
	{"active-prefill-tokens-threshold-frac", func(p Params) string { return fmtF(p.ActivePrefillTokensThresholdFrac) }, "busy when prefill tokens exceed this × max-num-batched-tokens (0 = off)"},
	{"busy-signal", func(p Params) string { return p.BusySignal }, "active blocks for the busy check: router (own bookkeeping) or engine (published KV usage, see --metrics-lag)"},
	{"router-queue-threshold", func(p Params) string { return fmtF(p.RouterQueueThreshold) }, "park requests while every worker has more than this × max-num-batched-tokens prefill tokens"},
	{"max-queued-isl-tokens", func(p Params) string { return strconv.Itoa(p.MaxQueuedISLTokens) }, "reject instead of parking once this many input tokens are queued (0 = unbounded)"},
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Validate reports every problem at once.
func (p Params) Validate() error {
	var errs []error
	for _, c := range []struct {
		flag string
		v    float64
	}{
		{"overlap-score-credit", p.OverlapScoreCredit}, {"prefill-load-scale", p.PrefillLoadScale},
		{"router-temperature", p.RouterTemperature}, {"active-decode-blocks-threshold", p.ActiveDecodeBlocksThreshold},
		{"active-prefill-tokens-threshold", float64(p.ActivePrefillTokensThreshold)},
		{"active-prefill-tokens-threshold-frac", p.ActivePrefillTokensThresholdFrac},
		{"router-queue-threshold", p.RouterQueueThreshold}, {"max-queued-isl-tokens", float64(p.MaxQueuedISLTokens)},
	} {
		if c.v < 0 || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			errs = append(errs, fmt.Errorf("--%s %g must be a finite number ≥ 0", c.flag, c.v))
		}
	}
	if p.BusySignal != "router" && p.BusySignal != "engine" {
		errs = append(errs, fmt.Errorf("--busy-signal %q: want router or engine", p.BusySignal))
	}
	return errors.Join(errs...)
}

// Factory builds a fresh policy for one run.
type Factory func(p Params) Policy

// Entry describes one registered policy.
type Entry struct {
	Summary string
	// Uses lists the ParamDocs flags the policy reads.
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
