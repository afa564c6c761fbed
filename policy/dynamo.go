package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// Release is one Dynamo release's KV router (`--router-mode kv`) as it
// ships: the default of every mechanism routesim models, each read from the
// release's source (Sources). The cost and its weights are the same in
// every supported release (overlap_score_credit 1, prefill_load_scale 1,
// temperature 0).
type Release struct {
	// Version is the release, MAJOR.MINOR.PATCH.
	Version string
	// QueueThreshold parks a request while every worker's router-tracked
	// prefill tokens exceed this × max_num_batched_tokens (FCFS,
	// head-of-line); 0 = no router queue.
	QueueThreshold float64
	// Admission holds the busy monitor's defaults, how it refuses, the
	// reset of the free set, and whether parked requests keep their
	// arrival-time overlaps.
	Admission
	// TreeSizeTieBreak: ties at the minimum cost go to the worker whose
	// prefix index holds the fewest blocks, then the lowest index (v0.9's
	// scheduler), not a uniform draw.
	TreeSizeTieBreak bool
	// OverloadCode answers a busy refusal (its body: OverloadMessage).
	OverloadCode int
	// Tiers is how the router reads the KV events of the tiers below the
	// GPU, with the release's host_cache_hit_weight and
	// disk_cache_hit_weight (docs/readings/tier-routing.md).
	Tiers TierReading
	// Sources say where each default was read: mechanism → file@commit:line.
	Sources [][2]string
}

// GateRule is how a release's busy monitor refuses requests.
type GateRule uint8

const (
	// NoGate: the busy state never reaches the request path (v0.9.0's kv
	// mode: its monitor updates a client the router does not read), so
	// kv never refuses a request.
	NoGate GateRule = iota
	// FleetGate (v1.2): the worker is the cost argmin over every worker,
	// booked first; the request is refused only when the free set the
	// monitor last pushed is empty. The monitor pushes the free set when
	// the busy set changes, and the client resets it to every worker each
	// reconcile period, so a refusal window lasts until the next reset.
	FleetGate
	// ExcludeBusy (v1.3 on): overloaded workers are excluded one by one
	// from the choice; all excluded → refused.
	ExcludeBusy
)

var gateNames = [...]string{"none (busy state never reaches requests)", "fleet gate: refuse only when the pushed free set is empty", "exclude overloaded workers one by one"}

// String names the rule as `routesim policies` prints it.
func (g GateRule) String() string {
	if int(g) < len(gateNames) {
		return gateNames[g]
	}
	return "unknown"
}

// Commits the releases were read at (ai-dynamo/dynamo main, bracketing each
// release's cut; see README "Dynamo's router as releases ship it").
const (
	commitV09 = "45bc1b798cce"
	commitV12 = "c8d8e7602573"
	commitV14 = "e147ceeac056"
)

