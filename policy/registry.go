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
	"time"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/internal/suggest"
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

	// Dynamo's busy monitor and router queue: 0 = off, negative = the
	// default of the release DynamoVersion names.
	ActiveDecodeBlocksThreshold      float64 `json:"active_decode_blocks_threshold"`
	ActivePrefillTokensThreshold     int     `json:"active_prefill_tokens_threshold"`
	ActivePrefillTokensThresholdFrac float64 `json:"active_prefill_tokens_threshold_frac"`
	RouterQueueThreshold             float64 `json:"router_queue_threshold"` // θ
	MaxQueuedISLTokens               int     `json:"max_queued_isl_tokens"`  // 0 = unbounded

	// DynamoVersion is the Dynamo release whose router the kv policies
	// model ("" = DefaultDynamoVersion); set from the run description's
	// dynamo_version, not a policy parameter of its own.
	DynamoVersion string `json:"-"`

	// SGLang model gateway, cache_aware.
	CacheThreshold      float64 `json:"cache_threshold"`
	BalanceAbsThreshold int     `json:"balance_abs_threshold"`
	BalanceRelThreshold float64 `json:"balance_rel_threshold"`
	EvictionInterval    float64 `json:"eviction_interval"` // seconds
	MaxTreeSize         int     `json:"max_tree_size"`     // characters per worker

	// llm-d / Gateway API Inference Extension endpoint picker.
	Scorers                string `json:"scorers"`
	RefreshMetricsInterval string `json:"refresh_metrics_interval"` // a Go duration, e.g. 50ms
	LRUCapacityPerServer   int    `json:"lru_capacity_per_server"`
	MaxPrefixBlocksToMatch int    `json:"max_prefix_blocks_to_match"`

	// KubeAI PrefixHash.
	PrefixCharLength int `json:"prefix_char_length"`
	MeanLoadFactor   int `json:"mean_load_factor"` // percent
	Replication      int `json:"replication"`

	// vLLM production-stack.
	RequestStatsWindow float64 `json:"request_stats_window"` // seconds

	// Ray Serve PrefixCacheAffinityRouter.
	ImbalancedThreshold int     `json:"imbalanced_threshold"`
	MatchRateThreshold  float64 `json:"match_rate_threshold"`

	// AIBrix prefix-cache.
	PrefixCacheImbalanceAbsCount       int `json:"prefix_cache_pod_running_request_imbalance_abs_count"`
	PrefixCacheStandardDeviationFactor int `json:"prefix_cache_standard_deviation_factor"`
	PrefixCacheBlockNumber             int `json:"prefix_cache_block_number"`

	// Dynamo's tier credits (tierparams.go):
	// "" = the release's.
	RouterHostCacheHitWeight OptNumber `json:"router_host_cache_hit_weight,omitempty"`
	RouterDiskCacheHitWeight OptNumber `json:"router_disk_cache_hit_weight,omitempty"`
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
// its allowed values or its parser. Numbers must be finite and within
// [Min, Max] (Min defaults to 0; every number has a Max, one of the
// max* bounds unless the parameter's own range is narrower). The CLI's
// flags, `routesim policies`, DefaultParams and Validate all read this
// list, so run, sweep, plan --setting and scenario files share the bounds.
type Param struct {
	Flag          string
	Help          string
	Default       float64 // Float and Int parameters
	DefaultString string  // String parameters
	Choices       []string
	Check         func(string) error // String parameters without Choices
	Min, Max      float64
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
		if d.DefaultString == "" {
			return "release" // the --dynamo-version's own (tierparams.go)
		}
		return d.DefaultString
	}
	return strconv.FormatFloat(d.Default, 'g', -1, 64)
}

// Upper bounds of the numeric parameters. Each lies far past any setting a
// deployment uses, so a larger value is a mistake (a typo, a unit); within
// them every cost, count and duration a policy computes stays finite and
// exact (a prefill scale of 1e306 made every KV cost +Inf).
const (
	// maxWeight bounds a weight or multiplier of a cost term, or a load
	// ratio: at a million, its term decides alone.
	maxWeight = 1e6
	// maxRequests bounds a count of requests: a billion, past any cluster's
	// requests in flight.
	maxRequests = 1e9
	// maxTokens bounds a count of tokens, blocks or prompt characters a
	// worker or the router holds: a trillion, a million times a GPU's KV
	// cache.
	maxTokens = 1e12
	// maxSeconds bounds a period: one year, the simulation's horizon (and
	// within int64 nanoseconds).
	maxSeconds = 365 * 24 * 3600
)

