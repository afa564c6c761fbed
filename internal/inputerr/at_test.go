package inputerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRenderAtNamesEachSettingWhereItWasGiven: a field placed in a file
// reads file:line: field: problem, every other setting (and every
// mention) is named by name, through joins and wrapping.
func TestRenderAtNamesEachSettingWhereItWasGiven(t *testing.T) {
	lines := map[string]int{"retry": 3, "max_model_len": 5}
	at := func(f string) (string, int) { return "s.json", lines[f] }
	name := func(f string) string {
		if lines[f] > 0 {
			return f
		}
		return "--" + strings.ReplaceAll(f, "_", "-")
	}
	err := errors.Join(
		Fieldf("retry", "%d must be in [0, 100]", -1),
		fmt.Errorf("pool 0: %w", Fieldf("max_model_len", "%d needs more KV; raise `gpu_memory_utilization`", 9000)),
		Fieldf("retry_backoff", "must be > 0 when `retry` is set"),
		Fieldf("max_model_len", ": unknown"),
		Wrap("retry", errors.New("bad")),
	)
	want := "s.json:3: retry: -1 must be in [0, 100]\n" +
		"pool 0: s.json:5: max_model_len: 9000 needs more KV; raise --gpu-memory-utilization\n" +
		"--retry-backoff must be > 0 when retry is set\n" +
		"s.json:5: max_model_len: unknown\n" +
		"s.json:3: retry: bad"
	if got := RenderAt(err, at, name); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := RenderAt(err, nil, name), Render(err, name); got != want {
		t.Errorf("RenderAt without a file %q, Render %q", got, want)
	}
}
