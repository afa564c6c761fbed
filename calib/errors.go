package calib

import (
	"fmt"

	"github.com/routesim/routesim/sim/workload"
)

// Error is a positioned input error, "file:line: field: problem" — the
// same type the trace reader returns.
type Error = workload.Error

func errf(file string, line int, field, format string, a ...any) error {
	return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}