// ParamList is the one list of policy parameters.
var ParamList = []Param{
	{Flag: "overlap-score-credit", Default: 1, Max: maxWeight, Float: func(p *Params) *float64 { return &p.OverlapScoreCredit },
		Help: "prefill blocks credited per cached prefix block (Dynamo overlap_score_credit)"},
	{Flag: "prefill-load-scale", Default: 1, Max: maxWeight, Float: func(p *Params) *float64 { return &p.PrefillLoadScale },
		Help: "weight of the prefill term in the KV cost (Dynamo prefill_load_scale)"},
	{Flag: "router-temperature", Default: 0, Max: maxWeight, Float: func(p *Params) *float64 { return &p.RouterTemperature },
		Help: "0 = cheapest worker (uniform tie-break); > 0 = softmax sampling over range-normalised costs"},
	{Flag: "active-decode-blocks-threshold", Default: -1, Min: -1, Max: maxWeight, Float: func(p *Params) *float64 { return &p.ActiveDecodeBlocksThreshold },
		Help: "busy when the router's booked prompt blocks, or the engine's published kv_used_blocks, exceed this × the worker's total blocks (0 = off; −1 = the --dynamo-version's default)"},
	{Flag: "active-prefill-tokens-threshold", Default: -1, Min: -1, Max: maxTokens, Int: func(p *Params) *int { return &p.ActivePrefillTokensThreshold },
		Help: "busy when router-tracked prefill tokens exceed this (0 = off; −1 = the --dynamo-version's default)"},
	{Flag: "active-prefill-tokens-threshold-frac", Default: -1, Min: -1, Max: maxWeight, Float: func(p *Params) *float64 { return &p.ActivePrefillTokensThresholdFrac },
		Help: "busy when router-tracked prefill tokens exceed this × max-num-batched-tokens (0 = off; −1 = the --dynamo-version's default)"},
	{Flag: "router-queue-threshold", Default: -1, Min: -1, Max: maxWeight, Float: func(p *Params) *float64 { return &p.RouterQueueThreshold },
		Help: "park requests while every worker has more than this × max-num-batched-tokens router-tracked prefill tokens (0 = no queue; −1 = the --dynamo-version's default)"},
	{Flag: "max-queued-isl-tokens", Default: 0, Max: maxTokens, Int: func(p *Params) *int { return &p.MaxQueuedISLTokens },
		Help: "reject instead of parking once this many input tokens are queued (0 = unbounded)"},

	{Flag: "cache-threshold", Default: 0.3, Max: 1, Float: func(p *Params) *float64 { return &p.CacheThreshold },
		Help: "SGLang: route to the best prefix match when its match rate exceeds this, else to the smallest tree"},
	{Flag: "balance-abs-threshold", Default: 64, Max: maxRequests, Int: func(p *Params) *int { return &p.BalanceAbsThreshold },
		Help: "SGLang: imbalanced (→ shortest queue) when max − min load exceeds this ..."},
	{Flag: "balance-rel-threshold", Default: 1.5, Max: maxWeight, Float: func(p *Params) *float64 { return &p.BalanceRelThreshold },
		Help: "SGLang: ... and max load exceeds this × min load"},
	{Flag: "eviction-interval", Default: 120, Max: maxSeconds, Float: func(p *Params) *float64 { return &p.EvictionInterval },
		Help: "SGLang: seconds between LRU evictions of the approximate trees (0 = never)"},
	{Flag: "max-tree-size", Default: 1 << 26, Min: 1, Max: maxTokens, Int: func(p *Params) *int { return &p.MaxTreeSize },
		Help: "SGLang: characters each worker's approximate tree keeps after an eviction (4 per token)"},
	{Flag: "scorers", DefaultString: "prefix-cache:3,queue:2,kv-cache-utilization:2", Check: checkScorers, String: func(p *Params) *string { return &p.Scorers },
		Help: "llm-d: weighted scorers NAME:WEIGHT,… of " + strings.Join(scorerNames, ", ")},
	{Flag: "refresh-metrics-interval", DefaultString: "50ms", Check: checkDuration, String: func(p *Params) *string { return &p.RefreshMetricsInterval },
		Help: "llm-d: the endpoint picker reads the workers' metrics as of its last scrape, every this often (a duration; 0 = continuously)"},
	{Flag: "lru-capacity-per-server", Default: 31250, Min: 1, Max: maxBlocks, Int: func(p *Params) *int { return &p.LRUCapacityPerServer },
		Help: "llm-d prefix-cache scorer: 16-token blocks remembered per worker (LRU)"},
	{Flag: "max-prefix-blocks-to-match", Default: 256, Min: 1, Max: maxBlocks, Int: func(p *Params) *int { return &p.MaxPrefixBlocksToMatch },
		Help: "llm-d prefix scorers: 16-token prompt blocks considered at most"},
	{Flag: "prefix-char-length", Default: 100, Min: 1, Max: maxTokens, Int: func(p *Params) *int { return &p.PrefixCharLength },
		Help: "KubeAI PrefixHash: leading prompt characters hashed (4 per token)"},
	{Flag: "mean-load-factor", Default: 125, Min: 100, Max: maxWeight, Int: func(p *Params) *int { return &p.MeanLoadFactor },
		Help: "KubeAI PrefixHash: a worker may carry at most this % of the mean in-flight load"},
	{Flag: "replication", Default: 256, Min: 1, Max: 1 << 16, Int: func(p *Params) *int { return &p.Replication },
		Help: "KubeAI PrefixHash: points per worker on the hash ring (at most " + strconv.Itoa(MaxRingPoints) + " over all workers)"},
	{Flag: "request-stats-window", Default: 60, Min: 1e-9, Max: maxSeconds, Float: func(p *Params) *float64 { return &p.RequestStatsWindow },
		Help: "production-stack: sliding window (s) of the QPS that routes session-less requests"},
	{Flag: "imbalanced-threshold", Default: 10, Max: maxRequests, Int: func(p *Params) *int { return &p.ImbalancedThreshold },
		Help: "Ray Serve: imbalanced (→ power of two) when max − min queue length exceeds this"},
	{Flag: "match-rate-threshold", Default: 0.1, Max: 1, Float: func(p *Params) *float64 { return &p.MatchRateThreshold },
		Help: "Ray Serve: below this prefix match rate, route to the smallest trees"},
	{Flag: "prefix-cache-pod-running-request-imbalance-abs-count", Default: 8, Max: maxRequests, Int: func(p *Params) *int { return &p.PrefixCacheImbalanceAbsCount },
		Help: "AIBrix: imbalanced (→ least request) when max − min running requests exceeds this"},
	{Flag: "prefix-cache-standard-deviation-factor", Default: 1, Max: maxWeight, Int: func(p *Params) *int { return &p.PrefixCacheStandardDeviationFactor },
		Help: "AIBrix: a matched worker is used only if its running requests ≤ mean + this × std dev"},
	{Flag: "prefix-cache-block-number", Default: 200000, Min: 1, Max: maxBlocks, Int: func(p *Params) *int { return &p.PrefixCacheBlockNumber },
		Help: "AIBrix: prefix blocks the router's hash table keeps (LRU)"},
}

