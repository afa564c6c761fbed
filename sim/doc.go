// Package sim is routesim's engine: a deterministic discrete-event
// simulation of N vLLM-like (or TensorRT-LLM-like) workers behind a
// router. It does no I/O; traces, scenarios, sweeps, reports and plots are
// packages beside it.
//
// Reading guide, in the order a request meets the code:
//
//   - config.go — Config, one run's setup: its pools (PoolConfig), each
//     worker's engine settings (WorkerConfig, ResolveWorker), router
//     settings, membership changes; Validate reports every problem at once.
//   - engine.go — Time, the event queue and its tie-break order (events at
//     one instant fire by kind, then in scheduling order or by a key the
//     scheduler gives), nothing domain-specific beyond the kinds.
//   - cluster.go — Run: builds the workers and the pools from a Config,
//     drives the events, assembles the Result; the invariant checks
//     (every request ends once, no KV block referenced at the end).
//   - pool.go — pools (Pool: a role, its live worker ids, its Router with
//     its own policy), the Decider that gives a request its path through
//     the pools, and membership changes (MemberChange: a worker joins, or
//     leaves and drains); worker ids are stable for the run.
//   - dispatch.go — the request's way in: frontend delay, the policy's
//     decision (dispatch, park in the router queue, reject with a status),
//     client retries and time-outs.
//   - router.go — what the router knows: in-flight counts, booked prefill
//     tokens, in-flight blocks per worker, lagged KV events and published
//     KV usage (the policy.View and LoadsView it hands to policies);
//     flighttree.go the radix tree of in-flight blocks and holders.go the
//     inverted index of stored blocks, which answer a decision for every
//     worker in one pass; monitor.go Dynamo's busy monitor (KvWorkerMonitor)
//     and the frontend client's free set, which turn load into 503s.
//   - worker.go — one engine: FCFS waiting queue, continuous batching under
//     a token budget with chunked prefill, recompute preemption, abort
//     (vLLM V1's scheduler); trtllm.go TensorRT-LLM's instead (capacity
//     and micro-batch schedulers, the overlap scheduler, the executor's
//     host time per iteration), engines.go their names; noise.go the
//     service noise, a lognormal factor per (seed, worker, step index); step.go a step's
//     effects (its blocks, the end of each request's share: tokens, commits,
//     samples, completions), written once for both ways a step is taken:
//     one per event, or inside a decode run (decoderun.go: the decode-only
//     steps a worker takes as one event, which batch only the arithmetic).
//   - kvcache.go, kvindex.go — the paged KV cache with prefix caching
//     and LRU eviction of unreferenced blocks; blockindex.go the hash
//     table the router's indexes use; blocklist.go the intrusive list of
//     block slots behind the cache's free queue and the CPU tier's LRU.
//   - hosttier.go, hostworker.go — vLLM's CPU KV tier (--kv-offloading-size,
//     the OffloadingConnector): write-through, LRU, loads deferred to a step
//     boundary; and the hooks the scheduler and the cluster call into it.
//     medium.go names the tier a KV event speaks for (Medium), so each
//     router can make of it what its release does: tierindex.go the
//     router's reading of the tiers below the GPU (lower-tier indexes and
//     the consecutive host-then-disk match behind policy.TierView), a pure
//     reader of the mediums it receives (KVBM's consolidator, which may
//     merge KVBM's blocks with the GPU's, is the worker's: kvbmevents.go).
//     tiersummary.go adds up the prompt tokens each tier
//     served and the bytes each tier below the GPU moved
//     (Summary.KVTiers), keyed by medium.
//   - lmcache.go, lmcacheworker.go — LMCache's CPU tier through vLLM's
//     LMCacheConnectorV1 (spring 2025, --lmcache-max-local-cpu-size):
//     prompt chunks stored after the step, LRU, loads and stores
//     synchronous inside the step, router-invisible; and its hooks.
//   - kvbm.go, kvbmconfig.go, kvbmevents.go — Dynamo's KV Block Manager
//     on a vLLM worker (--kvbm-cpu-cache-gb, --kvbm-disk-cache-gb): its
//     rules for the host tier, the disk tier and the G2 → G3 frequency
//     filter; and the KV event consolidator its events reach the router
//     through (--kvbm-kv-events dedup or passthrough, in the worker).
//   - job.go, store.go — the prepared requests (Workload, Job; built by
//     package workload, trace prompts in compact form) and their per-run
//     state, with the recycled buffers prompts are expanded into.
//   - record.go, summary.go, quantile.go — outcomes (Status, Record) and
//     the AIPerf-style summary; bands.go the spread over coefficient draws;
//     nvml.go the simulated GPU samples.
//   - rng.go — the named, seeded random streams (every random number comes
//     from one).
package sim
