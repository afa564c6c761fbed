package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/internal/inputerr"
)

// Output directories have one owner. A directory routesim writes belongs
// to a run, a sweep or a plan, as its manifest.json's "command" records
// (merge writes a sweep's directory); every command that writes a
// directory holds its lock while it does, and none writes into a
// directory that belongs to another kind. calibrate and validate own no
// directory (they write standalone files) and write into none that a run,
// a sweep or a plan owns.

// dirKind is what an output directory belongs to ("" = nothing yet).
type dirKind string

const (
	kindRun   dirKind = "run"
	kindSweep dirKind = "sweep"
	kindPlan  dirKind = "plan"
)

// dirOwner reads which kind of command dir belongs to, from its
// manifest.json ("" if it has none).
func dirOwner(dir string) (dirKind, error) {
	path := filepath.Join(dir, "manifest.json")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := inputerr.ReadAll(f, path, inputerr.MaxSmallFile)
	if err != nil {
		return "", err
	}
	var m struct {
		Tool    string `json:"tool"`
		Command string `json:"command"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Tool != "routesim" {
		return "", fmt.Errorf("%s holds a manifest.json routesim did not write (%s): not writing there; use another directory", dir, orNone(errText(err)))
	}
	switch {
	case m.Command == string(kindSweep):
		return kindSweep, nil
	case m.Command == string(kindPlan):
		return kindPlan, nil
	case m.Command == "routesim run" || strings.HasPrefix(m.Command, "routesim run "):
		return kindRun, nil
	}
	return "", fmt.Errorf("%s: its manifest.json names an unknown command %q: not writing there; use another directory", dir, m.Command)
}

func errText(err error) string {
	if err == nil {
		return "no \"tool\": \"routesim\""
	}
	return err.Error()
}

// claimDir takes dir's lock for a command of kind k ("" for one that owns
// no directory) and checks that dir belongs to no other kind. what names
// the directory in messages ("--out", "merge OUT").
func claimDir(dir, what string, k dirKind) (*atomicfile.Lock, error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, usageError{fmt.Errorf("%s %s is a file, not a directory", what, dir)}
	}
	lock, err := atomicfile.LockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := checkOwner(dir, what, k); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// checkOwner fails if dir belongs to a kind other than k.
func checkOwner(dir, what string, k dirKind) error {
	owner, err := dirOwner(dir)
	if err != nil {
		return err
	}
	if owner == "" || owner == k {
		return nil
	}
	writer := "routesim " + string(k)
	if k == "" {
		writer = "this command"
	}
	return usageError{fmt.Errorf("%s %s belongs to a %s (its manifest.json says so): %s does not write into another command's directory; use a new or empty one", what, dir, owner, writer)}
}

// outputFile is one file a command writes: by says which flag writes it
// ("--trace-decisions D/x.json", "--out D (its summary.json)").
type outputFile struct {
	by, path string
}

// checkOutputs refuses, before anything is written, outputs that would
// land on one another (two flags naming one file, or a file named like
// one that --out DIR holds, its lock included).
func checkOutputs(files []outputFile) error {
	seen := map[string]outputFile{}
	var errs []error
	for _, f := range files {
		key := canonicalPath(f.path)
		if prev, ok := seen[key]; ok {
			errs = append(errs, usageError{fmt.Errorf("%s and %s are the same file: one would replace the other; give them different paths", prev.by, f.by)})
			continue
		}
		seen[key] = f
	}
	return errors.Join(errs...)
}

// canonicalPath is path made absolute with its symbolic links resolved
// (as far as it exists), so that two spellings of one file compare equal.
func canonicalPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// dirOutputs are the files a command writes into dir (flag names it),
// with the lock it holds there.
func dirOutputs(flag, dir string, names ...string) []outputFile {
	out := []outputFile{{fmt.Sprintf("%s %s (its lock %s)", flag, dir, atomicfile.LockName), filepath.Join(dir, atomicfile.LockName)}}
	for _, n := range names {
		out = append(out, outputFile{fmt.Sprintf("%s %s (its %s)", flag, dir, n), filepath.Join(dir, n)})
	}
	return out
}

// checkFileOutput checks a file output given by its own flag: not a
// directory, and not inside a directory another kind of command owns
// (unless that is the command's own --out, checked with it).
func checkFileOutput(flag, path, ownDir string, k dirKind) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usageError{fmt.Errorf("%s %s is a directory; give a file", flag, path)}
	}
	if filepath.Base(path) == atomicfile.LockName {
		return usageError{fmt.Errorf("%s %s: %s is routesim's lock file; give another name", flag, path, atomicfile.LockName)}
	}
	dir := filepath.Dir(path)
	if ownDir != "" && canonicalPath(dir) == canonicalPath(ownDir) {
		return nil
	}
	if err := checkOwner(dir, flag+" "+path+": its directory", k); err != nil {
		return err
	}
	return nil
}

// checkCalibrateDirs checks calibrate's directories before any fitting:
// neither may belong to a run, a sweep or a plan.
func checkCalibrateDirs(out, derive string) error {
	for _, d := range []struct{ flag, dir string }{{"--out", out}, {"--derive", derive}} {
		if d.dir == "" {
			continue
		}
		if err := checkOwner(d.dir, d.flag, ""); err != nil {
			return err
		}
	}
	return nil
}

// checkFileNames refuses file names that would leave dir or land on one
// another (two names one file on a case-insensitive file system) or on a
// hidden file (routesim's lock and temporaries).
func checkFileNames(flag, dir string, names []string) error {
	seen := map[string]string{}
	for _, n := range names {
		if n != filepath.Base(n) || strings.ContainsAny(n, `/\`) || strings.HasPrefix(n, ".") {
			return usageError{fmt.Errorf("%s %s: %q cannot be a file name there (a path separator or a leading dot)", flag, dir, n)}
		}
		key := strings.ToLower(n)
		if prev, ok := seen[key]; ok {
			return usageError{fmt.Errorf("%s %s: %q and %q would be the same file on a case-insensitive file system", flag, dir, prev, n)}
		}
		seen[key] = n
	}
	return nil
}
