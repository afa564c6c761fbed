// Command validate checks routesim's Kubernetes example manifests offline:
// every document decodes strictly (no unknown or duplicate fields) into the
// Kubernetes API type of its kind (k8s.io/api), and the sweep's wiring
// holds: the Indexed Job's shard count equals its completions, every
// volume names a claim defined beside it, the claim shared by pods on
// several nodes is ReadWriteMany, each --out lies on a mounted volume, and
// the merge Job mounts the sweep's claim and expands its shard glob in the
// pod's shell, on that volume.
//
//	go run . [-commands] ../*.yaml
//
// With -commands it prints every routesim command line the Jobs run (the
// sweep's once per completion index), for a dry run with the real binary.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	commands := flag.Bool("commands", false, "print the routesim command lines the Jobs run")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: validate [-commands] FILE.yaml...")
		os.Exit(2)
	}
	set, err := load(flag.Args())
	if err == nil {
		var cmds []string
		cmds, err = set.check()
		if err == nil && *commands {
			for _, c := range cmds {
				fmt.Println(c)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "validate:", err)
		os.Exit(1)
	}
	if !*commands {
		fmt.Printf("validate: %d jobs, %d claims, %d pods: ok\n", len(set.jobs), len(set.claims), len(set.pods))
	}
}

// manifests are the decoded documents, by kind.
type manifests struct {
	jobs   []named[batchv1.Job]
	claims map[string]corev1.PersistentVolumeClaim
	pods   []named[corev1.Pod]
}

type named[T any] struct {
	where string // file and document number
	obj   T
}

// load decodes every document of files strictly into its kind's type.
func load(files []string) (*manifests, error) {
	m := &manifests{claims: map[string]corev1.PersistentVolumeClaim{}}
	var errs []error
	for _, f := range files {
		data, err := readFile(f)
		if err != nil {
			return nil, err
		}
		for i, doc := range splitDocs(data) {
			where := fmt.Sprintf("%s (document %d)", f, i+1)
			if err := m.add(where, doc); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			}
		}
	}
	return m, errors.Join(errs...)
}

// maxManifest bounds a manifest file: far more than any Kubernetes
// manifest (the API server refuses objects over 1.5 MiB), far less than
// memory.
const maxManifest = 64 << 20

// readFile reads a manifest whole, failing, never truncating, past
// maxManifest bytes (os.ReadFile has no bound: /dev/zero never ends).
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxManifest {
		return nil, fmt.Errorf("%s: larger than %d MiB, the most validate reads of a manifest (is it the right file?)", name, maxManifest>>20)
	}
	return b, nil
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

