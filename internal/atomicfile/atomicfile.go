// Package atomicfile publishes output files all at once or not at all:
// temporaries beside their final names, renamed into place on success, so
// a failed or interrupted command never leaves a partial output.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Dir collects output files as hidden temporaries and publishes them all
// by rename in Commit. Until then nothing under their final names exists;
// Abort removes the temporaries (and the directory, if Dir created it).
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

// NewDir prepares dir (creating it and its parents if needed).
func NewDir(dir string) (*Dir, error) {
	d := &Dir{path: dir}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		d.created = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	return d, nil
}

// Create opens a temporary for the file name inside the directory.
func (d *Dir) Create(name string) (*bufio.Writer, error) {
	final := filepath.Join(d.path, name)
	f, err := os.CreateTemp(d.path, "."+name+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", d.path, err)
	}
	p := &pending{tmp: f.Name(), final: final, f: f, w: bufio.NewWriterSize(f, 1<<16)}
	d.files = append(d.files, p)
	return p.w, nil
}

// Commit flushes, syncs and renames every file into place.
func (d *Dir) Commit() error {
	for _, p := range d.files {
		err := p.w.Flush()
		if err == nil {
			err = p.f.Close()
		} else {
			p.f.Close()
		}
		if err != nil {
			d.Abort()
			return fmt.Errorf("writing %s: %w", p.final, err)
		}
		p.f = nil
	}
	for _, p := range d.files {
		if err := os.Rename(p.tmp, p.final); err != nil {
			d.Abort()
			return fmt.Errorf("publishing %s: %w", p.final, err)
		}
	}
	d.files = nil
	return nil
}

// Abort removes every unpublished temporary, and the directory if NewDir
// created it and it is now empty.
func (d *Dir) Abort() {
	for _, p := range d.files {
		if p.f != nil {
			p.f.Close()
		}
		os.Remove(p.tmp)
	}
	d.files = nil
	if d.created {
		os.Remove(d.path) // fails, harmlessly, if anything else is inside
	}
}

// WriteFile writes one file atomically: write fills a temporary beside
// path, which replaces path only if writing and closing succeeded.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
