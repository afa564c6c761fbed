package calib

import "fmt"

// Error is a positioned input error: "file:line: field: problem".
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

func errf(file string, line int, field, format string, a ...any) error {
	return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}
