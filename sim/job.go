package sim

import (
	"fmt"

	"github.com/routesim/routesim/sim/workload"
)

// Job is one request prepared for a run at a given KV block size.
type Job struct {
	ID           int
	Line         int
	Arrival      Time
	InputTokens  int
	OutputTokens int
	// Blocks are content hashes of full blocks: block k covers tokens
	// [k·B, (k+1)·B) of the sequence. Equal hashes mean equal prefixes. The
	// first PromptBlocks lie inside the prompt; a closed-loop client may
	// also name the blocks its output will fill (so its next turn, whose
	// prompt contains this answer, can find them cached); trace requests
	// name prompt blocks only.
	Blocks       []uint64
	PromptBlocks int
	// Session and Delay come from a trace's session_id and delay: a later
	// turn is sent Delay after the previous turn of its session ended.
	Session string
	Delay   Time
}

// prompt returns the hashes of the prompt's full blocks.
func (j *Job) prompt() []uint64 { return j.Blocks[:j.PromptBlocks] }

// Workload is a trace prepared for one block size; it is read-only and can
// be shared by concurrent runs.
type Workload struct {
	Name      string
	BlockSize int
	Jobs      []Job
}

// Prepare expands a trace's 512-token Mooncake blocks into blocks of
// blockSize tokens. The identity of sub-block j of Mooncake block k is
// (chained hash of ids 0..k, j), so two prompts share a worker block exactly
// when they share the Mooncake prefix up to it. Only full blocks get a hash.
// prefixSalt separates generated shared-prefix hashes from trace ones.
const prefixSalt = 0x5eed_0f_9ef1

func Prepare(t *workload.Trace, blockSize int) (*Workload, error) {
	if err := checkBlockSize(blockSize); err != nil {
		return nil, err
	}
	per := workload.MooncakeBlockTokens / blockSize
	total := 0
	for _, r := range t.Requests {
		total += r.InputTokens / blockSize
	}
	backing := make([]uint64, 0, total)
	wl := &Workload{Name: t.Name, BlockSize: blockSize, Jobs: make([]Job, len(t.Requests))}
	for i, r := range t.Requests {
		full := r.InputTokens / blockSize
		start := len(backing)
		var chain uint64
		for k, id := range r.HashIDs {
			chain = Mix(chain, uint64(id))
			for j := 0; j < per && k*per+j < full; j++ {
				backing = append(backing, Mix(chain, uint64(j)+1))
			}
		}
		// A generated shared prefix: its whole worker blocks get the
		// group's hashes, including those of a last, partial Mooncake block
		// (the blocks after it keep their unique chain).
		if shared := min(r.SharedPrefix, r.InputTokens) / blockSize; shared > 0 {
			g := Mix(prefixSalt, uint64(r.PrefixGroup))
			for b := 0; b < shared; b++ {
				backing[start+b] = Mix(g, uint64(b)+1)
			}
		}
		wl.Jobs[i] = Job{
			ID:           i,
			Line:         r.Line,
			Arrival:      Time(r.ArrivalNs),
			InputTokens:  r.InputTokens,
			OutputTokens: r.OutputTokens,
			Blocks:       backing[start:len(backing):len(backing)],
			PromptBlocks: len(backing) - start,
			Session:      r.Session,
			Delay:        Time(r.DelayNs),
		}
	}
	return wl, nil
}

func checkBlockSize(b int) error {
	if b < 1 || b > workload.MooncakeBlockTokens || workload.MooncakeBlockTokens%b != 0 {
		return fmt.Errorf("--block-size %d must divide %d (e.g. 16, 32, 64, 128)", b, workload.MooncakeBlockTokens)
	}
	return nil
}

// Mix combines a running hash with a value (a splitmix64 finaliser): the
// one hash routesim chains block contents with.
func Mix(h, v uint64) uint64 {
	x := h ^ (v + 0x9e3779b97f4a7c15 + h<<6 + h>>2)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