func splitDocs(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range docSep.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func (m *manifests) add(where string, doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	switch gvk := tm.APIVersion + " " + tm.Kind; gvk {
	case "batch/v1 Job":
		var j batchv1.Job
		if err := yaml.UnmarshalStrict(doc, &j); err != nil {
			return err
		}
		m.jobs = append(m.jobs, named[batchv1.Job]{where, j})
	case "v1 PersistentVolumeClaim":
		var c corev1.PersistentVolumeClaim
		if err := yaml.UnmarshalStrict(doc, &c); err != nil {
			return err
		}
		if _, dup := m.claims[c.Name]; dup {
			return fmt.Errorf("claim %q defined twice", c.Name)
		}
		m.claims[c.Name] = c
	case "v1 Pod":
		var p corev1.Pod
		if err := yaml.UnmarshalStrict(doc, &p); err != nil {
			return err
		}
		m.pods = append(m.pods, named[corev1.Pod]{where, p})
	default:
		return fmt.Errorf("unexpected kind %q (want batch/v1 Job, v1 PersistentVolumeClaim or v1 Pod)", gvk)
	}
	return nil
}

var (
	shardArg = regexp.MustCompile(`--shard\s+\$\{JOB_COMPLETION_INDEX\}/(\d+)`)
	outArg   = regexp.MustCompile(`--out\s+(\S+)`)
	mergeArg = regexp.MustCompile(`routesim\s+merge\s+(\S+)\s+(\S+)`)
)

// check validates the wiring and returns the routesim command lines.
func (m *manifests) check() ([]string, error) {
	var errs []error
	bad := func(where, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, a...)))
	}
	var cmds []string
	shardOut := map[string]string{} // claim → the sweep's --out pattern on it
	type merge struct{ where, claim, glob string }
	var merges []merge
	for _, j := range m.jobs {
		spec := j.obj.Spec
		pod := spec.Template.Spec
		if rp := pod.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
			bad(j.where, "a Job's pods need restartPolicy Never or OnFailure, not %q", rp)
		}
		if spec.BackoffLimitPerIndex != nil && pod.RestartPolicy != corev1.RestartPolicyNever {
			bad(j.where, "backoffLimitPerIndex needs restartPolicy Never")
		}
		mounts := m.checkVolumes(j.where, pod, bad)
		for _, c := range pod.Containers {
			script, ok := shellScript(c)
			if !ok {
				bad(j.where, "container %q: run routesim through /bin/sh -c so $JOB_COMPLETION_INDEX and globs expand in the pod", c.Name)
				continue
			}
			switch {
			case strings.Contains(script, "routesim sweep"):
				sm := shardArg.FindStringSubmatch(script)
				if sm == nil {
					bad(j.where, "the sweep has no --shard ${JOB_COMPLETION_INDEX}/K")
					continue
				}
				k, _ := strconv.Atoi(sm[1])
				if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
					bad(j.where, "a sharded sweep needs completionMode: Indexed")
				}
				if spec.Completions == nil || int(*spec.Completions) != k {
					bad(j.where, "--shard .../%d but completions %v: every shard must run exactly once", k, deref(spec.Completions))
				}
				om := outArg.FindStringSubmatch(script)
				if om == nil {
					bad(j.where, "the sweep has no --out")
					continue
				}
				claim, ok := onVolume(om[1], mounts)
				if !ok {
					bad(j.where, "--out %s is on no mounted volume: the shards would vanish with their pods", om[1])
					continue
				}
				shardOut[claim] = om[1]
				for i := 0; i < k; i++ {
					cmds = append(cmds, command(strings.ReplaceAll(script, "${JOB_COMPLETION_INDEX}", strconv.Itoa(i))))
				}
			case strings.Contains(script, "routesim merge"):
				mm := mergeArg.FindStringSubmatch(script)
				if mm == nil {
					bad(j.where, "routesim merge needs OUT and the shard directories")
					continue
				}
				out, glob := mm[1], mm[2]
				oc, ok1 := onVolume(out, mounts)
				gc, ok2 := onVolume(glob, mounts)
				if !ok1 || !ok2 || oc != gc {
					bad(j.where, "merge reads %s and writes %s: both must be on the sweep's mounted volume", glob, out)
					continue
				}
				merges = append(merges, merge{j.where, gc, glob})
				cmds = append(cmds, command(script))
			default:
				bad(j.where, "container %q runs neither routesim sweep nor routesim merge", c.Name)
			}
		}
	}
	for _, mg := range merges {
		out, ok := shardOut[mg.claim]
		if !ok {
			bad(mg.where, "no sharded sweep writes to claim %q", mg.claim)
			continue
		}
		if match, _ := path.Match(mg.glob, strings.ReplaceAll(out, "${JOB_COMPLETION_INDEX}", "0")); !match {
			bad(mg.where, "the glob %s does not match the shards' --out %s", mg.glob, out)
		}
	}
	if len(shardOut) == 0 {
		errs = append(errs, errors.New("no sharded routesim sweep Job found"))
	}
	if len(merges) == 0 {
		errs = append(errs, errors.New("no routesim merge Job found"))
	}
	for _, p := range m.pods {
		m.checkVolumes(p.where, p.obj.Spec, bad)
	}
	return cmds, errors.Join(errs...)
}

// checkVolumes checks that every mount names a volume and every volume a
// defined claim, shareable if the pod runs in parallel; it returns mount
// path → claim.
func (m *manifests) checkVolumes(where string, pod corev1.PodSpec, bad func(string, string, ...any)) map[string]string {
	claimOf := map[string]string{}
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		c, ok := m.claims[name]
		if !ok {
			bad(where, "volume %q names claim %q, which no manifest defines", v.Name, name)
			continue
		}
		rwx := false
		for _, am := range c.Spec.AccessModes {
			rwx = rwx || am == corev1.ReadWriteMany
		}
		if !rwx {
			bad(where, "claim %q is not ReadWriteMany: pods on different nodes cannot all mount it", name)
		}
		claimOf[v.Name] = name
	}
	mounts := map[string]string{}
	for _, c := range pod.Containers {
		for _, vm := range c.VolumeMounts {
			claim, ok := claimOf[vm.Name]
			if !ok {
				bad(where, "container %q mounts %q, which is not a claim volume of the pod", c.Name, vm.Name)
				continue
			}
			mounts[path.Clean(vm.MountPath)] = claim
		}
	}
	return mounts
}

// onVolume reports the claim mounted at a parent of p.
func onVolume(p string, mounts map[string]string) (string, bool) {
	for dir := path.Dir(path.Clean(p)); ; dir = path.Dir(dir) {
		if c, ok := mounts[dir]; ok {
			return c, true
		}
		if dir == "/" || dir == "." {
			return "", false
		}
	}
}

// shellScript returns the script of a container run as `/bin/sh -c SCRIPT`.
func shellScript(c corev1.Container) (string, bool) {
	argv := append(append([]string(nil), c.Command...), c.Args...)
	if len(argv) != 3 || (argv[0] != "/bin/sh" && argv[0] != "sh") || argv[1] != "-c" {
		return "", false
	}
	return argv[2], true
}

// command is the routesim command line of a script, one line, without exec.
func command(script string) string {
	s := strings.Join(strings.Fields(script), " ")
	return strings.TrimPrefix(s, "exec ")
}

func deref(p *int32) any {
	if p == nil {
		return "unset"
	}
	return *p
}
