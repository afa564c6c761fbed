package main

import (
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// fieldFlags names the flags whose spelling is not their run-description
// field's with '-' for '_' (sections — synthetic., sessions.,
// policy_params. — are dropped first). It is the one place where the
// library's field names meet the CLI's flag names.
var fieldFlags = map[string]string{
	"request_timeout_s": "request-timeout-seconds",
	"warmup_s":          "warmup",
	"think_s":           "think-time",
	"duration_s":        "duration",
	"turns_min":         "turns",
	"turns_max":         "turns",
}

// flagOf is the CLI flag for a run-description field.
func flagOf(field string) string {
	for _, section := range []string{"synthetic.", "sessions.", "policy_params."} {
		field = strings.TrimPrefix(field, section)
	}
	if f, ok := fieldFlags[field]; ok {
		return "--" + f
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}

// flagErr is an error as the CLI prints it: every setting named by its
// flag; the original stays reachable (exit codes, errors.As).
type flagErr struct {
	err  error
	text string
}

func (e flagErr) Error() string { return e.text }
func (e flagErr) Unwrap() error { return e.err }

// withFlags renders err's field names as flags, if it names any.
func withFlags(err error) error {
	if !inputerr.Mentions(err) {
		return err
	}
	return flagErr{err, inputerr.Render(err, flagOf)}
}
