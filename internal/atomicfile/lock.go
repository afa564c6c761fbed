package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockName is the lock file a writer holds in an output directory.
const LockName = ".routesim.lock"

// Lock is an exclusive claim on an output directory: one writer at a time
// (a sweep, a merge), so two of them can never mix their files.
type Lock struct{ path string }

// LockDir takes dir's lock, creating dir if needed. If another live
// process holds it, it fails naming that process; a lock left by a process
// that has exited is taken over. An interrupted command releases it
// (AbortAll).
func LockDir(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockName)
	for try := 0; try < 2; try++ {
		live.Lock()
		aborting := live.aborting
		live.Unlock()
		if aborting {
			return nil, errAborting
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			_, werr := fmt.Fprintf(f, "%d\n", os.Getpid())
			cerr := f.Close()
			if werr != nil || cerr != nil {
				os.Remove(path)
				return nil, fmt.Errorf("--out %s: writing its lock: %w", dir, errors.Join(werr, cerr))
			}
			live.Lock()
			live.tmps[path] = true
			live.Unlock()
			return &Lock{path}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("--out %s: %w", dir, err)
		}
		b, _ := os.ReadFile(path)
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if perr == nil && (pid == os.Getpid() || processAlive(pid)) {
			return nil, fmt.Errorf("--out %s is being written by another routesim (pid %d); wait for it, or use another directory", dir, pid)
		}
		if perr != nil && len(b) == 0 {
			// Created by a writer that has not yet written its pid: busy.
			return nil, fmt.Errorf("--out %s is being written by another routesim; wait for it, or use another directory", dir)
		}
		os.Remove(path) // stale: its process is gone
	}
	return nil, fmt.Errorf("--out %s: could not take its lock %s", dir, path)
}

// Release gives the directory up.
func (l *Lock) Release() {
	live.Lock()
	delete(live.tmps, l.path)
	live.Unlock()
	os.Remove(l.path)
}
