// Package readingguide checks that a package's reading guide — the
// package comment in its doc.go — names every source file of the package,
// so `go doc` tells a new reader what each file is for. Packages call it
// from a test (TestReadingGuideNamesEveryFile).
package readingguide

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// fileRef is how a guide names files: a base name (kvcache.go) or a
// pattern with one star for a family (mlenergy*.go).
var fileRef = regexp.MustCompile(`[A-Za-z0-9_]*\*?[A-Za-z0-9_]*\.go\b`)

// Unnamed returns the non-test .go files of the package in dir that its
// doc.go package comment does not name, sorted. It fails if dir has no
// doc.go or the comment is empty.
func Unnamed(dir string) ([]string, error) {
	doc := filepath.Join(dir, "doc.go")
	f, err := parser.ParseFile(token.NewFileSet(), doc, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	if f.Doc == nil || strings.TrimSpace(f.Doc.Text()) == "" {
		return nil, fmt.Errorf("%s: no package comment", doc)
	}
	refs := fileRef.FindAllString(f.Doc.Text(), -1)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		if !named(name, refs) {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return missing, nil
}

func named(name string, refs []string) bool {
	for _, r := range refs {
		if ok, _ := filepath.Match(r, name); ok {
			return true
		}
	}
	return false
}
