package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exampleCommand is a routesim command quoted in examples/README.md.
var exampleCommand = regexp.MustCompile("`?routesim (sweep|run|plan) ([^`\n]*--scenario [^`\n]*)`?")

// TestExamplesReadmeCommandsBuild: every command examples/README.md
// quotes names a scenario file the repository has, and builds every
// configuration it would run (sweep --dry-run).
func TestExamplesReadmeCommandsBuild(t *testing.T) {
	b, err := os.ReadFile("../../examples/README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := exampleCommand.FindAllStringSubmatch(string(b), -1)
	scenarios, _ := filepath.Glob("../../examples/scenarios/*.json")
	checked := 0
	for _, c := range cmds {
		if strings.Contains(c[2], "FILE") { // the README's how-to, not an example
			continue
		}
		checked++
		args := strings.Fields(c[2])
		for i, a := range args {
			if strings.HasSuffix(a, ".json") {
				args[i] = filepath.Join("..", "..", a)
			}
		}
		if c[1] != "sweep" {
			t.Errorf("%s: only sweep commands are checked here", c[0])
			continue
		}
		if _, _, err := runCLI(append([]string{"sweep", "--dry-run"}, args...)...); err != nil {
			t.Errorf("routesim %s %s: %v", c[1], c[2], err)
		}
	}
	if checked < len(scenarios) || len(scenarios) < 3 {
		t.Errorf("examples/README.md quotes %d commands for %d scenario files", checked, len(scenarios))
	}
}
