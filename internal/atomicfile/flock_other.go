//go:build !unix

package atomicfile

import (
	"errors"
	"os"
)

// errWouldBlock: another open file holds the flock (never, here).
var errWouldBlock = errors.New("lock held")

// errNoFlock: no flock on this system; the lock file's content decides.
var errNoFlock = errors.New("flock unsupported")

func flockNB(*os.File) error { return errNoFlock }
