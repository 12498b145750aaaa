// Package k8stest checks the Kubernetes manifests under deploy/ with the
// Kubernetes API types (k8s.io/api, k8s.io/apimachinery). It is its own
// module so that the main module does not depend on them:
//
//	cd deploy/k8stest && go test ./...
//
// Every YAML document under deploy/ is decoded strictly (an unknown or
// duplicated field is an error, as kubectl apply --validate=strict makes it)
// into its registered type; then the recipe's own rules are checked: every
// image is the one deploy/Dockerfile builds, the sweep Job is Indexed with
// SHARDS completions, --workers comes from the container's CPU request
// (downward API requests.cpu, not the node's CPUs), every volume mount and
// claim resolves, and both Jobs name the same experiment. The image itself
// is not built here (that needs a container engine).
package k8stest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation"
)

const deployDir = ".."

func decoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})
}

// doc is one YAML document of a manifest file.
type doc struct {
	file string
	line int // the document's first line
	text []byte
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

func splitDocs(file string, data []byte) []doc {
	var out []doc
	line := 1
	rest := data
	for {
		loc := docSep.FindIndex(rest)
		part := rest
		if loc != nil {
			part = rest[:loc[0]]
		}
		if len(bytes.TrimSpace(stripComments(part))) > 0 {
			out = append(out, doc{file: file, line: line, text: part})
		}
		if loc == nil {
			return out
		}
		line += bytes.Count(rest[:loc[1]], []byte("\n"))
		rest = rest[loc[1]:]
	}
}

func stripComments(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

func manifestFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(deployDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != deployDir && d.Name() == "k8stest" {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no manifest under %s", deployDir)
	}
	return files
}

// decodeAll decodes every document of every manifest strictly.
func decodeAll(t *testing.T) map[string][]runtime.Object {
	t.Helper()
	dec := decoder(t)
	objs := map[string][]runtime.Object{}
	for _, f := range manifestFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs := splitDocs(f, data)
		if len(docs) == 0 {
			t.Errorf("%s: no Kubernetes object", f)
		}
		for _, d := range docs {
			obj, gvk, err := dec.Decode(d.text, nil, nil)
			if err != nil {
				t.Errorf("%s: document at line %d: %v", d.file, d.line, err)
				continue
			}
			t.Logf("%s:%d: %s", d.file, d.line, gvk)
			objs[f] = append(objs[f], obj)
		}
	}
	return objs
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := decodeAll(t)
	for f, list := range objs {
		for _, o := range list {
			switch o := o.(type) {
			case *batchv1.Job:
				checkName(t, f, "Job", o.Name)
			case *corev1.PersistentVolumeClaim:
				checkName(t, f, "PersistentVolumeClaim", o.Name)
			default:
				t.Errorf("%s: a %T the recipe does not expect (add its checks here)", f, o)
			}
		}
	}
}

// TestStrictDecoderRefusesUnknownFields: the decoder the test uses does
// refuse what kubectl apply --validate=strict refuses.
func TestStrictDecoderRefusesUnknownFields(t *testing.T) {
	dec := decoder(t)
	for _, bad := range []string{
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completionsMode: Indexed}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completions: 2, completions: 3}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completions: eight}\n",
		"apiVersion: batch/v1\nkind: Jobb\nmetadata: {name: x}\n",
	} {
		if _, _, err := dec.Decode([]byte(bad), nil, nil); err == nil {
			t.Errorf("decoded without error:\n%s", bad)
		}
	}
}

func checkName(t *testing.T, file, kind, name string) {
	t.Helper()
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		t.Errorf("%s: %s name %q: %s", file, kind, name, msg)
	}
}

