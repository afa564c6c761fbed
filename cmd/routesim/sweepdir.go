package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/internal/sealed"
	"github.com/routesim/routesim/sweep"
)

// A sweep's directory: manifest.json says which sweep it holds (and that
// it is a sweep's), shard.json which shard of it, points/ the finished
// points. The manifest and shard record are sealed like the points, so a
// resume, a merge or a replot reads them back only as written.

// readManifest reads and checks dir's sweep manifest.
func readManifest(dir string) (*sweepManifest, error) {
	path := filepath.Join(dir, "manifest.json")
	b, err := readSmallFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a sweep output directory: %w", dir, err)
	}
	var m sweepManifest
	if err := sealed.Unmarshal(b, path, &m); err != nil {
		return nil, err
	}
	if m.Command != "sweep" {
		return nil, fmt.Errorf("%s: not a sweep manifest (command %q)", path, m.Command)
	}
	return &m, nil
}

// readShard reads dir's shard record; ok is false if it has none (an
// unsharded sweep's directory).
func readShard(dir string) (s sweep.Shard, ok bool, err error) {
	path := filepath.Join(dir, "shard.json")
	b, err := readSmallFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	if err := sealed.Unmarshal(b, path, &s); err != nil {
		return s, false, err
	}
	if s.K < 2 || s.I < 0 || s.I >= s.K {
		return s, false, inputerr.Errorf(path, 0, "", "shard %d/%d is not a shard of a split sweep", s.I, s.K)
	}
	return s, true, nil
}

// readSmallFile reads a settings-sized file, refusing one past the limit.
func readSmallFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return inputerr.ReadAll(f, path, inputerr.MaxSmallFile)
}

// writeShardManifest leaves the sweep's manifest (and, for a shard, its
// number) in an output directory: resume and merge check them.
func writeShardManifest(dir string, m *sweepManifest, s sweep.Shard) error {
	if err := writeSealed(filepath.Join(dir, "manifest.json"), m); err != nil {
		return err
	}
	shard := filepath.Join(dir, "shard.json")
	if s.K > 1 {
		return writeSealed(shard, s)
	}
	if err := os.Remove(shard); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// writeSealed writes v as an indented sealed JSON file, atomically.
func writeSealed(path string, v any) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return writeSealedJSON(w, v) })
}

// claimSweepDir makes out sweep m's directory and returns its lock: out
// must belong to no other kind of command; one holding a different sweep,
// or a manifest that fails its check, is refused unless force, which
// discards its points. The manifest (and shard record) is written before
// any point, so a resume can never mix two sweeps' points.
func claimSweepDir(out string, m *sweepManifest, shard sweep.Shard, force bool) (*atomicfile.Lock, error) {
	lock, err := claimDir(out, "--out", kindSweep)
	if err != nil {
		return nil, err
	}
	if err := adoptSweepDir(out, m, shard, force, true); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// adoptSweepDir checks what out holds against sweep m (discarding a
// different sweep's points if force; forceOK says the command has
// --force) and records m and shard in it.
func adoptSweepDir(out string, m *sweepManifest, shard sweep.Shard, force, forceOK bool) error {
	hint := "; use another directory"
	if forceOK {
		hint += ", or --force to discard what it holds"
	}
	prev, err := readManifest(out)
	discard := false
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		if !force {
			return usageError{fmt.Errorf("%s %s: %w%s", outName(forceOK), out, err, hint)}
		}
		discard = true
	case !sameSweep(prev, m):
		if !force {
			return usageError{fmt.Errorf("%s %s holds a different sweep (%s)%s", outName(forceOK), out, manifestDiff(prev, m), hint)}
		}
		discard = true
	}
	if discard {
		if err := os.RemoveAll(sweep.PointsDir(out)); err != nil {
			return err
		}
	}
	if err := checkWritable(out); err != nil {
		return err
	}
	return writeShardManifest(out, m, shard)
}

// writeSealedJSON writes v to w as an indented sealed JSON file.
func writeSealedJSON(w io.Writer, v any) error {
	b, err := sealed.MarshalIndent(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// outName names a sweep directory in messages: sweep's --out, merge's OUT.
func outName(sweepCmd bool) string {
	if sweepCmd {
		return "--out"
	}
	return "merge OUT"
}
