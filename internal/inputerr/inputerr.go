// Package inputerr is the one positioned input error of routesim's
// readers (traces, scenario files, calibration specs and exports):
// "file:line: field: problem", so a user can go straight to the mistake.
package inputerr

import "fmt"

// Error is a problem with an input file at a line (0 = the whole file)
// and a field ("" = the line as a whole).
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return pos + ": " + e.Msg
	}
	return pos + ": " + e.Field + ": " + e.Msg
}

// Errorf builds an *Error with a formatted message.
func Errorf(file string, line int, field, format string, a ...any) *Error {
	return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}
