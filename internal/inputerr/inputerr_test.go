package inputerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorNamesPosition(t *testing.T) {
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{Errorf("t.jsonl", 3, "input_length", "%d must be ≥ 1", -2), "t.jsonl:3: input_length: -2 must be ≥ 1"},
		{Errorf("t.jsonl", 0, "", "trace has no requests"), "t.jsonl: trace has no requests"},
		{Errorf("spec.json", 7, "", "malformed JSON"), "spec.json:7: malformed JSON"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

func TestRenderNamesFields(t *testing.T) {
	flag := func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }
	err := errors.Join(
		Fieldf("max_num_seqs", "%d must be ≥ 1", 0),
		fmt.Errorf("pool 0: %w", Fieldf("max_model_len", "%d needs more KV; raise `gpu_memory_utilization`", 9000)),
		Fieldf("gpu", ": unknown GPU %q", "B300"),
		errors.New("plain"),
	)
	want := "max_num_seqs 0 must be ≥ 1\npool 0: max_model_len 9000 needs more KV; raise gpu_memory_utilization\ngpu: unknown GPU \"B300\"\nplain"
	if got := err.Error(); got != want {
		t.Errorf("library text %q, want %q", got, want)
	}
	want = "--max-num-seqs 0 must be ≥ 1\npool 0: --max-model-len 9000 needs more KV; raise --gpu-memory-utilization\n--gpu: unknown GPU \"B300\"\nplain"
	if got := Render(err, flag); got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
}

// TestRenderNamesMentionsInPlainErrors: a plain error (not a FieldError)
// that mentions settings in backquotes, such as a trace filter's "no
// requests left", has them renamed too, also when wrapped.
func TestRenderNamesMentionsInPlainErrors(t *testing.T) {
	flag := func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }
	err := fmt.Errorf("run: %w", errors.New("t.jsonl: no requests left after filters (`max_isl` 0, `skip` 9)"))
	want := "run: t.jsonl: no requests left after filters (--max-isl 0, --skip 9)"
	if got := Render(err, flag); got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	if !Mentions(err) || Mentions(errors.New("plain")) {
		t.Errorf("Mentions: %v, %v", Mentions(err), Mentions(errors.New("plain")))
	}
}
