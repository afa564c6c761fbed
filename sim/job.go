package sim

import (
	"fmt"
	"math"

	"github.com/routesim/routesim/internal/hashmix"
	"github.com/routesim/routesim/internal/inputerr"
)

// Job is one request prepared for a run at a given KV block size.
type Job struct {
	ID           int
	Line         int
	Arrival      Time
	InputTokens  int
	OutputTokens int
	// MaxTokens is the max_tokens the client sent (0: OutputTokens, which
	// is what AIPerf sends when it replays a trace, and what routesim's
	// session clients send). Only TensorRT-LLM's GUARANTEED_NO_EVICT reads
	// it: it reserves KV for InputTokens + MaxTokens.
	MaxTokens int
	// Blocks are content hashes of full blocks: block k covers tokens
	// [k·B, (k+1)·B) of the sequence. Equal hashes mean equal prefixes. The
	// first PromptBlocks lie inside the prompt; a closed-loop client may
	// also name the blocks its output will fill (so its next turn, whose
	// prompt contains this answer, can find them cached); trace requests
	// name prompt blocks only.
	Blocks       []uint64
	PromptBlocks int
	// Chains, when Blocks is nil, is a trace prompt's blocks in compact
	// form: the running hash after each TraceBlockTokens-token trace block.
	// With per = TraceBlockTokens/B worker blocks to a trace block, prompt
	// block k (of PromptBlocks) is Mix(Chains[k/per], k%per+1), except that
	// the first SharedBlocks are Mix(SharedSeed, k+1) (a generated shared
	// prefix). The simulator expands a request's blocks when it arrives and
	// recycles them when it ends, so a workload of a million requests holds
	// 1/per of its expanded hashes.
	Chains       []uint64
	SharedBlocks int
	SharedSeed   uint64
	// Session and Delay come from a trace's session_id and delay: a later
	// turn is sent Delay after the previous turn of its session ended.
	Session string
	Delay   Time
}

// check reports a job whose token counts and blocks disagree.
func (j *Job) check(blockSize int) error {
	blocks := len(j.Blocks)
	if j.Blocks == nil && j.Chains != nil {
		blocks = j.PromptBlocks
		if per := TraceBlockTokens / blockSize; j.PromptBlocks > len(j.Chains)*per {
			return fmt.Errorf("%d prompt blocks from %d trace blocks", j.PromptBlocks, len(j.Chains))
		}
	}
	if j.InputTokens > math.MaxInt32-j.OutputTokens {
		return fmt.Errorf("%d in and %d out overflow a sequence length", j.InputTokens, j.OutputTokens)
	}
	if j.MaxTokens != 0 && (j.MaxTokens < j.OutputTokens || j.MaxTokens > math.MaxInt32-j.InputTokens) {
		return fmt.Errorf("max_tokens %d below the %d output tokens, or past a sequence length", j.MaxTokens, j.OutputTokens)
	}
	if j.InputTokens < 1 || j.OutputTokens < 1 || j.PromptBlocks > j.InputTokens/blockSize ||
		blocks > (j.InputTokens+j.OutputTokens)/blockSize || j.PromptBlocks > blocks {
		return fmt.Errorf("%d in, %d out, %d prompt blocks of %d", j.InputTokens, j.OutputTokens, j.PromptBlocks, blocks)
	}
	return nil
}

// AppendBlocks appends the job's block hashes at block size blockSize
// (its Blocks, or the expansion of its Chains) to dst.
func (j *Job) AppendBlocks(dst []uint64, blockSize int) []uint64 {
	if j.Blocks != nil || j.Chains == nil {
		return append(dst, j.Blocks...)
	}
	per := TraceBlockTokens / blockSize
	start := len(dst)
	for k := 0; k < j.PromptBlocks; k++ {
		dst = append(dst, Mix(j.Chains[k/per], uint64(k%per)+1))
	}
	for k := 0; k < j.SharedBlocks && k < j.PromptBlocks; k++ {
		dst[start+k] = Mix(j.SharedSeed, uint64(k)+1)
	}
	return dst
}

// Workload is a trace prepared for one block size; it is read-only and can
// be shared by concurrent runs. Its jobs are either held (Jobs) or read
// as a run reaches them (Stream), for traces larger than memory.
type Workload struct {
	Name      string
	BlockSize int
	Jobs      []Job
	// Stream, if set (and Jobs nil), opens the jobs afresh for each run:
	// the run takes a job from it when the previous one arrives, so only
	// requests in flight are held.
	Stream func() (JobStream, error)
	// StreamLen is the number of jobs Stream yields, and StreamSpan the
	// time from the first one's arrival to the last one's.
	StreamLen  int
	StreamSpan Time
}

// Len is the number of jobs.
func (w *Workload) Len() int {
	if w.Stream != nil && w.Jobs == nil {
		return w.StreamLen
	}
	return len(w.Jobs)
}

// Span is the time from the first job's arrival to the last one's.
func (w *Workload) Span() Time {
	if w.Stream != nil && w.Jobs == nil {
		return w.StreamSpan
	}
	if len(w.Jobs) == 0 {
		return 0
	}
	return w.Jobs[len(w.Jobs)-1].Arrival - w.Jobs[0].Arrival
}

// JobStream yields a workload's jobs in arrival order, one at a time.
type JobStream interface {
	// Next returns the next job (its ID the index in the stream), or false
	// at the end or after an error (Err says which).
	Next() (*Job, bool)
	Err() error
	// Close releases the stream's file; a run closes it when it ends.
	Close() error
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
// one hash routesim chains block contents with (internal/hashmix, shared
// with the routers).
func Mix(h, v uint64) uint64 { return hashmix.Mix(h, v) }
