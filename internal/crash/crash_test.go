package crash

import (
	"errors"
	"strings"
	"testing"
)

func TestGuardRecoversPanics(t *testing.T) {
	err := Guard(func() error { var m map[string]int; m["x"] = 1; return nil })
	var in *Internal
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "internal error") || len(in.Stack) == 0 {
		t.Errorf("%v", err)
	}
	want := errors.New("plain")
	if err := Guard(func() error { return want }); err != want {
		t.Errorf("an ordinary error changed: %v", err)
	}
}
