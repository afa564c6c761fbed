// Package policy holds the routers: given a request and the router's view
// of the workers, pick a worker (or refuse).
//
// # Reading guide
//
//   - policy.go: the one-method Policy interface, the Func adapter, the
//     read-only View a policy decides on, and Decision.
//   - registry.go: the single table of policies; validation, --help and
//     construction all read it.
//   - roundrobin.go: the simplest policy, and a template for new ones.
//   - kv.go: Dynamo's KV router with its busy monitor and router queue.
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
//		best := 0
//		for w := 1; w < v.NumWorkers(); w++ {
//			if v.InFlight(w) < v.InFlight(best) {
//				best = w
//			}
//		}
//		return policy.Decision{Worker: best, Reason: "fewest in flight"}
//	})
package policy
