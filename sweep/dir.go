package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/internal/sealed"
)

// A sweep's directory: manifest.json says which sweep it holds (and that
// it is a sweep's), shard.json which shard of it, points/ the finished
// points. The manifest and shard record are sealed like the points, so a
// resume, a merge or a replot reads them back only as written.

// ReadManifest reads and checks dir's sweep manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, "manifest.json")
	b, err := readSmallFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a sweep output directory: %w", dir, err)
	}
	var m Manifest
	if err := sealed.Unmarshal(b, path, &m); err != nil {
		return nil, err
	}
	if m.Command != Command {
		return nil, fmt.Errorf("%s: not a sweep manifest (command %q)", path, m.Command)
	}
	return &m, nil
}

// ReadShard reads dir's shard record; ok is false if it has none (an
// unsharded sweep's directory).
func ReadShard(dir string) (s Shard, ok bool, err error) {
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

// WriteManifest leaves the sweep's manifest (and, for a shard, its
// number) in dir: resume and merge check them.
func WriteManifest(dir string, m *Manifest, s Shard) error {
	if err := sealed.WriteFile(filepath.Join(dir, "manifest.json"), m); err != nil {
		return err
	}
	shard := filepath.Join(dir, "shard.json")
	if s.K > 1 {
		return sealed.WriteFile(shard, s)
	}
	if err := os.Remove(shard); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
