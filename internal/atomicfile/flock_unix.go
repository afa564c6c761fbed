//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// errWouldBlock: another open file holds the flock.
var errWouldBlock = errors.New("lock held")

// errNoFlock: the file system cannot flock (some network mounts).
var errNoFlock = errors.New("flock unsupported")

// flockNB takes f's exclusive flock without waiting.
func flockNB(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == syscall.EINTR:
			continue
		case err == syscall.EWOULDBLOCK:
			return errWouldBlock
		case err == syscall.ENOLCK || err == syscall.EOPNOTSUPP || err == syscall.ENOSYS || err == syscall.EINVAL:
			return errNoFlock
		}
		return err
	}
}