// releases are the supported releases, oldest first.
var releases = []Release{
	{
		Version: "0.9.0", TreeSizeTieBreak: true, OverloadCode: 503,
		Tiers:     TierReading{MediumIgnored: true, NativeCPU: CPURemovesDevice},
		Admission: Admission{Gate: NoGate, ReconcileNs: 5e9, OverloadMessage: "Service temporarily unavailable: All workers are busy, please retry later"},
		Sources: [][2]string{
			{"cost and weights", "lib/llm/src/kv_router/scheduler.rs@" + commitV09 + ":L499-521; components/src/dynamo/frontend/main.py@" + commitV09 + ":L161-172"},
			{"tie-break", "lib/llm/src/kv_router/scheduler.rs@" + commitV09 + ":L390-403,L542-559 (smallest indexer tree, then map order)"},
			{"router queue", "none: #6010 landed after the v0.9.0 cut"},
			{"busy thresholds", "components/src/dynamo/frontend/main.py@" + commitV09 + ":L265-282 (None)"},
			{"gate", "the monitor updates the watcher's Client (lib/llm/src/discovery/watcher.rs@" + commitV09 + ":L419,L490-494), the router reads its own (common.rs@" + commitV09 + ":L250-256): kv never refuses (fixed by #7615)"},
			{"status", "lib/runtime/src/pipeline/error.rs@" + commitV09 + ":L124-125"},
			{"tiers: one index, the event's medium ignored", "lib/llm/src/kv_router/publisher.rs@" + commitV09 + ":L562-620 (convert_event reads no medium); a store without token ids is dropped (create_stored_blocks L653-692), a remove applies to the one index"},
			{"KVBM's KV event consolidator (in the worker, --kvbm-kv-events): dedup only, KVBM's blocks reach the router as Device events", "lib/llm/src/block_manager/kv_consolidator/tracker.rs@" + commitV09 + ":L214-300"},
		},
	},
	{
		Version: "1.2.0", QueueThreshold: 4.0, OverloadCode: 503,
		Tiers: TierReading{Lower: true, NativeCPU: CPURemovesDevice, HostWeight: 0.75, DiskWeight: 0.25},
		Admission: Admission{DecodeBlocksFrac: 1.0, PrefillTokens: 10_000_000, PrefillTokensFrac: 10.0, Gate: FleetGate, ReconcileNs: 5e9,
			FreezeParkedOverlap: true, OverloadMessage: "ResourceExhausted: " + MsgAllBusy},
		Sources: [][2]string{
			{"cost and weights", "lib/kv-router/src/scheduling/selector.rs@" + commitV12 + ":L107-195; components/src/dynamo/common/configuration/groups/kv_router_args.py@" + commitV12 + ":L161-205"},
			{"tie-break", "lib/kv-router/src/scheduling/selector.rs@" + commitV12 + ":L282-301 (uniform)"},
			{"router queue 4.0 × max_num_batched_tokens, FCFS, head-of-line", "kv_router_args.py@" + commitV12 + ":L334-376; lib/kv-router/src/scheduling/queue.rs@" + commitV12 + ":L164-232"},
			{"parked requests keep their arrival-time overlaps", "lib/llm/src/kv_router.rs@" + commitV12 + ":L512,L548,L565 (find_matches before schedule)"},
			{"busy thresholds 1.0 / 10,000,000 / 10.0", "components/src/dynamo/common/configuration/groups/router_args.py@" + commitV12 + ":L114-149"},
			{"busy predicate (strict >), latch on router and engine blocks", "lib/llm/src/discovery/worker_monitor.rs@" + commitV12 + ":L122-194,L233-301"},
			{"free set pushed on change, reset to all every 5 s", "worker_monitor.rs@" + commitV12 + ":L659-664; lib/runtime/src/component/client.rs@" + commitV12 + ":L84-85,L278-325"},
			{"book, then refuse when the free set is empty", "lib/llm/src/kv_router/push_router.rs@" + commitV12 + ":L658-706; lib/runtime/src/pipeline/network/egress/push_router.rs@" + commitV12 + ":L809-832"},
			{"status 503", "lib/llm/src/http/service/openai.rs@" + commitV12 + ":L87-103,L224-235"},
			{"KVBM's KV event consolidator (in the worker, --kvbm-kv-events): dedup by default, merged into Device events; passthrough keeps their tier, read by the host and disk indexes (#8380)", "lib/bindings/kvbm/python/kvbm/utils.py@" + commitV12 + ":L16-29; lib/llm/src/block_manager/kv_consolidator/tracker.rs@" + commitV12 + ":L300-470,L575-600"},
			{"tiers: host (CPU_PINNED) and disk indexes matched on from the device match (#8380)", "lib/kv-router/src/indexer/lower_tier_indexers.rs@" + commitV12 + ":L153-210; lower_tier.rs@" + commitV12 + ":L379-470"},
			{"tier credit: overlap_score_credit·device + host_cache_hit_weight·host + disk_cache_hit_weight·disk, 0.75 / 0.25", "lib/kv-router/src/scheduling/selector.rs@" + commitV12 + ":L107-160; scheduling/config.rs@" + commitV12 + ":L38-44; lib/llm/src/kv_router.rs@" + commitV12 + ":L114-175,L955-993"},
			{"vLLM's \"CPU\" parses as Device: stores dropped (no token ids), removes erase the device entry", "lib/kv-router/src/protocols.rs@" + commitV12 + ":L230-244; zmq_wire/convert.rs@" + commitV12 + ":L17-30,L100-123,L163-201"},
		},
	},
	{
		Version: "1.4.0", OverloadCode: 529,
		Tiers:     TierReading{Lower: true, NativeCPU: CPURemovesHost, HostWeight: 0.75, DiskWeight: 0.25},
		Admission: Admission{Gate: ExcludeBusy, ReconcileNs: 5e9, KeepOverloaded: true, OverloadMessage: "Service temporarily overloaded"},
		Sources: [][2]string{
			{"cost and weights", "lib/kv-router/src/scheduling/selector/default.rs@" + commitV14 + ":L217-288; kv_router_args.py@" + commitV14 + ":L303-394"},
			{"router queue off", "kv_router_args.py@" + commitV14 + ":L520-539 (#11599)"},
			{"busy thresholds off", "router_args.py@" + commitV14 + ":L259-297"},
			{"overloaded workers excluded", "lib/kv-router/src/scheduling/queue.rs@" + commitV14 + ":L1006-1029 (#9655)"},
			{"reconcile keeps overloaded workers", "lib/runtime/src/component/client.rs@" + commitV14 + ":L321-335 (#9631)"},
			{"status 529", "lib/llm/src/http/service/error.rs@" + commitV14 + ":L11-29,L105,L161 (#10941)"},
			{"tier weights 0.75 / 0.25, flags --router-host-cache-hit-weight, --router-disk-cache-hit-weight (#10157)", "kv_router_args.py@" + commitV14 + ":L365-390"},
			{"vLLM's \"CPU\" parses as HostPinned: placeholder stores dropped, removes to the host index (#10368)", "lib/kv-router/src/protocols.rs@" + commitV14 + ":L771-779"},
		},
	},
}

