package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// quotedOutput is a README block marked with the routesim arguments whose
// output it quotes: <!-- output of: ARGS --> and a fenced block.
var quotedOutput = regexp.MustCompile("(?s)<!-- output of: (.*?) -->\n```[a-z]*\n(.*?)```")

// TestREADMEQuotesItsCommands: every output the README quotes is what
// its command prints now, line for line (the quote may leave lines out,
// not change them). A sweep or plan writes into a temporary --out.
func TestREADMEQuotesItsCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := quotedOutput.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("the README marks no quoted output (<!-- output of: ARGS -->)")
	}
	for _, b := range blocks {
		args := strings.Fields(b[1])
		if (args[0] == "sweep" || args[0] == "plan") && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--out") }) {
			args = append(args, "--out", filepath.Join(t.TempDir(), "out"))
		}
		out, _, err := runCLI(args...)
		if err != nil {
			t.Fatalf("routesim %s: %v", b[1], err)
		}
		got := strings.Split(out, "\n")
		at := 0
		for _, want := range strings.Split(strings.TrimRight(b[2], "\n"), "\n") {
			want = strings.TrimRight(want, " ")
			for at < len(got) && strings.TrimRight(got[at], " ") != want {
				at++
			}
			if at == len(got) {
				t.Errorf("README quotes routesim %s as printing\n%q\nwhich it no longer prints (in that order); it printed:\n%s", b[1], want, out)
				break
			}
			at++
		}
	}
}

// mdLink is a Markdown link or image: [label](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link of the README and docs/ names
// a file the repository has, and every #anchor a heading of that file.
func TestDocsLinksResolve(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	readings, _ := filepath.Glob("../../docs/readings/*.md")
	files = append(append(files, "../../README.md"), readings...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links %s: no such file in the repository", f, target)
					continue
				}
			}
			if anchor != "" && !slices.Contains(headingAnchors(t, dest), anchor) {
				t.Errorf("%s links %s: %s has no heading #%s", f, target, dest, anchor)
			}
		}
	}
}

// headingAnchors are the GitHub anchors of a Markdown file's headings.
func headingAnchors(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var s strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				s.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
				s.WriteRune(r)
			}
		}
		out = append(out, s.String())
	}
	return out
}

func isLetter(r rune) bool { return strings.ContainsRune("éèàüöäç", r) }