// Validate reports every problem at once, naming each parameter by its
// flag.
func (p Params) Validate() error {
	var errs []error
	for _, d := range ParamList {
		switch {
		case d.Float != nil, d.Int != nil:
			v, text, bound := 0.0, "", func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
			if d.Float != nil {
				v = *d.Float(&p)
				text = bound(v)
			} else {
				v, text = float64(*d.Int(&p)), strconv.Itoa(*d.Int(&p))
				bound = func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
			}
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0) || v < d.Min:
				errs = append(errs, inputerr.Fieldf(d.Field(), "%s must be a finite number ≥ %s", text, bound(d.Min)))
			case v > d.Max:
				errs = append(errs, inputerr.Fieldf(d.Field(), "%s must be at most %s", text, bound(d.Max)))
			}
		case d.Check != nil:
			if err := d.Check(*d.String(&p)); err != nil {
				errs = append(errs, inputerr.Fieldf(d.Field(), "%v", err))
			}
		default:
			if v := *d.String(&p); !slices.Contains(d.Choices, v) {
				errs = append(errs, inputerr.Fieldf(d.Field(), "%q: want %s", v, strings.Join(d.Choices, " or ")))
			}
		}
	}
	return errors.Join(errs...)
}

// checkDuration accepts a Go duration ≥ 0 of at most a day.
func checkDuration(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a duration (e.g. 50ms): %v", s, err)
	case d < 0 || d > 24*time.Hour:
		return fmt.Errorf("%s must be between 0 and 24h", s)
	}
	return nil
}

