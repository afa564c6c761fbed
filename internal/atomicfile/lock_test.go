package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLeftoverLocksAreTakenOver: a lock file no live routesim holds (empty,
// garbage, an impossible or a dead pid: a killed command's, or a file
// someone created by hand) never blocks the directory.
func TestLeftoverLocksAreTakenOver(t *testing.T) {
	for name, body := range map[string]string{
		"empty":        "",
		"garbage":      "not a pid\x00\xff",
		"pid -1":       "-1\n",
		"pid 0":        "0\n",
		"huge pid":     "99999999999999999999\n",
		"dead process": "4194305\n", // above Linux's pid limit: never alive
		"whitespace":   " \n\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, LockName), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := LockDir(dir)
			if err != nil {
				t.Fatalf("a leftover %s lock blocks the directory: %v", name, err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, LockName))
			if pid, _ := strconv.Atoi(strings.Fields(string(b) + " x")[0]); pid != os.Getpid() {
				t.Errorf("lock holds %q, want this process's pid %d first", b, os.Getpid())
			}
			l.Release()
			if _, err := os.Stat(filepath.Join(dir, LockName)); !os.IsNotExist(err) {
				t.Errorf("Release left the lock file: %v", err)
			}
		})
	}
}

// TestLiveLockNamesItsHolder: a held lock refuses a second writer with the
// holder's pid and what to do about it.
func TestLiveLockNamesItsHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = LockDir(dir)
	if err == nil {
		t.Fatal("a held lock was taken twice")
	}
	for _, want := range []string{dir, "being written by another routesim", "pid " + strconv.Itoa(os.Getpid()), "kill " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestLockIsExclusiveAndNeverEmpty: writers racing for a directory (one
// with a stale lock in it) hold it one at a time, and the lock file,
// whenever it exists, names its holder.
func TestLockIsExclusiveAndNeverEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LockName)
	os.WriteFile(path, nil, 0o644) // stale and empty
	var holders, maxHolders, taken atomic.Int32
	stop := make(chan struct{})
	var seen sync.WaitGroup
	seen.Add(1)
	var empty atomic.Int32
	go func() { // a reader that must never see an empty lock
		defer seen.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			before := taken.Load() // the stale file is gone once anyone took the lock
			if b, err := os.ReadFile(path); err == nil && len(b) == 0 && before > 0 {
				empty.Add(1)
			}
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				l, err := LockDir(dir)
				if err != nil {
					if !strings.Contains(err.Error(), "being written by another routesim") {
						t.Errorf("unexpected error: %v", err)
						return
					}
					continue
				}
				taken.Add(1)
				h := holders.Add(1)
				if h > maxHolders.Load() {
					maxHolders.Store(h)
				}
				holders.Add(-1)
				l.Release()
			}
		}()
	}
	wg.Wait()
	close(stop)
	seen.Wait()
	if maxHolders.Load() > 1 {
		t.Errorf("%d writers held the lock at once", maxHolders.Load())
	}
	if taken.Load() == 0 {
		t.Error("nobody ever took the lock")
	}
	if empty.Load() > 0 {
		t.Errorf("the lock file was seen empty %d times", empty.Load())
	}
}