// dockerfileImage is the tag deploy/Dockerfile's build line gives, and the
// path its final stage puts simrun at.
func dockerfileImage(t *testing.T) (image, binary string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatalf("no recipe builds the image: %v", err)
	}
	m := regexp.MustCompile(`(?m)^#\s+docker build -t (\S+) -f deploy/Dockerfile \.$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("deploy/Dockerfile: no '#   docker build -t IMAGE -f deploy/Dockerfile .' line naming the image it builds")
	}
	b := regexp.MustCompile(`(?m)^RUN .*go build .*-o (\S+) \./cmd/simrun$`).FindSubmatch(data)
	if b == nil {
		t.Fatal("deploy/Dockerfile: no 'go build -o PATH ./cmd/simrun' step")
	}
	if !regexp.MustCompile(`(?m)^COPY --from=\S+ ` + regexp.QuoteMeta(string(b[1])) + ` (\S+)$`).Match(data) {
		t.Fatalf("deploy/Dockerfile: the final stage does not copy %s", b[1])
	}
	c := regexp.MustCompile(`(?m)^COPY --from=\S+ \S+ (\S+)$`).FindSubmatch(data)
	// The manifests run /bin/sh -c: the final stage needs a shell.
	froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllSubmatch(data, -1)
	last := string(froms[len(froms)-1][1])
	if last == "scratch" || strings.Contains(last, "distroless") {
		t.Errorf("deploy/Dockerfile: the final stage %s has no /bin/sh, which the manifests run", last)
	}
	// The build stage's Go is at least go.mod's.
	gomod, err := os.ReadFile(filepath.Join(deployDir, "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindSubmatch(gomod)
	have := regexp.MustCompile(`(?m)^FROM golang:(\d+)\.(\d+)`).FindSubmatch(data)
	if want == nil || have == nil {
		t.Fatal("go.mod's go line or the Dockerfile's golang:X.Y stage not found")
	}
	if atoi(have[1])*1000+atoi(have[2]) < atoi(want[1])*1000+atoi(want[2]) {
		t.Errorf("deploy/Dockerfile builds with golang:%s.%s, older than go.mod's go %s.%s", have[1], have[2], want[1], want[2])
	}
	return string(m[1]), string(c[1])
}

func atoi(b []byte) int { n, _ := strconv.Atoi(string(b)); return n }

func env(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

func TestManifestsFollowTheRecipe(t *testing.T) {
	image, binary := dockerfileImage(t)
	objs := decodeAll(t)
	claims := map[string]bool{}
	var jobs []*batchv1.Job
	var jobFiles []string
	for f, list := range objs {
		for _, o := range list {
			switch o := o.(type) {
			case *corev1.PersistentVolumeClaim:
				claims[o.Name] = true
				if !hasMode(o.Spec.AccessModes, corev1.ReadWriteMany) {
					t.Errorf("%s: claim %s is not ReadWriteMany: the shards' pods write it from several nodes", f, o.Name)
				}
			case *batchv1.Job:
				jobs = append(jobs, o)
				jobFiles = append(jobFiles, f)
			}
		}
	}
	experiments := map[string]bool{}
	var sweep *batchv1.Job
	for k, j := range jobs {
		f := jobFiles[k]
		p := j.Spec.Template.Spec
		if p.RestartPolicy != corev1.RestartPolicyOnFailure && p.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: Job %s: restartPolicy %q (a Job's pods need OnFailure or Never)", f, j.Name, p.RestartPolicy)
		}
		vols := map[string]corev1.Volume{}
		for _, v := range p.Volumes {
			vols[v.Name] = v
			if v.PersistentVolumeClaim != nil && !claims[v.PersistentVolumeClaim.ClaimName] {
				t.Errorf("%s: Job %s: volume %s names claim %s, which no manifest under deploy/ defines", f, j.Name, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
		if len(p.Containers) == 0 {
			t.Errorf("%s: Job %s has no container", f, j.Name)
		}
		for _, c := range p.Containers {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				t.Errorf("%s: container name %q: %s", f, c.Name, msg)
			}
			if c.Image != image {
				t.Errorf("%s: Job %s: container %s runs image %q; deploy/Dockerfile builds %q", f, j.Name, c.Name, c.Image, image)
			}
			cmd := strings.Join(append(append([]string{}, c.Command...), c.Args...), " ")
			if !strings.Contains(cmd, "exec "+binary+" ") {
				t.Errorf("%s: Job %s: container %s does not run %s (the Dockerfile's simrun): %s", f, j.Name, c.Name, binary, cmd)
			}
			for _, m := range c.VolumeMounts {
				if _, ok := vols[m.Name]; !ok {
					t.Errorf("%s: Job %s: mount %s names no volume of the pod", f, j.Name, m.Name)
				}
			}
			if e, ok := env(c, "EXPERIMENT"); ok {
				experiments[e.Value] = true
			} else {
				t.Errorf("%s: Job %s: no EXPERIMENT", f, j.Name)
			}
			if strings.Contains(cmd, " sweep ") {
				sweep = j
				checkSweep(t, f, j, c, cmd)
			}
		}
	}
	if sweep == nil {
		t.Error("no manifest runs simrun sweep")
	}
	if len(experiments) != 1 {
		t.Errorf("the Jobs name different experiments: %v", experiments)
	}
}

func hasMode(modes []corev1.PersistentVolumeAccessMode, m corev1.PersistentVolumeAccessMode) bool {
	for _, x := range modes {
		if x == m {
			return true
		}
	}
	return false
}

func checkSweep(t *testing.T, f string, j *batchv1.Job, c corev1.Container, cmd string) {
	t.Helper()
	s := j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("%s: Job %s: completionMode is not Indexed (JOB_COMPLETION_INDEX is the shard)", f, j.Name)
	}
	shards, ok := env(c, "SHARDS")
	n, err := strconv.Atoi(shards.Value)
	if !ok || err != nil || n < 1 {
		t.Errorf("%s: Job %s: SHARDS %q is not a positive number", f, j.Name, shards.Value)
	} else if s.Completions == nil {
		t.Errorf("%s: Job %s: no completions; SHARDS is %d", f, j.Name, n)
	} else if int(*s.Completions) != n {
		t.Errorf("%s: Job %s: completions %d but SHARDS %d: a shard would run twice or never", f, j.Name, *s.Completions, n)
	}
	if !strings.Contains(cmd, `--shard "$JOB_COMPLETION_INDEX/$SHARDS"`) {
		t.Errorf("%s: Job %s: the shard is not $JOB_COMPLETION_INDEX/$SHARDS: %s", f, j.Name, cmd)
	}
	// --workers is the pod's CPU request, read through the downward API.
	if !strings.Contains(cmd, `--workers "$CPU_REQUEST"`) {
		t.Errorf("%s: Job %s: --workers is not $CPU_REQUEST: %s", f, j.Name, cmd)
	}
	e, ok := env(c, "CPU_REQUEST")
	r := e.ValueFrom
	switch {
	case !ok || r == nil || r.ResourceFieldRef == nil:
		t.Errorf("%s: Job %s: CPU_REQUEST is not a resourceFieldRef", f, j.Name)
	case r.ResourceFieldRef.Resource != "requests.cpu":
		t.Errorf("%s: Job %s: CPU_REQUEST reads %s, not requests.cpu", f, j.Name, r.ResourceFieldRef.Resource)
	case r.ResourceFieldRef.ContainerName != "" && r.ResourceFieldRef.ContainerName != c.Name:
		t.Errorf("%s: Job %s: CPU_REQUEST reads container %s's request, not %s's", f, j.Name, r.ResourceFieldRef.ContainerName, c.Name)
	case r.ResourceFieldRef.Divisor.String() != "1":
		t.Errorf("%s: Job %s: CPU_REQUEST's divisor is %s, not 1 (whole CPUs)", f, j.Name, r.ResourceFieldRef.Divisor.String())
	}
	req, ok := c.Resources.Requests[corev1.ResourceCPU]
	if !ok {
		t.Errorf("%s: Job %s: container %s requests no CPU: CPU_REQUEST would be the node's allocatable CPUs", f, j.Name, c.Name)
	} else if req.MilliValue()%1000 != 0 {
		t.Errorf("%s: Job %s: CPU request %s is not whole CPUs (the downward API rounds it up to %d workers)", f, j.Name, req.String(), req.Value())
	} else {
		t.Logf("%s: --workers = %s (the CPU request)", f, fmt.Sprint(req.Value()))
	}
}
