package sim

import "github.com/routesim/routesim/internal/inputerr"

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

// TraceBlockTokens is the token count of one block of a Mooncake trace's
// hash_ids; a worker's KV block size must divide it, so trace blocks split
// into whole worker blocks (workload.MooncakeBlockTokens is the same).
const TraceBlockTokens = 512

// CheckBlockSize refuses a KV block size that does not divide
// TraceBlockTokens.
func CheckBlockSize(b int) error {
	if b < 1 || b > TraceBlockTokens || TraceBlockTokens%b != 0 {
		return inputerr.Fieldf("block_size", "%d must divide %d (e.g. 16, 32, 64, 128)", b, TraceBlockTokens)
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
