package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/scenario"
)

// fieldFlags names the flags whose spelling is not their run-description
// field's with '-' for '_' (sections — synthetic., sessions.,
// policy_params. — are dropped first). It is the one place where the
// library's field names meet the CLI's flag names.
var fieldFlags = map[string]string{
	"request_timeout_s":      "request-timeout-seconds",
	"warmup_s":               "warmup",
	"think_s":                "think-time",
	"duration_s":             "duration",
	"turns_min":              "turns",
	"turns_max":              "turns",
	"kv_offloading_size_gib": "kv-offloading-size",
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
	var done flagErr
	if !inputerr.Mentions(err) || errors.As(err, &done) { // (located renders them already)
		return err
	}
	return flagErr{err, inputerr.Render(err, flagOf)}
}

// located renders err's settings where the user gave them: a field whose
// value came from the --scenario file src as "file:line: field", every
// other as its flag. A field's value came from the file if the file sets
// it and neither its flag (fs) nor the command itself replaced it (own:
// the flags, without "--", whose fields a command sets its own way, such
// as a sweep's --policy list).
func located(err error, fs *pflag.FlagSet, src *scenario.Source, own ...string) error {
	var fe *inputerr.FieldError
	if err == nil || src == nil || !errors.As(err, &fe) {
		return err
	}
	at := func(field string) (string, int) {
		flag := strings.TrimPrefix(flagOf(field), "--")
		if slices.Contains(own, flag) || fs.Changed(flag) {
			return "", 0
		}
		return src.File, src.Line(field)
	}
	name := func(field string) string {
		if _, line := at(field); line > 0 {
			return field
		}
		return flagOf(field)
	}
	return flagErr{err, inputerr.RenderAt(err, at, name)}
}
