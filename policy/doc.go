// Package policy holds the routers: given a request and the router's view
// of the workers, pick a worker (or refuse).
//
// # Reading guide
//
//   - policy.go: the one-method Policy interface, the Func adapter, the
//     read-only View a policy decides on, and Decision.
//   - registry.go: the single table of policies; validation, --help and
//     construction all read it; bounds.go the upper bounds of the
//     parameters converted from seconds.
//   - members.go: a policy's record of the live workers a View lists, for
//     state built over the membership (rings, tree tenants), rebuilt when
//     workers join or leave.
//   - baselines.go: random, least-loaded and power-of-two choices.
//   - roundrobin.go: the simplest policy, and a template for new ones.
//   - kv.go: Dynamo's KV router with its busy monitor and router queue;
//     dynamo.go each Dynamo release's router defaults and busy-gate rule
//     (Release, --dynamo-version); tiers.go how a router reads the KV
//     tiers below the GPU (TierReading, TierView: the host and disk
//     blocks matched past the device match; the router reads the mediums
//     it receives, KVBM's consolidator being the worker's, sim.KVBMEvents)
//     and tierparams.go kv's tier credits.
//   - sglang.go, llmd.go, prodstack.go, prefixhash.go, ray.go, aibrix.go:
//     the routers deployed beyond Dynamo, each with its upstream source in
//     its doc comment and registry entry; approxtree.go and lruindex.go are
//     the approximate prompt indexes they keep.
//
// A policy never sees the simulator, only a View, so every policy can be
// tested on a hand-built view. policy imports nothing from routesim.
//
// Writing a policy:
//
//	least := policy.Func(func(r *policy.Request, v policy.View) policy.Decision {
//		ws := v.Workers() // the live worker ids
//		best := ws[0]
//		for _, w := range ws[1:] {
//			if v.InFlight(w) < v.InFlight(best) {
//				best = w
//			}
//		}
//		return policy.Decision{Worker: best, Reason: "fewest in flight"}
//	})
//
// Workers keep their ids for the whole run while others join and leave:
// state a policy keeps per worker is indexed by id (arrays of length
// IDBound(v.Workers()), grown when a larger id appears), and a policy
// routes only to a listed worker.
package policy
