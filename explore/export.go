package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// exportMarker names a folder Export wrote, which a later export may
// replace.
const exportMarker = "routesim.wasm"

// Export writes the page as static files into dir, with the simulator
// compiled to WebAssembly: routesim.wasm (the routesim command itself,
// built for GOOS=js GOARCH=wasm by the go command from pkg, in the
// routesim source tree), Go's wasm_exec.js from $(go env GOROOT), the
// page, and meta.json. In the browser a Web Worker runs
// routesim explore --request for each view, as the server would. dir must
// be empty, missing, or an earlier export.
func Export(dir string, opt Options, pkg string) error {
	if err := exportDir(dir); err != nil {
		return err
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return errors.New("--export builds the simulator for WebAssembly with the go command, which is not on PATH")
	}
	out, err := exec.Command(gocmd, "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("--export: go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	var support []byte
	for _, p := range []string{filepath.Join(root, "lib", "wasm", "wasm_exec.js"), filepath.Join(root, "misc", "wasm", "wasm_exec.js")} {
		if support, err = os.ReadFile(p); err == nil {
			break
		}
	}
	if support == nil {
		return fmt.Errorf("--export: no wasm_exec.js under %s (lib/wasm or misc/wasm)", root)
	}
	build := exec.Command(gocmd, "build", "-trimpath", "-o", filepath.Join(dir, "routesim.wasm"), pkg)
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if msg, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("--export: building %s for WebAssembly (run it in the routesim source tree): %v\n%s", pkg, err, msg)
	}
	opt.Workers = 1 // a browser runs the WebAssembly simulator on one thread
	meta, err := json.MarshalIndent(MetaFor(opt), "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"wasm_exec.js": support,
		"meta.json":    meta,
		"config.js":    []byte("// Written by routesim explore --export: the page simulates in a Web Worker.\nwindow.EXPLORE_STATIC = true;\n"),
	}
	err = fs.WalkDir(webFS, "web", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.TrimPrefix(path, "web/")
		if _, ok := files[name]; ok {
			return nil
		}
		files[name], err = webFS.ReadFile(path)
		return err
	})
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("--export: %w", err)
		}
	}
	return nil
}

// exportDir makes dir, refusing a folder that holds anything but an
// earlier export.
func exportDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return fmt.Errorf("--export %s: %w", dir, err)
	}
	if len(ents) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, exportMarker)); err != nil {
		return fmt.Errorf("--export %s: the folder holds other files (give an empty or new folder)", dir)
	}
	return nil
}
