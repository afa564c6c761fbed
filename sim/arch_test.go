package sim

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/routesim/routesim"

// moduleImports maps every package of the module (by import path) to the
// packages its non-test files import.
func moduleImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n != ".." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "data" || n == "notebooks") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for _, c := range f.Comments {
			if strings.Contains(c.Text(), "go:build ignore") {
				return nil // a generator run by hand, not part of the module's graph
			}
		}
		rel, _ := filepath.Rel("..", filepath.Dir(path))
		pkg := module
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			out[pkg][p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportGraph: the engine stays an engine (no Parquet, no plotting, no
// file I/O), and no package imports its own child.
func TestImportGraph(t *testing.T) {
	g := moduleImports(t)
	if len(g) < 10 {
		t.Fatalf("found only %d packages: the walk is broken", len(g))
	}
	for im := range g[module+"/sim"] {
		for _, banned := range []string{"github.com/apache/arrow", "gonum.org/v1/plot", "os", "io/fs", "path/filepath", "net"} {
			if im == banned || strings.HasPrefix(im, banned+"/") {
				t.Errorf("sim imports %s: the engine does no I/O, plotting or Parquet", im)
			}
		}
	}
	for pkg, ims := range g {
		for im := range ims {
			if strings.HasPrefix(im, pkg+"/") {
				t.Errorf("%s imports its own child %s", pkg, im)
			}
		}
	}
}
