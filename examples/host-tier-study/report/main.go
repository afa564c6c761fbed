// Command report reads the host-tier study's sweeps (one directory per
// arm, written by examples/host-tier-study/run.sh), prints the table of
// docs/host-tier-study.md (means over seeds per arm, policy and
// concurrency) and draws its figure. Output depends only on the point
// files, so the same sweeps give the same bytes.
//
//	go run ./examples/host-tier-study/report [-title NAME] [-png OUT.png] DIR...
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/routesim/routesim/sweep"
)

func main() {
	png := flag.String("png", "", "write the figure here; empty: table only")
	title := flag.String("title", "", "the workload's name, for the figure's title")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: report [-title NAME] [-png FILE] ARM_DIR...")
		os.Exit(2)
	}
	if err := run(os.Stdout, *png, *title, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, png, title string, dirs []string) error {
	var rows []row
	for _, d := range dirs {
		rs, err := readArm(d)
		if err != nil {
			return err
		}
		rows = append(rows, aggregate(filepath.Base(d), rs)...)
	}
	writeTable(w, rows)
	if png == "" {
		return nil
	}
	return drawFigure(png, title, rows)
}

// readArm reads every point file of one sweep directory.
func readArm(dir string) ([]*sweep.Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "points", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no point files (run the arm's sweep first)", dir)
	}
	sort.Strings(files)
	out := make([]*sweep.Result, 0, len(files))
	for _, f := range files {
		r, _, err := sweep.ReadPointFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
