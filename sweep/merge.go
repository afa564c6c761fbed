package sweep

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/routesim/routesim/internal/atomicfile"
)

// Shards is every point of one sweep gathered from its shards'
// directories, each read and checked, in grid order.
type Shards struct {
	// Manifest is the sweep's (every directory's, checked equal).
	Manifest *Manifest
	// Results are the points' results, in grid order.
	Results []Result
	files   [][]byte // each point's file, as read
}

// ReadShards reads every shard directory's manifest, shard record and
// point files and checks that together they are one whole sweep: the same
// manifest everywhere, no shard given twice, every point present, and a
// point in two directories only if its two files are the same bytes.
// Nothing is written.
func ReadShards(dirs []string) (*Shards, error) {
	var m *Manifest
	k := 0
	byShard := map[int]string{}
	for _, d := range dirs {
		dm, err := ReadManifest(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if m != nil && !m.Same(dm) {
			return nil, fmt.Errorf("merge: %s is a different sweep from %s (%s)", d, dirs[0], m.Diff(dm))
		}
		m = dm
		s, ok, err := ReadShard(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if !ok {
			continue
		}
		if k != 0 && s.K != k {
			return nil, fmt.Errorf("merge: %s is shard %d/%d, the others of a sweep split in %d", d, s.I, s.K, k)
		}
		if prev, dup := byShard[s.I]; dup {
			return nil, fmt.Errorf("merge: %s and %s are both shard %d/%d", prev, d, s.I, s.K)
		}
		k, byShard[s.I] = s.K, d
	}
	grid := m.Grid.Points()
	index := make(map[string]int, len(grid))
	for i, p := range grid {
		index[p.Key()+".json"] = i
	}
	digest := m.Digest()
	sh := &Shards{Manifest: m, Results: make([]Result, len(grid)), files: make([][]byte, len(grid))}
	from := make([]string, len(grid))
	for _, d := range dirs {
		entries, err := os.ReadDir(PointsDir(d))
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // a temporary (atomicfile)
			}
			path := filepath.Join(PointsDir(d), e.Name())
			i, ok := index[e.Name()]
			if !ok {
				return nil, fmt.Errorf("merge: %s is not a point of this sweep", path)
			}
			r, b, err := ReadPointFile(path)
			if err == nil {
				err = r.Belongs(path, grid[i], digest)
			}
			if err != nil {
				return nil, fmt.Errorf("merge: %w", err)
			}
			if from[i] != "" && !bytes.Equal(sh.files[i], b) {
				return nil, fmt.Errorf("merge: %s and %s hold different results for one point (written by different routesim versions?)", from[i], path)
			}
			sh.Results[i], sh.files[i], from[i] = *r, b, path
		}
	}
	return sh, missingShards(grid, from, k, byShard)
}

// missingShards says which shards lack points, if any do.
func missingShards(grid []Point, from []string, k int, byShard map[int]string) error {
	var missing []int
	for i := range grid {
		if from[i] == "" {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if k == 0 {
		return fmt.Errorf("merge: %d of the sweep's %d points are missing (first %s): give every shard's directory", len(missing), len(grid), grid[missing[0]].Key())
	}
	var parts []string
	per := map[int]int{}
	for _, i := range missing {
		per[i%k]++
	}
	for s := 0; s < k; s++ {
		n := per[s]
		switch {
		case n == 0:
		case byShard[s] == "":
			parts = append(parts, fmt.Sprintf("shard %d/%d is not among the directories given", s, k))
		default:
			parts = append(parts, fmt.Sprintf("shard %d/%d (%s) lacks %d of its points: resume it with its sweep command", s, k, byShard[s], n))
		}
	}
	return fmt.Errorf("merge: %d of the sweep's %d points are missing: %s", len(missing), len(grid), strings.Join(parts, "; "))
}

// WritePoints publishes every point file into dir's points/ at once, the
// same bytes as read.
func (sh *Shards) WritePoints(dir string) error {
	d, err := atomicfile.NewDir(PointsDir(dir))
	if err != nil {
		return err
	}
	for i, b := range sh.files {
		w, err := d.Create(sh.Results[i].Key + ".json")
		if err == nil {
			_, err = w.Write(b)
		}
		if err != nil {
			d.Abort()
			return fmt.Errorf("merge: %w", err)
		}
	}
	return d.Commit()
}