// DefaultDynamoVersion is the release routesim models when none is given:
// the 8×A100 study's container (vllm-runtime:1.2.0).
const DefaultDynamoVersion = "1.2.0"

// Releases returns the supported releases, oldest first.
func Releases() []Release { return append([]Release(nil), releases...) }

// ReleaseOf returns the release a version names: MAJOR.MINOR or
// MAJOR.MINOR.PATCH (a leading v allowed) of a supported release; "" is
// DefaultDynamoVersion. Patch releases share their minor's router.
func ReleaseOf(version string) (Release, error) {
	if version == "" {
		version = DefaultDynamoVersion
	}
	mm, err := majorMinor(version)
	if err != nil {
		return Release{}, err
	}
	var known []string
	for _, r := range releases {
		if m, _ := majorMinor(r.Version); m == mm {
			return r, nil
		}
		known = append(known, r.Version)
	}
	return Release{}, fmt.Errorf("Dynamo %s: not modelled (supported releases: %s)", version, strings.Join(known, ", "))
}

func majorMinor(v string) ([2]int, error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return [2]int{}, fmt.Errorf("%q: want MAJOR.MINOR[.PATCH]", v)
	}
	var out [2]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 1000 {
			return [2]int{}, fmt.Errorf("%q: want MAJOR.MINOR[.PATCH]", v)
		}
		if i < 2 {
			out[i] = n
		}
	}
	return out, nil
}

// Admission is what a Dynamo policy's router stage enforces around it.
type Admission struct {
	// The busy monitor's thresholds (0 = off): decode blocks (the router's
	// booked prompt blocks, or the engine's published kv_used_blocks) over
	// this × the worker's total blocks; prefill tokens over an absolute
	// count; prefill tokens over this × max_num_batched_tokens.
	DecodeBlocksFrac  float64
	PrefillTokens     int
	PrefillTokensFrac float64
	// Gate is how the busy state reaches requests.
	Gate GateRule
	// ReconcileNs is the period (ns) at which the frontend's client resets
	// its free set to every worker (FleetGate), and KeepOverloaded whether
	// the reset keeps the workers the monitor reported overloaded.
	ReconcileNs    int64
	KeepOverloaded bool
	// OverloadMessage is the body of a busy refusal.
	OverloadMessage string
	// FreezeParkedOverlap: a parked request keeps the cached-prefix
	// overlaps the router computed when it arrived, for its choice and its
	// booking at dequeue (v1.2; refreshed from v1.3, #9663).
	FreezeParkedOverlap bool
	// EngineOnly: the monitor hears only the engines' published usage, not
	// the router's own load (round-robin and random have no KV router).
	EngineOnly bool
}

