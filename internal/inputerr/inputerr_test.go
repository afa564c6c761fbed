package inputerr

import "testing"

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
