package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedManifestsPass: the example manifests validate, and the
// sweep's command runs once per completion index.
func TestShippedManifestsPass(t *testing.T) {
	files, _ := filepath.Glob("../*.yaml")
	m, err := load(files)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := m.check()
	if err != nil {
		t.Fatal(err)
	}
	sweeps := 0
	for _, c := range cmds {
		if strings.HasPrefix(c, "routesim sweep") {
			sweeps++
		}
	}
	if sweeps != 8 || len(cmds) != 9 {
		t.Errorf("%d sweep commands of %d: want 8 shards and one merge", sweeps, len(cmds))
	}
}

// TestBrokenManifestsFail: each broken variant of the shipped manifests is
// refused with an error that names the problem (the first being the merge
// Job this example shipped with before: no volume, glob on the local shell).
func TestBrokenManifestsFail(t *testing.T) {
	cases := []struct {
		name, file, old, new, want string
	}{
		{"merge mounts no volume", "merge-job.yaml", "          volumeMounts:\n            - {name: sweep, mountPath: /sweep}\n", "", "must be on the sweep's mounted volume"},
		{"merge glob on the local shell", "merge-job.yaml", "command: [\"/bin/sh\", \"-c\"]\n          args:\n            - exec routesim merge /sweep/merged /sweep/shard-*",
			"command: [\"routesim\", \"merge\", \"/sweep/merged\", \"/sweep/shard-0\"]", "through /bin/sh -c"},
		{"unknown field", "sweep-job.yaml", "parallelism: 8", "parallelism: 8\n  paralelism: 8", "unknown field"},
		{"shards and completions disagree", "sweep-job.yaml", "completions: 8 ", "completions: 4 ", "every shard must run exactly once"},
		{"claim not shareable", "pvc.yaml", `accessModes: ["ReadWriteMany"]`, `accessModes: ["ReadWriteOnce"]`, "not ReadWriteMany"},
		{"claim undefined", "merge-job.yaml", "claimName: routesim-sweep", "claimName: other", "which no manifest defines"},
		{"glob misses the shards", "merge-job.yaml", "/sweep/shard-*", "/sweep/part-*", "does not match the shards' --out"},
		{"out not on the volume", "sweep-job.yaml", "--out /sweep/shard-", "--out /tmp/shard-", "on no mounted volume"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files, _ := filepath.Glob("../*.yaml")
			var paths []string
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				s := string(data)
				if filepath.Base(f) == c.file {
					if !strings.Contains(s, c.old) {
						t.Fatalf("%s does not contain %q", c.file, c.old)
					}
					s = strings.Replace(s, c.old, c.new, 1)
				}
				p := filepath.Join(dir, filepath.Base(f))
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			m, err := load(paths)
			if err == nil {
				_, err = m.check()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestLoadIsBounded: a manifest is read to at most maxManifest bytes,
// with an error naming the file past it (/dev/zero never ends).
func TestLoadIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}
	_, err := load([]string{"/dev/zero"})
	if err == nil || !strings.Contains(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("load(/dev/zero) = %v, want an error naming the file and its limit", err)
	}
}