// Armed says the monitor can mark a worker busy and the busy state reaches
// requests.
func (a Admission) Armed() bool {
	return a.Gate != NoGate && (a.DecodeBlocksFrac > 0 || a.PrefillTokens > 0 || a.PrefillTokensFrac > 0)
}

// Admitter is a policy whose router stage runs Dynamo's busy monitor: the
// router calls Admission once, before the run, and enforces it (a
// capability the router type-asserts, as net/http's Flusher).
type Admitter interface {
	Admission() Admission
}

// OverloadView is a View that also reports the busy monitor's overloaded
// workers (the ExcludeBusy rule).
type OverloadView interface {
	View
	Overloaded(w int) bool
}

// dynamoKVParams are kv's parameters: the cost's, the busy monitor's three
// thresholds, then the router queue's.
var dynamoKVParams = append(kvParams[:len(kvParams):len(kvParams)], "active-decode-blocks-threshold", "active-prefill-tokens-threshold",
	"active-prefill-tokens-threshold-frac", "router-queue-threshold", "max-queued-isl-tokens")

func newKV(p Params) *KV {
	return &KV{Rand: p.Rand, Credit: p.OverlapScoreCredit, Scale: p.PrefillLoadScale, Temperature: p.RouterTemperature}
}

// engineOnlyAdmission is the busy monitor of --router-mode round-robin or
// random: no router bookkeeping feeds it, only the engines' published
// kv_used_blocks against the decode threshold, which can trip only below
// 1 (the engine never uses more than its total blocks).
func engineOnlyAdmission(p Params) Admission {
	rel := releaseFor(p)
	a := rel.Admission
	a.PrefillTokens, a.PrefillTokensFrac, a.FreezeParkedOverlap, a.EngineOnly = 0, 0, false, true
	if f := p.ActiveDecodeBlocksThreshold; f >= 0 {
		a.DecodeBlocksFrac = f
	}
	if a.DecodeBlocksFrac >= 1 {
		a.DecodeBlocksFrac = 0 // cannot trip
	}
	return a
}

// engineAdmission says round-robin's or random's busy monitor is armed
// with p (it then needs the engines' published usage).
func engineAdmission(p Params) bool { return engineOnlyAdmission(p).Armed() }

// engineUsageMatters says the busy monitor of a kv policy with p can be
// tripped by the engine's published kv_used_blocks: only by a decode
// threshold below 1, since the engine never uses more than its total
// blocks (routesim then keeps the engine feed; it costs the decode runs).
func engineUsageMatters(p Params) bool {
	k := newDynamoKV(p)
	return k.Admit.Armed() && k.Admit.Gate != NoGate && k.Admit.DecodeBlocksFrac > 0 && k.Admit.DecodeBlocksFrac < 1
}

// newDynamoKV is Dynamo's KV router as p.DynamoVersion ships it, with every
// parameter p sets (≥ 0) overriding the release's default.
func newDynamoKV(p Params) *KV {
	rel := releaseFor(p)
	orF := func(v, def float64) float64 {
		if v < 0 {
			return def
		}
		return v
	}
	orI := func(v, def int) int {
		if v < 0 {
			return def
		}
		return v
	}
	k := newKV(p)
	k.Release = rel
	k.applyTierParams(p)
	k.Admit = rel.Admission
	k.Admit.DecodeBlocksFrac = orF(p.ActiveDecodeBlocksThreshold, rel.DecodeBlocksFrac)
	k.Admit.PrefillTokens = orI(p.ActivePrefillTokensThreshold, rel.PrefillTokens)
	k.Admit.PrefillTokensFrac = orF(p.ActivePrefillTokensThresholdFrac, rel.PrefillTokensFrac)
	if q := orF(p.RouterQueueThreshold, rel.QueueThreshold); q > 0 {
		k.Queue = &QueueGate{Threshold: q, MaxQueuedISLTokens: p.MaxQueuedISLTokens}
	}
	return k
}

// releaseFor is the release p.DynamoVersion names (the run description
// validates the version before any policy is built; an invalid one falls
// back to DefaultDynamoVersion).
func releaseFor(p Params) Release {
	rel, err := ReleaseOf(p.DynamoVersion)
	if err != nil {
		rel, _ = ReleaseOf(DefaultDynamoVersion)
	}
	return rel
}
