// Package atomicfile publishes output files so that a reader never sees a
// partial one: each file is written to a hidden temporary beside its final
// name, synced, and renamed into place. What is promised, precisely:
//
//   - every published file is complete (it was fully written and synced
//     before its rename, and the directory is synced after);
//   - a Dir publishes its files one rename at a time in Commit: if a rename
//     fails part-way (a full disk cannot fail it; a permission change can),
//     the files renamed before it are new, the rest keep their old
//     contents, and Commit says which file failed;
//   - temporaries never outlive the command: Abort removes them, an
//     interrupted command removes them (AbortAll on SIGINT/SIGTERM), and
//     NewDir removes those left by a process that no longer exists.
//
// Files are created with mode 0666 less the umask, like any other tool's.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Dir collects output files as hidden temporaries and publishes them in
// Commit. Until then nothing under their final names changes; Abort
// removes the temporaries (and the directory, if Dir created it).
type Dir struct {
	path    string
	created bool
	files   []*pending
}

type pending struct {
	tmp, final string
	f          *os.File
	w          *bufio.Writer
}

// live registers every unpublished temporary (and held lock), for
// AbortAll.
var live = struct {
	sync.Mutex
	tmps     map[string]bool // every unpublished temporary (and held locks)
	aborting bool            // AbortAll ran: no new temporaries
}{tmps: map[string]bool{}}

// errAborting refuses new outputs once the command is being interrupted.
var errAborting = errors.New("interrupted: no new output files")

// NewDir prepares dir (creating it and its parents if needed) and removes
// temporaries that dead processes left in it.
func NewDir(dir string) (*Dir, error) {
	d := &Dir{path: dir}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		d.created = true
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	RemoveStale(dir)
	return d, nil
}

// tmpTag marks a temporary's name: .NAME.tmp-PID-N.
const tmpTag = ".tmp-"

// create opens a new temporary beside final, mode 0666 less the umask,
// and registers it (under the lock, so AbortAll sees every one).
func create(final string) (*os.File, error) {
	live.Lock()
	defer live.Unlock()
	if live.aborting {
		return nil, errAborting
	}
	dir, base := filepath.Split(final)
	for n := 0; ; n++ {
		name := filepath.Join(dir, "."+base+tmpTag+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(n))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) && n < 10000 {
			continue
		}
		if err == nil {
			live.tmps[name] = true
		}
		return f, err
	}
}

// forget drops a temporary from the registry (published or removed).
func forget(tmp string) {
	live.Lock()
	delete(live.tmps, tmp)
	live.Unlock()
}

// RemoveStale deletes temporaries in dir whose writing process has
// exited (an interrupted or killed command); a live process's are kept.
func RemoveStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		i := strings.LastIndex(name, tmpTag)
		if !strings.HasPrefix(name, ".") || i < 0 {
			continue
		}
		rest := name[i+len(tmpTag):]
		j := strings.IndexByte(rest, '-')
		if j < 0 {
			continue
		}
		pid, err := strconv.Atoi(rest[:j])
		if err != nil || (pid != os.Getpid() && processAlive(pid)) {
			continue
		}
		if pid == os.Getpid() && isLive(filepath.Join(dir, name)) {
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}

func isLive(tmp string) bool {
	live.Lock()
	defer live.Unlock()
	return live.tmps[tmp]
}

// Create opens a temporary for the file name inside the directory.
func (d *Dir) Create(name string) (*bufio.Writer, error) {
	final := filepath.Join(d.path, name)
	f, err := create(final)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", d.path, err)
	}
	p := &pending{tmp: f.Name(), final: final, f: f, w: bufio.NewWriterSize(f, 1<<16)}
	d.files = append(d.files, p)
	return p.w, nil
}

// Commit flushes, syncs and closes every file, renames each into place,
// and syncs the directory.
func (d *Dir) Commit() error {
	for _, p := range d.files {
		err := p.w.Flush()
		if err == nil {
			err = p.f.Sync()
		}
		if cerr := p.f.Close(); err == nil {
			err = cerr
		}
		p.f = nil
		if err != nil {
			d.Abort()
			return fmt.Errorf("writing %s: %w", p.final, err)
		}
	}
	for i, p := range d.files {
		err := os.Rename(p.tmp, p.final)
		forget(p.tmp)
		if err != nil {
			done := make([]string, 0, i)
			for _, q := range d.files[:i] {
				done = append(done, filepath.Base(q.final))
			}
			d.files = d.files[i:]
			d.Abort()
			return fmt.Errorf("publishing %s: %w (already published: %s; the others keep their previous contents)", p.final, err, strings.Join(done, ", "))
		}
	}
	syncDir(d.path)
	d.files = nil
	return nil
}

// Abort removes every unpublished temporary, and the directory if NewDir
// created it and it is now empty.
func (d *Dir) Abort() {
	files := d.files
	d.files = nil
	for _, p := range files {
		if p.f != nil {
			p.f.Close()
		}
		os.Remove(p.tmp)
		forget(p.tmp)
	}
	if d.created {
		os.Remove(d.path) // fails, harmlessly, if anything else is inside
	}
}

// AbortAll removes every temporary not yet published and releases held
// locks; no new temporary can be created afterwards (an interrupted
// command calls it before exiting, while its workers may still run).
func AbortAll() {
	live.Lock()
	live.aborting = true
	tmps := make([]string, 0, len(live.tmps))
	for t := range live.tmps {
		tmps = append(tmps, t)
	}
	live.Unlock()
	for _, t := range tmps {
		os.Remove(t)
	}
}

// File is one output file being written: a temporary beside its final
// path until Commit renames it into place.
type File struct {
	*bufio.Writer
	f    *os.File
	path string
}

// Create starts writing path atomically.
func Create(path string) (*File, error) {
	f, err := create(path)
	if err != nil {
		return nil, err
	}
	return &File{Writer: bufio.NewWriterSize(f, 1<<16), f: f, path: path}, nil
}

func (f *File) forget() { forget(f.f.Name()) }

// Commit flushes, syncs and closes the temporary and renames it to the
// final path (removing it instead if any step fails).
func (f *File) Commit() error {
	defer f.forget()
	err := f.Flush()
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.f.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort removes the temporary.
func (f *File) Abort() {
	defer f.forget()
	f.f.Close()
	os.Remove(f.f.Name())
}

// WriteFile writes one file atomically: write fills a temporary beside
// path, which replaces path only if writing, syncing and closing
// succeeded.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// syncDir makes the renames in dir durable (best effort: not every
// filesystem supports syncing a directory).
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}
