package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/sweep"
)

// The sweep directory's format (manifest, shard record, points) is
// package sweep's; here is the CLI's part: taking a directory for a sweep
// or a merge, and what the user is told when it holds something else.

// claimSweepDir makes out sweep m's directory and returns its lock: out
// must belong to no other kind of command; one holding a different sweep,
// or a manifest that fails its check, is refused unless force, which
// discards its points. The manifest (and shard record) is written before
// any point, so a resume can never mix two sweeps' points.
func claimSweepDir(out string, m *sweep.Manifest, shard sweep.Shard, force bool) (*atomicfile.Lock, error) {
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
func adoptSweepDir(out string, m *sweep.Manifest, shard sweep.Shard, force, forceOK bool) error {
	hint := "; use another directory"
	if forceOK {
		hint += ", or --force to discard what it holds"
	}
	prev, err := sweep.ReadManifest(out)
	discard := false
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		if !force {
			return usageError{fmt.Errorf("%s %s: %w%s", outName(forceOK), out, err, hint)}
		}
		discard = true
	case !prev.Same(m):
		if !force {
			return usageError{fmt.Errorf("%s %s holds a different sweep (%s)%s", outName(forceOK), out, prev.Diff(m), hint)}
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
	return sweep.WriteManifest(out, m, shard)
}

// outName names a sweep directory in messages: sweep's --out, merge's OUT.
func outName(sweepCmd bool) string {
	if sweepCmd {
		return "--out"
	}
	return "merge OUT"
}
