package workload

import "github.com/routesim/routesim/sim"

// prefixSalt separates generated shared-prefix hashes from trace ones.
const prefixSalt = 0x5eed_0f_9ef1

// Prepare expands a trace's 512-token Mooncake blocks into blocks of
// blockSize tokens. The identity of sub-block j of Mooncake block k is
// (chained hash of ids 0..k, j), so two prompts share a worker block exactly
// when they share the Mooncake prefix up to it. Only full blocks get a hash.
// Jobs leave MaxTokens 0, i.e. max_tokens = the trace's output length:
// what AIPerf sends when it replays a trace (TensorRT-LLM's
// GUARANTEED_NO_EVICT reserves prompt + max_tokens).
func Prepare(t *Trace, blockSize int) (*sim.Workload, error) {
	if err := sim.CheckBlockSize(blockSize); err != nil {
		return nil, err
	}
	total := 0
	for _, r := range t.Requests {
		total += len(r.HashIDs)
	}
	backing := make([]uint64, 0, total)
	wl := &sim.Workload{Name: t.Name, BlockSize: blockSize, Jobs: make([]sim.Job, len(t.Requests))}
	for i, r := range t.Requests {
		backing, wl.Jobs[i] = prepareJob(backing, r, i, blockSize)
	}
	return wl, nil
}

// prepareJob builds request r's job (index i) at blockSize, appending its
// chain hashes to backing, which the job's Chains then share.
func prepareJob(backing []uint64, r Request, i, blockSize int) ([]uint64, sim.Job) {
	per := MooncakeBlockTokens / blockSize
	full := r.InputTokens / blockSize
	start := len(backing)
	var chain uint64
	for k, id := range r.HashIDs {
		if k*per >= full {
			break
		}
		chain = sim.Mix(chain, uint64(id))
		backing = append(backing, chain)
	}
	j := sim.Job{
		ID:           i,
		Line:         r.Line,
		Arrival:      sim.Time(r.ArrivalNs),
		InputTokens:  r.InputTokens,
		OutputTokens: r.OutputTokens,
		Chains:       backing[start:len(backing):len(backing)],
		PromptBlocks: min(full, (len(backing)-start)*per),
		Session:      r.Session,
		Delay:        sim.Time(r.DelayNs),
	}
	// A generated shared prefix: its whole worker blocks get the group's
	// hashes, including those of a last, partial Mooncake block (the
	// blocks after it keep their unique chain).
	if shared := min(r.SharedPrefix, r.InputTokens) / blockSize; shared > 0 {
		j.SharedBlocks, j.SharedSeed = shared, sim.Mix(prefixSalt, uint64(r.PrefixGroup))
	}
	return backing, j
}