// ScrapePeriod is p's --refresh-metrics-interval (0 if unset or invalid;
// Validate reports the latter).
func (p Params) ScrapePeriod() time.Duration {
	d, err := time.ParseDuration(p.RefreshMetricsInterval)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// RouterFlags are the router settings (not policy parameters) that only
// some policies observe: the KV-event lag matters to a KV-aware policy, the
// published-usage lag to one with a busy signal.
var RouterFlags = []string{"kv-event-lag", "metrics-lag", "event-plane-delay"}

// Reads lists every tunable flag the policy's behaviour depends on: its
// parameters (Uses), then the router settings it observes.
func (e Entry) Reads() []string {
	out := append([]string(nil), e.Uses...)
	if e.EngineMetrics || e.EngineMetricsWhen != nil {
		out = append(out, "metrics-lag")
	}
	if e.KVAware || e.KVAwareWhen != nil {
		out = append(out, "kv-event-lag")
	}
	if slices.Contains(e.Uses, "active-prefill-tokens-threshold") { // the router's own load messages: kv
		out = append(out, "event-plane-delay")
	}
	return out
}

// Factory builds a fresh policy for one run.
type Factory func(p Params) Policy

// Entry describes one registered policy.
type Entry struct {
	Summary string
	// Source is the upstream code the policy follows: repository, tag or
	// commit, and file.
	Source string
	// Uses lists the ParamList flags the policy reads.
	Uses []string
	// KVAware policies need the router's block bookkeeping and KV events.
	KVAware bool
	// KVAwareWhen, if set, makes the policy KV-aware for some parameter
	// values only (llm-d with its precise prefix scorer).
	KVAwareWhen func(Params) bool
	// EngineMetrics policies read the workers' published (scraped) KV
	// usage and waiting queues, stale by the metrics lag.
	EngineMetrics bool
	// EngineMetricsWhen, if set, makes the policy read them for some
	// parameter values only (Dynamo's busy monitor reads the engine's
	// kv_used_blocks, which can trip it only below a threshold of 1).
	EngineMetricsWhen func(Params) bool
	New               Factory
}

// Sized is a policy whose memory grows with the number of workers times
// a parameter: CheckWorkers says whether it can route among n workers.
type Sized interface {
	CheckWorkers(n int) error
}

// CheckWorkers says whether the policy, with valid parameters p, can
// route among n workers (a PrefixHash ring must fit MaxRingPoints):
// what a front end checks with the cluster size, before anything runs.
func (e Entry) CheckWorkers(p Params, n int) error {
	if s, ok := e.New(p).(Sized); ok {
		return s.CheckWorkers(n)
	}
	return nil
}

// NeedsKV reports whether the policy, with parameters p, needs the
// router's block bookkeeping and the workers' KV events.
func (e Entry) NeedsKV(p Params) bool { return e.KVAware || (e.KVAwareWhen != nil && e.KVAwareWhen(p)) }

// RouterNeeds is what the router stage must keep for a policy: the one
// place a run's router features are derived from its policy.
type RouterNeeds struct {
	KV            bool          // block bookkeeping and the workers' KV events
	EngineMetrics bool          // the workers' published KV usage and waiting queues
	ScrapePeriod  time.Duration // metrics read as of the last scrape (0 = continuously)
}

// Needs is what the policy, with parameters p, needs from the router stage.
func (e Entry) Needs(p Params) RouterNeeds {
	n := RouterNeeds{KV: e.NeedsKV(p), EngineMetrics: e.EngineMetrics || (e.EngineMetricsWhen != nil && e.EngineMetricsWhen(p))}
	if e.EngineMetrics && slices.Contains(e.Uses, "refresh-metrics-interval") {
		n.ScrapePeriod = p.ScrapePeriod()
	}
	return n
}

var kvParams = []string{"overlap-score-credit", "prefill-load-scale", "router-temperature"}

// registry is the one list of policies; nothing else names them.
var registry = map[string]Entry{
	"sglang-cache-aware": {
		Summary: "SGLang gateway cache_aware: approximate per-worker radix trees of routed prompts; best match above --cache-threshold, else smallest tree; shortest queue when loads are imbalanced",
		Source:  "sgl-project/sglang sgl-router/src/policies/cache_aware.rs @026f853ba7ae, tree.rs; defaults sgl-router/src/main.rs @0129b029fc78",
		Uses:    []string{"cache-threshold", "balance-abs-threshold", "balance-rel-threshold", "eviction-interval", "max-tree-size"},
		New: func(p Params) Policy {
			return &SGLangCacheAware{CacheThreshold: p.CacheThreshold, BalanceAbsThreshold: p.BalanceAbsThreshold, BalanceRelThreshold: p.BalanceRelThreshold,
				EvictionInterval: nanos(p.EvictionInterval), MaxTreeSize: int64(p.MaxTreeSize)}
		},
	},
	"llm-d": {
		Summary: "llm-d / Inference Gateway endpoint picker: weighted scorers (approximate or precise prefix cache, scraped queue and KV utilisation), max score",
		Source:  "kubernetes-sigs/gateway-api-inference-extension @00913f9205cd pkg/epp/scheduling/framework/plugins/multi/prefix/plugin.go, scorer/queue.go, scorer/kvcache_utilization.go, picker/max_score_picker.go; weights: llm-d/llm-d-inference-scheduler @520af47896e5 config/charts/epplib/templates/_config.yaml",
		Uses:    []string{"scorers", "refresh-metrics-interval", "lru-capacity-per-server", "max-prefix-blocks-to-match"},
		KVAwareWhen: func(p Params) bool {
			sc, _ := ParseScorers(p.Scorers)
			return slices.ContainsFunc(sc, func(s Scorer) bool { return s.Name == scorerPrecise })
		},
		EngineMetrics: true,
		New: func(p Params) Policy {
			sc, _ := ParseScorers(p.Scorers)
			return &LLMD{Rand: p.Rand, Scorers: sc, MaxPrefixTokens: p.MaxPrefixBlocksToMatch * llmdHashBlockTokens,
				LRUCapacity: p.LRUCapacityPerServer * llmdHashBlockTokens}
		},
	},
	"session-affinity": {
		Summary: "vLLM production-stack session router: consistent hash of the session; session-less requests to the lowest QPS",
		Source:  "vllm-project/production-stack @008a23bd4837 src/vllm_router/routers/routing_logic.py (_qps_routing line 63, SessionRouter line 199)",
		Uses:    []string{"request-stats-window"},
		New: func(p Params) Policy {
			return &SessionAffinity{Window: int64(math.Round(p.RequestStatsWindow * 1e9))}
		},
	},
	"prefix-aware": {
		Summary: "vLLM production-stack prefix-aware router: trie of routed prompts, random among the longest match, no load signal",
		Source:  "vllm-project/production-stack @008a23bd4837 src/vllm_router/routers/routing_logic.py (PrefixAwareRouter line 417); @35e4ad377d6e src/vllm_router/prefix/hashtrie.py (longest_prefix_match line 77)",
		New:     func(p Params) Policy { return &PrefixAware{Rand: p.Rand} },
	},
	"prefix-hash": {
		Summary: "KubeAI PrefixHash: consistent hashing with bounded loads (CHWBL) on the prompt's first characters",
		Source:  "substratusai/kubeai v0.21.0 (2f32ef498da6) internal/loadbalancer/balance_chwbl.go; defaults api/k8s/v1/model_types.go (PrefixHash)",
		Uses:    []string{"prefix-char-length", "mean-load-factor", "replication"},
		New: func(p Params) Policy {
			return &PrefixHash{PrefixCharLength: p.PrefixCharLength, MeanLoadFactor: float64(p.MeanLoadFactor) / 100, Replication: p.Replication}
		},
	},
	"ray-prefix-affinity": {
		Summary: "Ray Serve PrefixCacheAffinityRouter: prefix tree of routed prompts when queues are balanced, power of two otherwise",
		Source:  "ray-project/ray python/ray/llm/_internal/serve/request_router/prefix_aware/prefix_aware_router.py",
		Uses:    []string{"imbalanced-threshold", "match-rate-threshold"},
		New: func(p Params) Policy {
			return &RayPrefixAffinity{Rand: p.Rand, ImbalancedThreshold: p.ImbalancedThreshold, MatchRateThreshold: p.MatchRateThreshold}
		},
	},
	"aibrix-least-request": {
		Summary: "AIBrix least-request: the pod with the fewest running requests (random tie-break); the algorithm of least-loaded",
		Source:  "vllm-project/aibrix pkg/plugins/gateway/algorithms/least_request.go",
		New:     func(p Params) Policy { return &LeastLoaded{Rand: p.Rand} },
	},
	"aibrix-prefix-cache": {
		Summary: "AIBrix prefix-cache: hash table of routed prompt blocks; best match within mean + k·σ running requests, least request otherwise",
		Source:  "vllm-project/aibrix @429c45e90fb4 pkg/plugins/gateway/algorithms/prefix_cache.go (Route line 91, getTargetPodFromMatchedPods line 157, getTargetPodOnLoadImbalance line 198; defaults lines 35–36), pkg/utils/prefixcacheindexer",
		Uses:    []string{"prefix-cache-pod-running-request-imbalance-abs-count", "prefix-cache-standard-deviation-factor", "prefix-cache-block-number"},
		New: func(p Params) Policy {
			return &AIBrixPrefixCache{Rand: p.Rand, ImbalanceAbsCount: p.PrefixCacheImbalanceAbsCount, StdDevFactor: float64(p.PrefixCacheStandardDeviationFactor),
				CapacityTokens: p.PrefixCacheBlockNumber * aibrixBlockTokens}
		},
	},
	"round-robin": {
		Summary: "next worker in rotation, never consulting load (Dynamo --router-mode round-robin); from v1.3, with --active-decode-blocks-threshold set, only over the workers whose published kv_used_blocks are not over it (529 when none)",
		Uses:    []string{"active-decode-blocks-threshold"}, EngineMetricsWhen: engineAdmission,
		New: func(p Params) Policy { return &RoundRobin{Admit: engineOnlyAdmission(p)} },
	},
	"random": {
		Summary: "uniformly random worker (Dynamo --router-mode random); from v1.3, with --active-decode-blocks-threshold set, among the workers not overloaded (529 when none)",
		Uses:    []string{"active-decode-blocks-threshold"}, EngineMetricsWhen: engineAdmission,
		New: func(p Params) Policy { return &Random{Rand: p.Rand, Admit: engineOnlyAdmission(p)} },
	},
	"least-loaded": {
		Summary: "worker with the fewest requests in flight (random tie-break)",
		New:     func(p Params) Policy { return &LeastLoaded{Rand: p.Rand} },
	},
	"power-of-two": {
		Summary: "fewer in flight of two workers drawn at random (Ray Serve's default request router)",
		New:     func(p Params) Policy { return &PowerOfTwo{Rand: p.Rand} },
	},
	"kv": {
		Summary: "Dynamo's KV router (--router-mode kv) as --dynamo-version ships it: cost argmin; v1.2 adds the router queue (4 × max-num-batched-tokens) and the busy monitor's fleet gate (book, then 503 when its free set is empty); v1.4 has neither by default (thresholds set: busy workers excluded one by one, 529); v0.9 is cost only",
		Source:  "ai-dynamo/dynamo main at each release's cut (routesim policies --dynamo-version V lists the files)",
		Uses:    append(dynamoKVParams[:len(dynamoKVParams):len(dynamoKVParams)], tierParams...), KVAware: true, EngineMetricsWhen: engineUsageMatters,
		New: func(p Params) Policy { return newDynamoKV(p) },
	},
	"kv-admission": {
		Summary: "recipe: kv with --router-queue-threshold 0 (no router queue): the busy monitor alone",
		Uses:    append(dynamoKVParams[:len(kvParams)+3:len(kvParams)+3], tierParams...), KVAware: true, EngineMetricsWhen: engineUsageMatters,
		New: func(p Params) Policy {
			p.RouterQueueThreshold = 0
			return newDynamoKV(p)
		},
	},
	"kv-backpressure": {
		Summary: "recipe: kv with --active-decode-blocks-threshold 0 --active-prefill-tokens-threshold 0 --active-prefill-tokens-threshold-frac 0 (no busy monitor): the router queue alone, at the release's threshold (4 where it ships none)",
		Uses:    append(append(kvParams[:len(kvParams):len(kvParams)], "router-queue-threshold", "max-queued-isl-tokens"), tierParams...),
		KVAware: true,
		New: func(p Params) Policy {
			p.ActiveDecodeBlocksThreshold, p.ActivePrefillTokensThreshold, p.ActivePrefillTokensThresholdFrac = 0, 0, 0
			if p.RouterQueueThreshold < 0 {
				if r, _ := ReleaseOf(p.DynamoVersion); r.QueueThreshold == 0 {
					p.RouterQueueThreshold = 4
				}
			}
			return newDynamoKV(p)
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
		err := fmt.Errorf("policy: unknown policy %q (known: %s)", name, strings.Join(Names(), ", "))
		if best, ok := suggest.Nearest(name, Names()); ok {
			err = fmt.Errorf("%w; did you mean %s?", err, best)
		}
		return Entry{}, err
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
