package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockName is the lock file a writer holds in an output directory.
const LockName = ".routesim.lock"

// Lock is an exclusive claim on an output directory: one writer at a time
// (a run, a sweep, a merge, a plan), so two of them can never mix their
// files.
//
// The lock file is published complete: its content (the holder's pid and
// host) is written to a temporary, which is then hard-linked to LockName,
// an atomic create that fails if the name exists. So a lock file is never
// seen empty or half-written by its live holder's rivals, and one that is
// empty or garbage was left by something else. Where the system has
// flock(2), the holder also keeps the file flock'ed: the kernel drops that
// when the holder exits however it exits, so a lock nobody has flock'ed is
// stale whatever it says, and taking it over is serialised by the flock
// itself (no two writers can both decide a lock is stale and both take
// the directory).
type Lock struct {
	path    string
	f       *os.File // kept open: its flock is the claim
	dir     string
	created bool // LockDir created dir: Release removes it if empty
}

// lockTries bounds LockDir's attempts (each one is a few system calls; a
// rival's takeover of a stale lock can make one attempt fail).
const lockTries = 200

// LockDir takes dir's lock, creating dir if needed. If a live routesim
// holds it, it fails naming that process and how to proceed; a lock its
// holder left (the process exited or was killed) or one that names no
// process is taken over. An interrupted command releases it (AbortAll).
func LockDir(dir string) (*Lock, error) {
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockName)
	var held error
	for try := 0; try < lockTries; try++ {
		f, err := publishLock(path)
		if err == nil {
			live.Lock()
			live.tmps[path] = true
			live.Unlock()
			return &Lock{path: path, f: f, dir: dir, created: created}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			if errors.Is(err, errAborting) {
				return nil, err
			}
			return nil, fmt.Errorf("--out %s: taking its lock: %w", dir, err)
		}
		if held = inspectLock(dir, path, try); held != nil && !errors.Is(held, errRetry) {
			return nil, held
		}
		if try > 0 {
			time.Sleep(time.Millisecond) // a rival is taking a stale lock over
		}
	}
	if held != nil && !errors.Is(held, errRetry) {
		return nil, held
	}
	return nil, fmt.Errorf("--out %s: could not take its lock %s (other writers keep taking it); retry, or use another directory", dir, path)
}

// errRetry: the lock changed under inspection; try again.
var errRetry = errors.New("retry")

// publishLock creates the lock file with its content in one step: a
// temporary holding the content (flock'ed where possible) is hard-linked
// to path. It fails with an os.ErrExist error if path exists.
func publishLock(path string) (*os.File, error) {
	f, err := create(path)
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	defer func() {
		os.Remove(tmp)
		forget(tmp)
	}()
	_, err = f.WriteString(lockContent())
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		if ferr := flockNB(f); ferr != nil && !errors.Is(ferr, errNoFlock) {
			err = ferr // a fresh file no one else has opened
		}
	}
	if err == nil {
		err = os.Link(tmp, path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockContent names the holder: its pid, then its host.
func lockContent() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d\nhost %s\n", os.Getpid(), host)
}

// lockHolder is what a lock file says about its holder (pid 0: nothing
// usable).
type lockHolder struct {
	pid  int
	host string
}

func parseLock(b []byte) lockHolder {
	var h lockHolder
	lines := strings.Split(string(b), "\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(lines[0])); err == nil && pid > 0 && pid < 1<<31 {
		h.pid = pid
	}
	for _, l := range lines[1:] {
		if v, ok := strings.CutPrefix(l, "host "); ok {
			h.host = strings.TrimSpace(v)
		}
	}
	return h
}

// alive says whether the holder may still be running: a pid on this host
// that exists (one on another host, sharing the directory over a network
// file system, cannot be probed and counts as alive).
func (h lockHolder) alive() bool {
	if h.pid <= 0 {
		return false
	}
	if me, _ := os.Hostname(); h.host != "" && h.host != me {
		return true
	}
	return h.pid == os.Getpid() || processAlive(h.pid)
}

func (h lockHolder) String() string {
	s := "pid " + strconv.Itoa(h.pid)
	if me, _ := os.Hostname(); h.host != "" && h.host != me {
		s += " on host " + h.host
	}
	return s
}

// inspectLock looks at an existing lock file. It returns an error naming
// the holder if a live one holds it, errRetry after removing a stale one
// (or if the file changed meanwhile).
func inspectLock(dir, path string, try int) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return errRetry // released meanwhile
	}
	if err != nil {
		return fmt.Errorf("--out %s: reading its lock: %w", dir, err)
	}
	defer f.Close()
	b, _ := readLock(f)
	h := parseLock(b)
	switch ferr := flockNB(f); {
	case ferr == nil:
		// Nobody holds it: stale whatever it says. Holding its flock, we
		// are the only one deciding so; remove it if it is still the file
		// at path.
		if st, err := f.Stat(); err == nil {
			if cur, err := os.Stat(path); err == nil && os.SameFile(st, cur) {
				os.Remove(path)
			}
		}
		return errRetry
	case errors.Is(ferr, errWouldBlock):
		// Held. A live holder's file always names it; one that does not
		// (or names a dead process) is being taken over by a rival: look
		// again shortly.
		if h.alive() || try >= lockTries/2 {
			return heldError(dir, path, h, true)
		}
		return errRetry
	case errors.Is(ferr, errNoFlock):
		// No flock here: the content decides. It is published whole, so
		// an empty or garbage file is never a live holder's.
		if h.alive() {
			return heldError(dir, path, h, false)
		}
		if st, err := f.Stat(); err == nil {
			if cur, err := os.Stat(path); err == nil && os.SameFile(st, cur) {
				os.Remove(path)
			}
		}
		return errRetry
	default:
		return fmt.Errorf("--out %s: checking its lock: %w", dir, ferr)
	}
}

// readLock reads at most a small lock file's worth.
func readLock(f *os.File) ([]byte, error) {
	b := make([]byte, 512)
	n, err := f.ReadAt(b, 0)
	if n > 0 {
		err = nil
	}
	return b[:n], err
}

func heldError(dir, path string, h lockHolder, flocked bool) error {
	if h.pid <= 0 {
		return fmt.Errorf("--out %s is being written by another routesim (its lock %s names no process); wait for it to finish, or use another directory", dir, path)
	}
	msg := fmt.Sprintf("--out %s is being written by another routesim (%s); wait for it to finish, or stop it (kill %d), or use another directory", dir, h, h.pid)
	if !flocked {
		msg += fmt.Sprintf("; if pid %d is not a routesim, remove %s", h.pid, path)
	}
	return errors.New(msg)
}

// Release gives the directory up: the lock file is removed (if it is
// still this lock's), and the directory too if LockDir created it and
// nothing was written into it.
func (l *Lock) Release() {
	live.Lock()
	delete(live.tmps, l.path)
	live.Unlock()
	if st, err := l.f.Stat(); err == nil {
		if cur, err := os.Stat(l.path); err == nil && os.SameFile(st, cur) {
			os.Remove(l.path)
		}
	}
	l.f.Close()
	if l.created {
		os.Remove(l.dir) // fails, harmlessly, if anything is inside
	}
}
