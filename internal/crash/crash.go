// Package crash turns a panic — a bug in routesim, never bad input, which
// is reported as an error — into an error that carries the panic and its
// stack, so that a command can exit with the internal-error code (3)
// instead of dying with a Go trace, and worker goroutines do not take the
// process down.
package crash

import (
	"fmt"
	"runtime/debug"
)

// Internal is a recovered panic.
type Internal struct {
	Value any
	Stack []byte
}

func (e *Internal) Error() string {
	return fmt.Sprintf("internal error: %v (a bug in routesim: please report it with the command line)", e.Value)
}

// Guard runs fn and returns its error, or an *Internal if fn panicked.
func Guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Internal{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn()
}
